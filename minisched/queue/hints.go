package queue

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

// queueingStrategy is what a cluster event means for a pod that waits.
type queueingStrategy int

const (
	// queueSkip: the event does not help; the pod stays where it is.
	queueSkip queueingStrategy = iota
	// queueAfterBackoff: a plugin that rejected the pod answered Queue; the
	// pod retries once its backoff is over.
	queueAfterBackoff
	// queueImmediately: a plugin that answered Pending answered Queue; the
	// pod was not at fault and goes to activeQ at once.
	queueImmediately
)

// requeueLocked sends e where the strategy says, as upstream's
// requeueEntityWithQueueingStrategy: it stays in the unschedulable set on
// Skip; it goes to backoff while its backoff lasts, to activeQ after; a
// PreEnqueue plugin may still hold it in the unschedulable set. It returns
// where the entity went.
func (q *Queue) requeueLocked(e Entity, s queueingStrategy, c cause) event.QueueName {
	switch {
	case s == queueSkip:
		return q.parkLocked(e, c)
	case s == queueAfterBackoff && q.backoff.backingOff(e):
		return q.moveToBackoffQLocked(e, c)
	}
	return q.moveToActiveQLocked(e, c, false)
}

// worthRequeuing asks whether ev may make e schedulable (upstream's
// isEntityWorthRequeuing): a group is worth as much as its best pod.
func (q *Queue) worthRequeuing(e Entity, ev fwk.ClusterEvent, oldObj, newObj any) (s queueingStrategy, plugin string, skipped []string) {
	if pi, ok := e.(*PodInfo); ok {
		// A pod alone: its own answer, every waiting pod on every event.
		return q.podWorthRequeuing(pi, ev, oldObj, newObj)
	}
	for _, pi := range e.members() {
		ps, pplugin, pskipped := q.podWorthRequeuing(pi, ev, oldObj, newObj)
		if ps > s {
			s, plugin = ps, pplugin
		}
		if s == queueImmediately {
			return s, plugin, nil
		}
		skipped = append(skipped, pskipped...)
	}
	if s != queueSkip {
		return s, plugin, nil
	}
	slices.Sort(skipped)
	return s, "", slices.Compact(skipped)
}

// podWorthRequeuing asks the QueueingHints of the plugins that rejected pi
// whether ev may make it schedulable (upstream's isPodWorthRequeuing), and
// names the plugin that answered Queue. Pending plugins are asked first: their
// Queue outranks the others'. On QueueSkip it names the plugins whose hints
// were asked, which all answered QueueSkip (none when no rejecting plugin
// registered for ev).
func (q *Queue) podWorthRequeuing(pi *PodInfo, ev fwk.ClusterEvent, oldObj, newObj any) (s queueingStrategy, plugin string, skipped []string) {
	if !pi.rejected() {
		return queueAfterBackoff, "", nil
	}
	if framework.ClusterEventIsWildCard(ev) {
		// A wildcard event that carries a pod (ForceActivate) is for that
		// pod alone.
		if newObj != nil {
			if pod, ok := newObj.(*v1.Pod); !ok || pod.UID != pi.uid() {
				return queueSkip, "", nil
			}
		}
		return queueAfterBackoff, "", nil
	}
	if _, ok := q.opts.Profiles[pi.Pod.Spec.SchedulerName]; !ok {
		// No profile schedules it: as upstream, the hints cannot say no.
		return queueAfterBackoff, "", nil
	}
	for name := range sorted(pi.PendingPlugins) {
		queue, asked := q.hintSaysQueue(name, pi.Pod, ev, oldObj, newObj)
		if queue {
			return queueImmediately, name, nil
		}
		if asked {
			skipped = append(skipped, name)
		}
	}
	for name := range sorted(pi.UnschedulablePlugins) {
		if pi.PendingPlugins.Has(name) {
			continue
		}
		queue, asked := q.hintSaysQueue(name, pi.Pod, ev, oldObj, newObj)
		if queue {
			return queueAfterBackoff, name, nil
		}
		if asked {
			skipped = append(skipped, name)
		}
	}
	return queueSkip, "", skipped
}

// hintSaysQueue runs the hints the plugin registered for events that ev
// matches (UpdateNodeLabel matches a registered Update). No hint function
// means Queue. asked says whether the plugin registered for ev at all.
func (q *Queue) hintSaysQueue(plugin string, pod *v1.Pod, ev fwk.ClusterEvent, oldObj, newObj any) (queue, asked bool) {
	for _, reg := range q.profileOf(pod).Hints[plugin] {
		if !framework.MatchClusterEvents(reg.Event, ev) {
			continue
		}
		asked = true
		if reg.QueueingHintFn == nil || q.callHint(plugin, reg.QueueingHintFn, pod, oldObj, newObj) == fwk.Queue {
			return true, true
		}
	}
	return false, asked
}

