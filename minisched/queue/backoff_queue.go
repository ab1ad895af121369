package queue

import (
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

// backoffQueue holds the pods that wait out a backoff after a failure, in two
// heaps, as upstream's backoffQueue does:
//
//   - rejected (backoffQ) holds pods some plugin rejected, by expiry window
//     then activeQ's order. When activeQ is empty, Pop takes its head at once
//     rather than leave the scheduler idle (SchedulerPopFromBackoffQ).
//   - errored (the error backoff) holds pods whose attempt failed with an
//     error, by expiry. They are never popped early: the backoff protects the
//     apiserver, not the scheduler's time.
type backoffQueue struct {
	clock    clock.PassiveClock
	initial  time.Duration
	max      time.Duration
	rejected *podHeap
	errored  *podHeap
	// windowed says expiries are aligned to ordering windows: the
	// SchedulerPopFromBackoffQ gate on (the default).
	windowed bool
}

func newBackoffQueue(clk clock.PassiveClock, initial, max time.Duration, less func(a, b *PodInfo) bool, windowed bool) *backoffQueue {
	byExpiry := func(a, b *PodInfo) bool {
		if !a.BackoffExpiration.Equal(b.BackoffExpiration) {
			return a.BackoffExpiration.Before(b.BackoffExpiration)
		}
		return less(a, b)
	}
	// Upstream orders the error backoff by expiry alone (and backoffQ too
	// with the gate off). Its pods of one expiry leave together, so the
	// tie-break only orders the board.
	return &backoffQueue{clock: clk, initial: initial, max: max, rejected: newPodHeap(byExpiry), errored: newPodHeap(byExpiry), windowed: windowed}
}

// align truncates t to its ordering window, when windows are on.
func (b *backoffQueue) align(t time.Time) time.Time {
	if !b.windowed {
		return t
	}
	return t.Truncate(orderingWindow)
}

// expiration is when pi's backoff ends: its timestamp plus the initial
// backoff doubled per failure of the kind that counted last, capped at the
// maximum, aligned down to its window. A pod that never failed has none.
func (b *backoffQueue) expiration(pi *PodInfo) time.Time {
	count := pi.UnschedulableCount
	if pi.ConsecutiveErrorsCount > 0 {
		count = pi.ConsecutiveErrorsCount
	}
	if count == 0 {
		return time.Time{}
	}
	d := b.max
	if shift := count - 1; b.initial <= b.max>>shift {
		d = b.initial << shift
	}
	return b.align(pi.Timestamp.Add(d))
}

// backingOff says whether pi must still wait. The window that holds the
// expiry must be over: a pod whose backoff ends within the current window
// still waits for the flush at its end.
func (b *backoffQueue) backingOff(pi *PodInfo) bool {
	return !pi.BackoffExpiration.Before(b.align(b.clock.Now()))
}

// add puts pi in the heap its last failure calls for, and says which.
func (b *backoffQueue) add(pi *PodInfo) event.QueueName {
	if pi.rejectors().Len() == 0 {
		b.errored.add(pi)
		return event.ErrorBackoffQ
	}
	b.rejected.add(pi)
	return event.BackoffQ
}

func (b *backoffQueue) remove(pi *PodInfo) {
	b.rejected.remove(pi.uid())
	b.errored.remove(pi.uid())
}

// popCompleted takes out the pods whose backoff is over, backoffQ's first.
func (b *backoffQueue) popCompleted() []*PodInfo {
	var done []*PodInfo
	for _, h := range []*podHeap{b.rejected, b.errored} {
		for pi := h.peek(); pi != nil && !b.backingOff(pi); pi = h.peek() {
			done = append(done, h.pop())
		}
	}
	return done
}

// moveToBackoffQLocked runs the PreEnqueue plugins and, unless one gates the
// pod, puts it in backoff. A gated pod waits in the unschedulable set. With
// SchedulerPopFromBackoffQ off, PreEnqueue runs when the pod leaves backoff
// instead.
func (q *Queue) moveToBackoffQLocked(pi *PodInfo, c cause) event.QueueName {
	if !q.opts.NoPopFromBackoffQ && !q.runPreEnqueueLocked(pi) {
		return q.parkLocked(pi, c)
	}
	from := q.takeLocked(pi)
	to := q.backoff.add(pi)
	q.placedLocked(pi, from, to, c)
	return to
}

// nextWindow is how long until the next window boundary, where the backoff
// flush ticks (a whole window, when windows are off).
func (b *backoffQueue) nextWindow(now time.Time) time.Duration {
	return b.align(now.Add(orderingWindow)).Sub(now)
}
