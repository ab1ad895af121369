package minisched

import (
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"minisched/event"
)

// cycle runs the plugins of one pod's attempt and reports every call. Its
// methods keep the framework runtime's rules (Skip, narrowing, stop at the
// first failure...) so that in-tree plugins behave as under kube-scheduler.
type cycle struct {
	id       int64
	pod      *event.PodRef
	attempt  int
	begun    time.Time
	logger   klog.Logger
	observer event.Observer
	p        *profile
	// extenders are the scheduler's (none: an empty list).
	extenders *extenders
	// timeout bounds a point of the scheduling cycle, binding one of the
	// binding cycle (see bounded).
	timeout, binding time.Duration
	// plugin names the plugin being called at a pod-level point (and at
	// Filter when it checks nodes in order), so that a hang can be blamed
	// on it.
	plugin atomic.Value
	// scratch is the scheduler's, lent to one cycle at a time.
	scratch *scratch
	// batch reports what opportunistic batching made of the cycle; nil
	// with the gate off.
	batch *event.Batch
	// group places the cycle in its pod group's; nil for a pod alone.
	group *event.GroupCycle
}

func (c *cycle) emit(e event.Event) {
	e.Time, e.Pod, e.Cycle = time.Now(), c.pod, c.id
	c.observer.Observe(e)
}

func (c *cycle) start(nodes int) {
	c.emit(event.Event{Kind: event.KindCycleStart, CycleStart: &event.CycleStart{Attempt: c.attempt, Nodes: nodes, Profile: c.p.name, Group: c.group}})
}

// end reports how the cycle ended; it counts the ties and the time.
func (c *cycle) end(e event.CycleEnd) {
	e.TieCount, e.Nanos, e.Batch = len(e.Ties), time.Since(c.begun).Nanoseconds(), c.batch
	c.emit(event.Event{Kind: event.KindCycleEnd, CycleEnd: &e})
}

func (c *cycle) point(name, node string, results []event.PluginResult) {
	if len(results) == 0 {
		return
	}
	c.emit(event.Event{Kind: event.KindPoint, Point: &event.PointResults{Point: name, Node: node, Results: results}})
}

func (c *cycle) permitWait(node string, waits map[string]time.Duration) {
	timeouts := make(map[string]int64, len(waits))
	for name, d := range waits {
		timeouts[name] = d.Nanoseconds()
	}
	c.emit(event.Event{Kind: event.KindPermitWait, PermitWait: &event.PermitWait{Node: node, Plugins: timeouts}})
}

func (c *cycle) bindingEnd(b event.BindingEnd) {
	c.emit(event.Event{Kind: event.KindBindingEnd, BindingEnd: &b})
}
