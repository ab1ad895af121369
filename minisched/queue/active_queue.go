package queue

import (
	"minisched/event"
)

// activeQ is a heap of the pods ready to be tried, ordered by the QueueSort
// plugin's Less (q.active). What comes out of it, and what goes in, is here.

// readyLocked says whether Pop has a pod to give: one in activeQ, or, when
// activeQ is empty, one in backoffQ. Pods in the error backoff wait.
func (q *Queue) readyLocked() bool {
	return q.active.Len() > 0 || !q.opts.NoPopFromBackoffQ && q.backoff.rejected.Len() > 0
}

// popLocked takes the head of activeQ or, when activeQ is empty, the head of
// backoffQ whatever its backoff (SchedulerPopFromBackoffQ): an idle
// scheduler has nothing better to do. It says where the pod came from.
func (q *Queue) popLocked() (*PodInfo, event.QueueName) {
	if pi := q.active.pop(); pi != nil {
		return pi, event.ActiveQ
	}
	return q.backoff.rejected.pop(), event.BackoffQ
}

// moveToActiveQLocked puts pi in activeQ unless a PreEnqueue plugin gates it;
// a gated pod waits in the unschedulable set. PreEnqueue does not run again
// for a pod that comes from backoff: it ran when the pod went in (unless
// SchedulerPopFromBackoffQ is off: then it runs now).
func (q *Queue) moveToActiveQLocked(pi *PodInfo, c cause, fromBackoff bool) event.QueueName {
	if (!fromBackoff || q.opts.NoPopFromBackoffQ) && !q.runPreEnqueueLocked(pi) {
		return q.parkLocked(pi, c)
	}
	if pi.InitialAttemptTimestamp == nil {
		now := q.opts.Clock.Now()
		pi.InitialAttemptTimestamp = &now
	}
	from := q.takeLocked(pi)
	q.active.add(pi)
	q.placedLocked(pi, from, event.ActiveQ, c)
	return event.ActiveQ
}
