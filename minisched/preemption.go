package minisched

import (
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"minisched/event"
)

// victimReporter passes every Event on to the apiserver and reports each
// victim a preemption evicts. Upstream's preemption executor evicts
// asynchronously and says so only with a "Preempted" Event on the victim,
// related to the preemptor: that Event is where the dashboard learns who
// made room for whom.
type victimReporter struct {
	events.EventRecorderLogger
	observer event.Observer
}

func (r *victimReporter) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.EventRecorderLogger.Eventf(regarding, related, eventtype, reason, action, note, args...)
	if reason != "Preempted" {
		return
	}
	victim, ok := regarding.(*v1.Pod)
	// The preemptor comes wrapped (a pod, or a pod group): its metadata is
	// what names it.
	preemptor, err := meta.Accessor(related)
	if !ok || err != nil {
		return
	}
	ref := event.PodRef{Namespace: preemptor.GetNamespace(), Name: preemptor.GetName(), UID: string(preemptor.GetUID())}
	_, group := related.(*schedulingv1beta1.PodGroup)
	r.observer.Observe(event.Event{Time: time.Now(), Kind: event.KindPreemption, Pod: event.RefOf(victim),
		Preemption: &event.Preemption{Preemptor: ref, Group: group, Node: victim.Spec.NodeName}})
}

func (r *victimReporter) WithLogger(logger klog.Logger) events.EventRecorderLogger {
	return &victimReporter{EventRecorderLogger: r.EventRecorderLogger.WithLogger(logger), observer: r.observer}
}
