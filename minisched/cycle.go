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
}

func (c *cycle) emit(e event.Event) {
	e.Time, e.Pod, e.Cycle = time.Now(), c.pod, c.id
	c.observer.Observe(e)
}

func (c *cycle) start(nodes int) {
	c.emit(event.Event{Kind: event.KindCycleStart, CycleStart: &event.CycleStart{Attempt: c.attempt, Nodes: nodes, Profile: c.p.name}})
}

func (c *cycle) end(result event.CycleResult, node, msg string, plugins []string, feasible int, ties []string) {
	c.emit(event.Event{Kind: event.KindCycleEnd, CycleEnd: &event.CycleEnd{
		Result: result, Node: node, Message: msg, Plugins: plugins, FeasibleNodes: feasible, Ties: ties, TieCount: len(ties),
		Nanos: time.Since(c.begun).Nanoseconds(), Batch: c.batch,
	}})
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
