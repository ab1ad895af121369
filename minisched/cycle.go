package minisched

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/minisched/event"
	"minisched/minisched/queue"
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
	timeout  time.Duration
	// plugin names the plugin being called at a pod-level point, so that a
	// hang can be blamed on it.
	plugin atomic.Value
}

func (s *Scheduler) newCycle(ctx context.Context, pi *queue.PodInfo) *cycle {
	return &cycle{
		id:       s.cycles.Add(1),
		pod:      event.RefOf(pi.Pod),
		attempt:  pi.Attempts,
		begun:    time.Now(),
		logger:   klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KObj(pi.Pod)),
		observer: s.observer,
		p:        s.profile,
		timeout:  s.opts.CycleTimeout,
	}
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
		Result: result, Node: node, Message: msg, Plugins: plugins, FeasibleNodes: feasible, Ties: ties,
		Nanos: time.Since(c.begun).Nanoseconds(),
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

// call runs one plugin call, times it, and turns a panic into an Error
// status: a broken plugin fails the pod's cycle, never the scheduler.
func call(plugin string, f func() *fwk.Status) (status *fwk.Status, nanos int64) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			status = fwk.AsStatus(fmt.Errorf("plugin %s panicked: %v", plugin, r))
		}
		if status != nil {
			status.SetPlugin(plugin)
		}
		nanos = time.Since(start).Nanoseconds()
	}()
	return f(), 0
}

func result(plugin string, status *fwk.Status, nanos int64) event.PluginResult {
	return event.PluginResult{Plugin: plugin, Code: int(status.Code()), Reason: status.Message(), Nanos: nanos}
}

// bounded runs one extension point and gives up on it after the cycle
// timeout: a plugin that hangs fails this pod's cycle with an error, and the
// scheduler moves on. The abandoned goroutine's results are never read.
func (c *cycle) bounded(point string, f func()) *fwk.Status {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
		who := point
		if p, _ := c.plugin.Load().(string); p != "" {
			who = point + " plugin " + p
		}
		return fwk.AsStatus(fmt.Errorf("%s did not return within %v", who, c.timeout))
	}
}

// preFilter runs PreFilter. A rejection fills d, as kube-scheduler does, so
// that PostFilter and the message see it.
func (c *cycle) preFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, d *framework.Diagnosis) (res *fwk.PreFilterResult, status *fwk.Status) {
	var results []event.PluginResult
	skip := sets.New[string]()
	withNodes := sets.New[string]()
	if timeout := c.bounded("PreFilter", func() {
		for _, pl := range c.p.preFilter {
			c.plugin.Store(pl.Name())
			var r *fwk.PreFilterResult
			s, nanos := call(pl.Name(), func() *fwk.Status {
				var s *fwk.Status
				r, s = pl.PreFilter(ctx, state, pod, nodes)
				return s
			})
			pr := result(pl.Name(), s, nanos)
			if r != nil && !r.AllNodes() {
				pr.NodeNames = sets.List(r.NodeNames)
			}
			results = append(results, pr)
			switch {
			case s.IsSkip():
				skip.Insert(pl.Name())
				continue
			case s.Code() == fwk.UnschedulableAndUnresolvable:
				// Preemption cannot help: stop here.
				status = s
				return
			case s.Code() == fwk.Unschedulable:
				// Preemption may help: the other plugins must prepare too.
				status = s
				continue
			case !s.IsSuccess():
				status = fwk.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
				return
			}
			if !r.AllNodes() {
				withNodes.Insert(pl.Name())
			}
			res = res.Merge(r)
			if !res.AllNodes() && len(res.NodeNames) == 0 {
				status = fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
					fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(withNodes)))
				return
			}
		}
	}); timeout != nil {
		return nil, timeout
	}
	state.SetSkipFilterPlugins(skip)
	c.point("PreFilter", "", results)
	if status.IsRejected() {
		d.NodeToStatus.SetAbsentNodesStatus(status)
		d.PreFilterMsg = status.Message()
		d.AddPluginStatus(status)
		if status.Plugin() == "" {
			d.UnschedulablePlugins = withNodes
		}
	}
	return res, status
}

