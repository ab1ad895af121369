package queue

import (
	"fmt"
	"math"
	"time"

	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// order is the key that sorts e among the entities of one part of the
// queue the way that part pops them: activeQ by the QueueSort plugin's key;
// the backoff queues by expiry, then activeQ's order; the unschedulable set
// by when the entity entered it. A group's pods share their group's key.
// Viewers compare keys as plain strings. "" where there is no order to show
// (in flight, or a QueueSort without a key).
func (q *Queue) order(e Entity, where event.QueueName) string {
	key := ""
	if q.opts.SortKey != nil {
		key = q.opts.SortKey(e)
	}
	switch where {
	case event.ActiveQ:
		return key
	case event.BackoffQ, event.ErrorBackoffQ:
		return timeKey(e.GetBackoffExpiration()) + "/" + key
	case event.Unschedulable:
		return timeKey(e.GetTimestamp())
	}
	return ""
}

// Ordered says whether activeQ's pods carry a sort key.
func (q *Queue) Ordered() bool { return q.opts.SortKey != nil }

// PrioritySortKey is the sort key of the PrioritySort plugin's Less: higher
// priority first, then the earlier timestamp.
func PrioritySortKey(e fwk.QueuedEntityInfo) string {
	// Fixed widths make string order numeric order; MaxInt32 minus the
	// priority puts the highest first and is never negative.
	return fmt.Sprintf("%010d.%s", int64(math.MaxInt32)-int64(e.GetPriority()), timeKey(e.GetTimestamp()))
}

func timeKey(t time.Time) string {
	return fmt.Sprintf("%020d", max(t.UnixNano(), 0))
}
