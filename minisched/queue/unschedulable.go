package queue

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

// unschedulableEntities holds the entities that wait for a cluster event:
// those some plugin rejected, whose QueueingHints have not yet answered
// Queue to any event since, and those a PreEnqueue plugin gates.
type unschedulableEntities map[string]Entity

// sorted returns the entities oldest first, so that moves are reported in a
// stable order.
func (u unschedulableEntities) sorted() []Entity {
	entities := make([]Entity, 0, len(u))
	for _, e := range u {
		entities = append(entities, e)
	}
	slices.SortFunc(entities, func(a, b Entity) int {
		if c := a.GetTimestamp().Compare(b.GetTimestamp()); c != 0 {
			return c
		}
		return cmp.Compare(a.key(), b.key())
	})
	return entities
}

// pods counts the pods of the entities here.
func (u unschedulableEntities) pods() int {
	n := 0
	for _, e := range u {
		n += len(e.members())
	}
	return n
}

// leftovers returns the entities that have waited longer than max since
// their last failure or their last flush, and marks them flushed now.
func (u unschedulableEntities) leftovers(now time.Time, max time.Duration) []Entity {
	var entities []Entity
	for _, e := range u.sorted() {
		s := e.params()
		last := s.Timestamp
		if s.FlushTimestamp.After(last) {
			last = s.FlushTimestamp
		}
		if now.Sub(last) > max {
			s.FlushTimestamp = now
			entities = append(entities, e)
		}
	}
	return entities
}

// parkLocked puts e in the unschedulable set.
func (q *Queue) parkLocked(e Entity, c cause) event.QueueName {
	if gating := e.params().GatingPlugin; c.message == "" && gating != "" {
		c.message = "gated by PreEnqueue plugin " + gating
	}
	from := q.takeLocked(e)
	q.unschedulable[e.key()] = e
	q.placedLocked(e, from, event.Unschedulable, c)
	return event.Unschedulable
}

// moveLocked offers a cluster event to the given entities of the
// unschedulable set and requeues those whose hints answer Queue (upstream's
// moveEntitiesToActiveOrBackoffQueue); then it remembers the event for the
// pods in flight. A gated entity only hears the events its gating plugin
// registered, and the wildcards.
func (q *Queue) moveLocked(entities []Entity, ev fwk.ClusterEvent, oldObj, newObj any) {
	if !q.ofInterest(ev) {
		return
	}
	for _, e := range entities {
		if s := e.params(); s.GatingPlugin != "" && !framework.ClusterEventIsWildCard(ev) &&
			!framework.MatchAnyClusterEvent(ev, s.GatingPluginEvents) {
			continue
		}
		s, plugin, skipped := q.worthRequeuing(e, ev, oldObj, newObj)
		if s == queueSkip {
			q.skippedLocked(e, ev.Label(), objectName(oldObj, newObj), skipped)
			continue
		}
		q.requeueLocked(e, s, hinted(ev.Label(), objectName(oldObj, newObj), plugin, ""))
	}
	q.flight.record(ev, oldObj, newObj)
}

// skippedLocked reports that the QueueingHints of plugins answered
// QueueSkip to a cluster event, so the entity stays. A pod reports a skip
// once per event label and answer while it waits: the answer, not the
// thousandth node, is what a reader needs.
func (q *Queue) skippedLocked(e Entity, label, object string, plugins []string) {
	if len(plugins) == 0 {
		return
	}
	key := label + "=" + strings.Join(plugins, ",")
	for _, pi := range e.members() {
		if slices.Contains(pi.skips, key) {
			continue
		}
		pi.skips = append(pi.skips, key)
		q.report(e, pi, event.ActionSkip, pi.where, pi.where, cause{label: label, object: object, plugins: plugins})
	}
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
