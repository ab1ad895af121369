package queue

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

// unschedulablePods holds the pods that wait for a cluster event: those some
// plugin rejected, whose QueueingHints have not yet answered Queue to any
// event since, and those a PreEnqueue plugin gates.
type unschedulablePods map[types.UID]*PodInfo

// sorted returns the pods oldest first, so that moves are reported in a
// stable order.
func (u unschedulablePods) sorted() []*PodInfo {
	pods := make([]*PodInfo, 0, len(u))
	for _, pi := range u {
		pods = append(pods, pi)
	}
	slices.SortFunc(pods, func(a, b *PodInfo) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.uid(), b.uid())
	})
	return pods
}

// leftovers returns the pods that have waited longer than max since their
// last failure or their last flush, and marks them flushed now.
func (u unschedulablePods) leftovers(now time.Time, max time.Duration) []*PodInfo {
	var pods []*PodInfo
	for _, pi := range u.sorted() {
		last := pi.Timestamp
		if pi.FlushTimestamp.After(last) {
			last = pi.FlushTimestamp
		}
		if now.Sub(last) > max {
			pi.FlushTimestamp = now
			pods = append(pods, pi)
		}
	}
	return pods
}

// parkLocked puts pi in the unschedulable set.
func (q *Queue) parkLocked(pi *PodInfo, c cause) event.QueueName {
	if pi.where == event.Unschedulable {
		return event.Unschedulable
	}
	if c.message == "" && pi.GatingPlugin != "" {
		c.message = "gated by PreEnqueue plugin " + pi.GatingPlugin
	}
	from := q.takeLocked(pi)
	q.unschedulable[pi.uid()] = pi
	q.placedLocked(pi, from, event.Unschedulable, c)
	return event.Unschedulable
}

// moveLocked offers a cluster event to the given pods of the unschedulable
// set and requeues those whose hints answer Queue (upstream's
// moveEntitiesToActiveOrBackoffQueue); then it remembers the event for the
// pods in flight. A gated pod only hears the events its gating plugin
// registered, and the wildcards.
func (q *Queue) moveLocked(pods []*PodInfo, ev fwk.ClusterEvent, oldObj, newObj any) {
	if !q.ofInterest(ev) {
		return
	}
	for _, pi := range pods {
		if pi.GatingPlugin != "" && !framework.ClusterEventIsWildCard(ev) &&
			!framework.MatchAnyClusterEvent(ev, pi.GatingPluginEvents) {
			continue
		}
		s, plugin, skipped := q.worthRequeuing(pi, ev, oldObj, newObj)
		if s == queueSkip {
			q.skippedLocked(pi, ev.Label(), objectName(oldObj, newObj), skipped)
			continue
		}
		q.requeueLocked(pi, s, hinted(ev.Label(), objectName(oldObj, newObj), plugin, ""))
	}
	q.flight.record(ev, oldObj, newObj)
}

// skippedLocked reports that the QueueingHints of plugins answered
// QueueSkip to a cluster event, so the pod stays. A pod reports a skip once
// per event label and answer while it waits: the answer, not the thousandth
// node, is what a reader needs.
func (q *Queue) skippedLocked(pi *PodInfo, label, object string, plugins []string) {
	if len(plugins) == 0 {
		return
	}
	key := label + "=" + strings.Join(plugins, ",")
	if slices.Contains(pi.skips, key) {
		return
	}
	pi.skips = append(pi.skips, key)
	q.report(pi, event.ActionSkip, pi.where, pi.where, cause{label: label, object: object, plugins: plugins})
}

// objectName names what a cluster event is about: a node's name, a pod's
// namespace/name; "" when it carries no object.
func objectName(oldObj, newObj any) string {
	obj := newObj
	if obj == nil {
		obj = oldObj
	}
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if obj == nil || err != nil {
		return ""
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}