// filter runs every Filter plugin on the nodes, in parallel, starting at
// start and stopping once numToFind nodes fit (unless exhaustive: then every
// node is checked, so that which nodes count as feasible does not depend on
// which goroutine ran first). Nodes that do not fit go into d. A node with
// nominated pods is also checked with them in place.
func (c *cycle) filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, start, numToFind int,
	exhaustive bool, d *framework.Diagnosis, nominator fwk.PodNominator) ([]fwk.NodeInfo, *fwk.Status) {
	skip := state.GetSkipFilterPlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.filter), func(pl fwk.FilterPlugin) bool { return skip.Has(pl.Name()) })
	names := make([]string, len(plugins))
	for i, pl := range plugins {
		names[i] = pl.Name()
	}
	begun := time.Now()
	rows := make([]event.NodeFilter, len(nodes))
	statuses := make([]*fwk.Status, len(nodes))
	passed := make([]bool, len(nodes))
	var found atomic.Int64
	var failed atomic.Pointer[fwk.Status]
	if len(nodes) == 0 {
		c.emit(event.Event{Kind: event.KindFilter, Filter: &event.FilterResults{Plugins: names, Nodes: []event.NodeFilter{}}})
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	check := func(i int) {
		ni := nodes[(start+i)%len(nodes)]
		row := &rows[i]
		row.Node = ni.Node().Name
		row.Codes = make([]int, 0, len(plugins))
		row.Nanos = make([]int64, 0, len(plugins))
		var status *fwk.Status
		for _, pl := range plugins {
			s, nanos := call(pl.Name(), func() *fwk.Status { return pl.Filter(ctx, state, pod, ni) })
			row.Codes = append(row.Codes, int(s.Code()))
			row.Nanos = append(row.Nanos, nanos)
			if !s.IsSuccess() {
				if !s.IsRejected() {
					s = fwk.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
				}
				row.Reason = s.Message()
				status = s
				break
			}
		}
		if status.IsSuccess() && len(nominator.NominatedPodsForNode(row.Node)) > 0 {
			// Pods nominated here by preemption hold their room.
			row.Nominated = true
			status = c.p.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if !status.IsSuccess() {
				row.Reason = "with the pods nominated to this node: " + status.Message()
			}
		}
		switch {
		case status.Code() == fwk.Error:
			failed.CompareAndSwap(nil, status)
			cancel()
		case status.IsSuccess():
			passed[i] = true
			if found.Add(1) >= int64(numToFind) && !exhaustive {
				cancel()
			}
		default:
			statuses[i] = status
		}
	}
	if timeout := c.bounded("Filter", func() { c.p.fw.Parallelizer().Until(ctx, len(nodes), check, "Filter") }); timeout != nil {
		return nil, timeout
	}
	// Feasible nodes in the order they were to be checked, whatever order
	// the goroutines finished in.
	feasible := make([]fwk.NodeInfo, 0, numToFind)
	evaluated := make([]event.NodeFilter, 0, len(rows))
	for i, row := range rows {
		if row.Node == "" {
			continue // not reached: enough nodes fit already
		}
		evaluated = append(evaluated, row)
		if passed[i] && len(feasible) < numToFind {
			feasible = append(feasible, nodes[(start+i)%len(nodes)])
		}
		if statuses[i] != nil {
			d.NodeToStatus.Set(row.Node, statuses[i])
			d.AddPluginStatus(statuses[i])
		}
	}
	c.emit(event.Event{Kind: event.KindFilter, Filter: &event.FilterResults{
		Plugins: names, Nodes: evaluated, Nanos: time.Since(begun).Nanoseconds(),
	}})
	if s := failed.Load(); s != nil {
		return nil, s
	}
	return feasible, nil
}

// postFilter runs PostFilter (preemption) until one plugin succeeds, errs or
// says nothing can help.
func (c *cycle) postFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, statuses fwk.NodeToStatusReader) (res *fwk.PostFilterResult, status *fwk.Status) {
	if len(c.p.postFilter) == 0 {
		return nil, nil
	}
	var results []event.PluginResult
	var reasons []string
	if timeout := c.bounded("PostFilter", func() {
		for _, pl := range c.p.postFilter {
			c.plugin.Store(pl.Name())
			var r *fwk.PostFilterResult
			s, nanos := call(pl.Name(), func() *fwk.Status {
				var s *fwk.Status
				r, s = pl.PostFilter(ctx, state, pod, statuses)
				return s
			})
			pr := result(pl.Name(), s, nanos)
			if r != nil && r.NominatingInfo != nil {
				pr.Nominated = r.NominatingInfo.NominatedNodeName
			}
			results = append(results, pr)
			if s.IsSuccess() || s.Code() == fwk.Error || s.Code() == fwk.UnschedulableAndUnresolvable {
				res, status = r, s
				return
			}
			reasons = append(reasons, s.Message())
			res = r
		}
		status = fwk.NewStatus(fwk.Unschedulable, reasons...)
	}); timeout != nil {
		return nil, timeout
	}
	c.point("PostFilter", "", results)
	return res, status
}

// preScore runs PreScore; plugins that Skip are not called at Score.
func (c *cycle) preScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (status *fwk.Status) {
	var results []event.PluginResult
	skip := sets.New[string]()
	if timeout := c.bounded("PreScore", func() {
		for _, pl := range c.p.preScore {
			c.plugin.Store(pl.Name())
			s, nanos := call(pl.Name(), func() *fwk.Status { return pl.PreScore(ctx, state, pod, nodes) })
			results = append(results, result(pl.Name(), s, nanos))
			if s.IsSkip() {
				skip.Insert(pl.Name())
				continue
			}
			if !s.IsSuccess() {
				status = fwk.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
				return
			}
		}
	}); timeout != nil {
		return timeout
	}
	state.SetSkipScorePlugins(skip)
	c.point("PreScore", "", results)
	return status
}