// callHint runs a QueueingHint. An error means Queue, as upstream: retrying
// is always safe, parking a pod forever is not. A panic means Queue too,
// where upstream would crash.
func (q *Queue) callHint(plugin string, fn fwk.QueueingHintFn, pod *v1.Pod, oldObj, newObj any) (hint fwk.QueueingHint) {
	defer func() {
		if r := recover(); r != nil {
			q.opts.Logger.Error(fmt.Errorf("%v", r), "QueueingHint panicked", "plugin", plugin, "pod", klog.KObj(pod))
			hint = fwk.Queue
		}
	}()
	hint, err := fn(q.opts.Logger, pod, oldObj, newObj)
	if err != nil {
		q.opts.Logger.Error(err, "QueueingHint failed", "plugin", plugin, "pod", klog.KObj(pod))
		return fwk.Queue
	}
	return hint
}

// ofInterest says whether some plugin registered an event that ev matches.
// Upstream ignores other events altogether, even for the pods in flight.
func (q *Queue) ofInterest(ev fwk.ClusterEvent) bool {
	if framework.ClusterEventIsWildCard(ev) {
		return true
	}
	for _, p := range q.opts.Profiles {
		for _, regs := range p.Hints {
			for _, reg := range regs {
				if framework.MatchClusterEvents(reg.Event, ev) {
					return true
				}
			}
		}
	}
	return false
}

// profileOf is what the queue asks of the plugins of the pod's profile;
// nothing for a pod of no profile.
func (q *Queue) profileOf(pod *v1.Pod) Profile { return q.opts.Profiles[pod.Spec.SchedulerName] }

// sorted yields a set's names in order, so that hints are asked in the same
// order every time. Most pods have one rejecting plugin: that needs no
// sorted copy, and the queue asks this of every waiting pod on every event.
func sorted(set sets.Set[string]) iter.Seq[string] {
	return func(yield func(string) bool) {
		if len(set) <= 1 {
			for name := range set {
				yield(name)
			}
			return
		}
		for _, name := range sets.List(set) {
			if !yield(name) {
				return
			}
		}
	}
}

// runPreEnqueueLocked runs the PreEnqueue plugins for each of e's pods and
// says whether e may go on. A group is gated while any of its pods is, by
// the last such pod's gate (upstream's runPreEnqueuePlugins); every pod is
// asked all the same.
func (q *Queue) runPreEnqueueLocked(e Entity) bool {
	var gated *PodInfo
	for _, pi := range e.members() {
		if !q.runPodPreEnqueueLocked(pi) {
			gated = pi
		}
	}
	s := e.params()
	if gated == nil {
		s.GatingPlugin, s.GatingPluginEvents = "", nil
		return true
	}
	s.GatingPlugin, s.GatingPluginEvents = gated.GatingPlugin, gated.GatingPluginEvents
	return false
}

// runPodPreEnqueueLocked runs the PreEnqueue plugins, the one that gated the
// pod last first, and says whether the pod may go on. The first plugin that
// does not answer Success gates the pod: it becomes its GatingPlugin and
// joins its UnschedulablePlugins, so that its QueueingHints decide when the
// pod is worth another look.
func (q *Queue) runPodPreEnqueueLocked(pi *PodInfo) bool {
	profile := q.profileOf(pi.Pod)
	preEnqueue := profile.PreEnqueue
	if len(preEnqueue) == 0 {
		pi.GatingPlugin, pi.GatingPluginEvents = "", nil
		return true
	}
	// The plugin that gated the pod last goes first; the order of the
	// others stays. Built without a copy of the list: this runs for every
	// waiting pod of a gang each time one of them arrives.
	first := slices.IndexFunc(preEnqueue, func(pl fwk.PreEnqueuePlugin) bool { return pl.Name() == pi.GatingPlugin })
	pluginAt := func(i int) fwk.PreEnqueuePlugin {
		switch {
		case first < 0:
			return preEnqueue[i]
		case i == 0:
			return preEnqueue[first]
		case i <= first:
			return preEnqueue[i-1]
		}
		return preEnqueue[i]
	}
	results := make([]event.PluginResult, 0, len(preEnqueue))
	defer func() {
		q.opts.Observer.Observe(event.Event{
			Time: q.opts.Clock.Now(), Kind: event.KindPoint, Pod: event.RefOf(pi.Pod),
			Point: &event.PointResults{Point: "PreEnqueue", Results: results},
		})
	}()
	for i := range preEnqueue {
		pl := pluginAt(i)
		start := time.Now()
		status := runPreEnqueue(pl, pi.Pod)
		results = append(results, event.PluginResult{
			Plugin: pl.Name(), Code: int(status.Code()), Reason: status.Message(), Nanos: time.Since(start).Nanoseconds(),
		})
		if !status.IsSuccess() {
			if pi.UnschedulablePlugins == nil {
				pi.UnschedulablePlugins = sets.New[string]()
			}
			if !pi.UnschedulablePlugins.Has(pl.Name()) { // a gang's pods are asked again and again
				pi.UnschedulablePlugins.Insert(pl.Name())
			}
			pi.GatingPlugin, pi.GatingPluginEvents = pl.Name(), profile.events[pl.Name()]
			return false
		}
	}
	pi.GatingPlugin, pi.GatingPluginEvents = "", nil
	return true
}

func runPreEnqueue(pl fwk.PreEnqueuePlugin, pod *v1.Pod) (status *fwk.Status) {
	defer func() {
		if r := recover(); r != nil {
			status = fwk.NewStatus(fwk.Error, fmt.Sprintf("plugin panicked: %v", r))
		}
	}()
	return pl.PreEnqueue(context.Background(), pod)
}

func pluginList(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}
