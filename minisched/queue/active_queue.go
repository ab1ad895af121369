package queue

import (
	"minisched/event"
)

// activeQ is a heap of the entities ready to be tried, ordered by the
// QueueSort plugin's Less (q.active). What comes out of it, and what goes
// in, is here.

// readyLocked says whether Pop has an entity to give: one in activeQ, or,
// when activeQ is empty, one in backoffQ. Entities in the error backoff
// wait.
func (q *Queue) readyLocked() bool {
	return q.active.Len() > 0 || !q.opts.NoPopFromBackoffQ && q.backoff.rejected.Len() > 0
}

// popLocked takes the head of activeQ or, when activeQ is empty, the head of
// backoffQ whatever its backoff (SchedulerPopFromBackoffQ): an idle
// scheduler has nothing better to do. It says where the entity came from.
func (q *Queue) popLocked() (Entity, event.QueueName) {
	if e := q.active.pop(); e != nil {
		return e, event.ActiveQ
	}
	return q.backoff.rejected.pop(), event.BackoffQ
}

// moveToActiveQLocked puts e in activeQ unless a PreEnqueue plugin gates it;
// a gated entity waits in the unschedulable set. PreEnqueue does not run
// again for an entity that comes from backoff: it ran when the entity went
// in (unless SchedulerPopFromBackoffQ is off: then it runs now).
func (q *Queue) moveToActiveQLocked(e Entity, c cause, fromBackoff bool) event.QueueName {
	if (!fromBackoff || q.opts.NoPopFromBackoffQ) && !q.runPreEnqueueLocked(e) {
		return q.parkLocked(e, c)
	}
	now := q.opts.Clock.Now()
	eachParams(e, func(s *entityState) {
		if s.InitialAttemptTimestamp == nil {
			s.InitialAttemptTimestamp = &now
		}
	})
	from := q.takeLocked(e)
	q.active.add(e)
	q.placedLocked(e, from, event.ActiveQ, c)
	return event.ActiveQ
}