type nodeTotal struct {
	node  string
	total int64
}

// score runs Score on every node (in parallel), then NormalizeScore and the
// weights, and returns each node's total.
func (c *cycle) score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]nodeTotal, *fwk.Status) {
	skip := state.GetSkipScorePlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.score), func(pl fwk.ScorePlugin) bool { return skip.Has(pl.Name()) })
	begun := time.Now()
	rows := make([]event.NodeScore, len(nodes))
	described := make([]event.ScorePlugin, len(plugins))
	for j, pl := range plugins {
		described[j] = event.ScorePlugin{Name: pl.Name(), Weight: c.p.weights[pl.Name()]}
	}
	var failed atomic.Pointer[fwk.Status]
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	scoreNode := func(i int) {
		ni := nodes[i]
		row := &rows[i]
		row.Node = ni.Node().Name
		row.Raw = make([]int64, len(plugins))
		row.Nanos = make([]int64, len(plugins))
		for j, pl := range plugins {
			s, nanos := call(pl.Name(), func() *fwk.Status {
				var s *fwk.Status
				row.Raw[j], s = pl.Score(ctx, state, pod, ni)
				return s
			})
			row.Nanos[j] = nanos
			if !s.IsSuccess() {
				failed.CompareAndSwap(nil, fwk.AsStatus(fmt.Errorf("running Score plugin %q on node %s: %w", pl.Name(), row.Node, s.AsError())).WithPlugin(pl.Name()))
				cancel()
				return
			}
		}
	}
	status := c.bounded("Score", func() {
		c.p.fw.Parallelizer().Until(ctx, len(nodes), scoreNode, "Score")
		if failed.Load() != nil {
			return
		}
		for j, pl := range plugins {
			c.plugin.Store(pl.Name())
			if s := c.normalize(ctx, state, pod, pl, j, rows, &described[j]); s != nil {
				failed.CompareAndSwap(nil, s)
				return
			}
		}
	})
	if status == nil {
		status = failed.Load()
	}
	if status != nil {
		if status.Plugin() != "" {
			for j := range described {
				if described[j].Name == status.Plugin() {
					described[j].Code, described[j].Reason = int(status.Code()), status.Message()
				}
			}
		}
		c.emit(event.Event{Kind: event.KindScore, Score: &event.ScoreResults{Plugins: described, Nodes: rows, Nanos: time.Since(begun).Nanoseconds()}})
		return nil, status
	}
	totals := make([]nodeTotal, len(rows))
	for i := range rows {
		totals[i] = nodeTotal{node: rows[i].Node, total: rows[i].Total}
	}
	c.emit(event.Event{Kind: event.KindScore, Score: &event.ScoreResults{Plugins: described, Nodes: rows, Nanos: time.Since(begun).Nanoseconds()}})
	return totals, nil
}

// normalize runs plugin j's NormalizeScore over every node's raw score,
// then weighs the result into each node's total.
func (c *cycle) normalize(ctx context.Context, state fwk.CycleState, pod *v1.Pod, pl fwk.ScorePlugin, j int, rows []event.NodeScore, d *event.ScorePlugin) *fwk.Status {
	list := make(fwk.NodeScoreList, len(rows))
	for i := range rows {
		list[i] = fwk.NodeScore{Name: rows[i].Node, Score: rows[i].Raw[j]}
	}
	if ext := pl.ScoreExtensions(); ext != nil {
		s, nanos := call(pl.Name(), func() *fwk.Status { return ext.NormalizeScore(ctx, state, pod, list) })
		d.NormalizeNanos = nanos
		if !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running NormalizeScore of %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	for i := range rows {
		score := list[i].Score
		if score < fwk.MinNodeScore || score > fwk.MaxNodeScore {
			return fwk.AsStatus(fmt.Errorf("plugin %q returned score %d for node %s, outside [%d, %d] after normalizing",
				pl.Name(), score, rows[i].Node, fwk.MinNodeScore, fwk.MaxNodeScore)).WithPlugin(pl.Name())
		}
		if rows[i].Normalized == nil {
			rows[i].Normalized = make([]int64, len(rows[i].Raw))
			rows[i].Weighted = make([]int64, len(rows[i].Raw))
		}
		rows[i].Normalized[j] = score
		rows[i].Weighted[j] = score * d.Weight
		rows[i].Total += score * d.Weight
	}
	return nil
}

// reserve runs Reserve in order until one fails.
func (c *cycle) reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	return inOrder(c, "Reserve", node, slices.All(c.p.reserve), (*fwk.Status).IsSuccess,
		func(pl fwk.ReservePlugin) *fwk.Status { return pl.Reserve(ctx, state, pod, node) })
}

