package queue

import (
	"container/list"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
)

// inFlight tracks the pods between Pop and the end of their attempt, and the
// cluster events that happen meanwhile (upstream keeps both in activeQ, as
// inFlightPods and inFlightEvents). A pod is scheduled against a snapshot
// taken when its attempt began; an event that comes later may already have
// cured what rejects it, and must not be missed.
//
// The log is one list in arrival order: each pod's marker, and the events.
// The events that matter to a pod are those after its marker. When a pod
// leaves, the events before the oldest remaining marker are dropped.
type inFlight struct {
	markers map[types.UID]*list.Element
	log     *list.List
}

// flightEvent is a cluster event remembered while pods were in flight.
type flightEvent struct {
	event    fwk.ClusterEvent
	old, new any
}

func newInFlight() *inFlight {
	return &inFlight{markers: map[types.UID]*list.Element{}, log: list.New()}
}

func (f *inFlight) start(pi *PodInfo) { f.markers[pi.uid()] = f.log.PushBack(pi) }

// get returns the pod in flight with this UID, or nil.
func (f *inFlight) get(uid types.UID) *PodInfo {
	if el, ok := f.markers[uid]; ok {
		return el.Value.(*PodInfo)
	}
	return nil
}

// record remembers ev when some pod is in flight.
func (f *inFlight) record(ev fwk.ClusterEvent, oldObj, newObj any) {
	if len(f.markers) > 0 {
		f.log.PushBack(&flightEvent{event: ev, old: oldObj, new: newObj})
	}
}

// eventsAfter returns the events that happened since the pod's attempt
// began; false when the pod is not in flight.
func (f *inFlight) eventsAfter(uid types.UID) ([]*flightEvent, bool) {
	el, ok := f.markers[uid]
	if !ok {
		return nil, false
	}
	var events []*flightEvent
	for e := el.Next(); e != nil; e = e.Next() {
		if fe, ok := e.Value.(*flightEvent); ok {
			events = append(events, fe)
		}
	}
	return events, true
}

// end removes the pod's marker and the events no pod in flight still needs;
// it returns the pod, or nil when it was not in flight.
func (f *inFlight) end(uid types.UID) *PodInfo {
	el, ok := f.markers[uid]
	if !ok {
		return nil
	}
	delete(f.markers, uid)
	f.log.Remove(el)
	for e := f.log.Front(); e != nil; e = f.log.Front() {
		if _, ok := e.Value.(*flightEvent); !ok {
			break
		}
		f.log.Remove(e)
	}
	return el.Value.(*PodInfo)
}

// pods returns the pods in flight, oldest first.
func (f *inFlight) pods() []*PodInfo {
	var pods []*PodInfo
	for e := f.log.Front(); e != nil; e = e.Next() {
		if pi, ok := e.Value.(*PodInfo); ok {
			pods = append(pods, pi)
		}
	}
	return pods
}

// hintForInFlightLocked looks at the events that happened while pi was in
// flight and says how it should be requeued after its failure (upstream's
// determineSchedulingHintForInFlightPod). A pod that no plugin rejected
// failed with an error and retries after a backoff; so does a pod whose
// flight the queue did not see.
func (q *Queue) hintForInFlightLocked(pi *PodInfo, message string) (queueingStrategy, cause) {
	failure := cause{label: EventScheduleAttemptFailure, plugins: sets.List(pi.rejectors()), message: message}
	if !pi.rejected() {
		return queueAfterBackoff, failure
	}
	events, ok := q.flight.eventsAfter(pi.uid())
	if !ok {
		return queueAfterBackoff, failure
	}
	strategy, c := queueSkip, failure
	for _, e := range events {
		s, plugin, _ := q.podWorthRequeuing(pi, e.event, e.old, e.new)
		if s == queueSkip {
			continue
		}
		if strategy == queueSkip || s == queueImmediately {
			strategy, c = s, hinted(e.event.Label(), objectName(e.old, e.new), plugin, message)
		}
		// Only a Pending plugin can do better than after-backoff.
		if s == queueImmediately || pi.PendingPlugins.Len() == 0 {
			break
		}
	}
	return strategy, c
}
