package queue

import (
	"math"
	"time"

	"k8s.io/utils/clock"

	"minisched/event"
)

// orderingWindow is the width of backoff's ordering windows (KEP-5142).
// Expiries are aligned down to whole windows; within a window backoffQ
// orders pods as activeQ does, and the flush, which ticks on window
// boundaries, moves each window whole, so that a pod of higher priority whose
// backoff ends a moment later is not overtaken.
const orderingWindow = time.Second

// backoffQueue holds the entities that wait out a backoff after a failure,
// in two heaps, as upstream's backoffQueue does:
//
//   - rejected (backoffQ) holds pods some plugin rejected, by expiry window
//     then activeQ's order. When activeQ is empty, Pop takes its head at once
//     rather than leave the scheduler idle (SchedulerPopFromBackoffQ).
//   - errored (the error backoff) holds pods whose attempt failed with an
//     error, by expiry. They are never popped early: the backoff protects the
//     apiserver, not the scheduler's time. Pod groups wait here too: a
//     group names no rejecting plugin of its own.
type backoffQueue struct {
	clock    clock.PassiveClock
	initial  time.Duration
	max      time.Duration
	rejected *entityHeap
	errored  *entityHeap
	// windowed says expiries are aligned to ordering windows: the
	// SchedulerPopFromBackoffQ gate on (the default).
	windowed bool
}

func newBackoffQueue(clk clock.PassiveClock, initial, max time.Duration, less func(a, b Entity) bool, windowed bool) *backoffQueue {
	byExpiry := func(a, b Entity) bool {
		if ea, eb := a.GetBackoffExpiration(), b.GetBackoffExpiration(); !ea.Equal(eb) {
			return ea.Before(eb)
		}
		return less(a, b)
	}
	// Upstream orders the error backoff by expiry alone (and backoffQ too
	// with the gate off). Its pods of one expiry leave together, so the
	// tie-break only orders the board.
	return &backoffQueue{clock: clk, initial: initial, max: max, rejected: newEntityHeap(byExpiry), errored: newEntityHeap(byExpiry), windowed: windowed}
}

// align truncates t to its ordering window, when windows are on.
func (b *backoffQueue) align(t time.Time) time.Time {
	if !b.windowed {
		return t
	}
	return t.Truncate(orderingWindow)
}

// expiration is when e's backoff ends: its timestamp plus the initial
// backoff doubled per failure of the kind that counted last, capped at the
// maximum, aligned down to its window. The cap of a group of n pods is
// sqrt(n) times the maximum, as upstream's: a group's retry costs more. An
// entity that never failed has none.
func (b *backoffQueue) expiration(e Entity) time.Time {
	s := e.params()
	count := s.UnschedulableCount
	if s.ConsecutiveErrorsCount > 0 {
		count = s.ConsecutiveErrorsCount
	}
	if count == 0 {
		return time.Time{}
	}
	limit := b.max
	if g, ok := e.(*GroupInfo); ok && len(g.Pods) > 1 {
		limit = time.Duration(float64(limit) * math.Sqrt(float64(len(g.Pods))))
	}
	d := limit
	if shift := count - 1; b.initial <= limit>>shift {
		d = b.initial << shift
	}
	return b.align(s.Timestamp.Add(d))
}

// backingOff says whether e must still wait. The window that holds the
// expiry must be over: an entity whose backoff ends within the current
// window still waits for the flush at its end.
func (b *backoffQueue) backingOff(e Entity) bool {
	return !e.GetBackoffExpiration().Before(b.align(b.clock.Now()))
}

// add puts e in the heap its last failure calls for, and says which.
func (b *backoffQueue) add(e Entity) event.QueueName {
	if !e.params().rejected() {
		b.errored.add(e)
		return event.ErrorBackoffQ
	}
	b.rejected.add(e)
	return event.BackoffQ
}

func (b *backoffQueue) remove(e Entity) {
	b.rejected.remove(e.key())
	b.errored.remove(e.key())
}

// popCompleted takes out the entities whose backoff is over, backoffQ's
// first.
func (b *backoffQueue) popCompleted() []Entity {
	var done []Entity
	for _, h := range []*entityHeap{b.rejected, b.errored} {
		for e := h.peek(); e != nil && !b.backingOff(e); e = h.peek() {
			done = append(done, h.pop())
		}
	}
	return done
}

// moveToBackoffQLocked runs the PreEnqueue plugins and, unless one gates
// the entity, puts it in backoff. A gated entity waits in the unschedulable
// set. With SchedulerPopFromBackoffQ off, PreEnqueue runs when the entity
// leaves backoff instead.
func (q *Queue) moveToBackoffQLocked(e Entity, c cause) event.QueueName {
	if !q.opts.NoPopFromBackoffQ && !q.runPreEnqueueLocked(e) {
		return q.parkLocked(e, c)
	}
	from := q.takeLocked(e)
	to := q.backoff.add(e)
	q.placedLocked(e, from, to, c)
	return to
}

// nextWindow is how long until the next window boundary, where the backoff
// flush ticks (a whole window, when windows are off).
func (b *backoffQueue) nextWindow(now time.Time) time.Duration {
	return b.align(now.Add(orderingWindow)).Sub(now)
}