// unreserve runs Unreserve of every Reserve plugin, in reverse order.
func (c *cycle) unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	inOrder(c, "Unreserve", node, slices.Backward(c.p.reserve), always,
		func(pl fwk.ReservePlugin) *fwk.Status { pl.Unreserve(ctx, state, pod, node); return nil })
}

// maxPermitWait caps what a Permit plugin may ask for, as upstream does.
const maxPermitWait = 15 * time.Minute

// permit runs Permit; any rejection ends it, any Wait makes the pod wait.
func (c *cycle) permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) (status *fwk.Status, waits map[string]time.Duration) {
	var results []event.PluginResult
	waits = map[string]time.Duration{}
	if timeout := c.bounded("Permit", func() {
		for _, pl := range c.p.permit {
			c.plugin.Store(pl.Name())
			var wait time.Duration
			s, nanos := call(pl.Name(), func() *fwk.Status {
				var s *fwk.Status
				s, wait = pl.Permit(ctx, state, pod, node)
				return s
			})
			pr := result(pl.Name(), s, nanos)
			switch {
			case s.IsSuccess():
			case s.IsWait():
				wait = min(wait, maxPermitWait)
				pr.TimeoutNanos = wait.Nanoseconds()
				waits[pl.Name()] = wait
				status = s
			case s.IsRejected():
				results = append(results, pr)
				status = s
				return
			default:
				results = append(results, pr)
				status = fwk.AsStatus(fmt.Errorf("running Permit plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
				return
			}
			results = append(results, pr)
		}
	}); timeout != nil {
		return timeout, nil
	}
	c.point("Permit", node, results)
	return status, waits
}

// preBind runs PreBind in order until one fails.
func (c *cycle) preBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	return inOrder(c, "PreBind", node, slices.All(c.p.preBind), successOrSkip,
		func(pl fwk.PreBindPlugin) *fwk.Status { return pl.PreBind(ctx, state, pod, node) })
}

// bind runs Bind plugins until one does not Skip.
func (c *cycle) bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) (status *fwk.Status) {
	var results []event.PluginResult
	if timeout := c.bounded("Bind", func() {
		for _, pl := range c.p.bind {
			c.plugin.Store(pl.Name())
			s, nanos := call(pl.Name(), func() *fwk.Status { return pl.Bind(ctx, state, pod, node) })
			results = append(results, result(pl.Name(), s, nanos))
			if s.IsSkip() {
				continue
			}
			if !s.IsSuccess() {
				status = fwk.AsStatus(fmt.Errorf("running Bind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
				if s.IsRejected() {
					status = s
				}
			}
			return
		}
		status = fwk.NewStatus(fwk.Error, "every Bind plugin skipped the pod")
	}); timeout != nil {
		return timeout
	}
	c.point("Bind", node, results)
	return status
}

// postBind tells every PostBind plugin that the pod is bound.
func (c *cycle) postBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	inOrder(c, "PostBind", node, slices.All(c.p.postBind), always,
		func(pl fwk.PostBindPlugin) *fwk.Status { pl.PostBind(ctx, state, pod, node); return nil })
}

func always(*fwk.Status) bool { return true }

func successOrSkip(s *fwk.Status) bool { return s.IsSuccess() || s.IsSkip() }

// inOrder calls the plugins of a pod-level extension point one after
// another, reports every call, and stops at the first whose status does not
// pass: a rejection stays a rejection, anything else becomes an error that
// names the plugin.
func inOrder[T fwk.Plugin](c *cycle, point, node string, plugins iter.Seq2[int, T], passes func(*fwk.Status) bool, run func(T) *fwk.Status) (status *fwk.Status) {
	var results []event.PluginResult
	if timeout := c.bounded(point, func() {
		for _, pl := range plugins {
			c.plugin.Store(pl.Name())
			s, nanos := call(pl.Name(), func() *fwk.Status { return run(pl) })
			results = append(results, result(pl.Name(), s, nanos))
			if !passes(s) {
				status = s
				if !s.IsRejected() {
					status = fwk.AsStatus(fmt.Errorf("running %s plugin %q: %w", point, pl.Name(), s.AsError())).WithPlugin(pl.Name())
				}
				return
			}
		}
	}); timeout != nil {
		return timeout
	}
	c.point(point, node, results)
	return status
}

// rejectors lists the plugins a diagnosis blames, sorted.
func rejectors(d *framework.Diagnosis) []string {
	if d == nil {
		return nil
	}
	out := sets.List(d.UnschedulablePlugins.Union(d.PendingPlugins))
	sort.Strings(out)
	return out
}
