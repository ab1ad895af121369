package minisched

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
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
	// plugin names the plugin being called at a pod-level point (and at
	// Filter when it checks nodes in order), so that a hang can be blamed
	// on it.
	plugin atomic.Value
	// scratch is the scheduler's, lent to one cycle at a time.
	scratch *scratch
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
		scratch:  &s.scratch,
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
		Result: result, Node: node, Message: msg, Plugins: plugins, FeasibleNodes: feasible, Ties: ties, TieCount: len(ties),
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
	start := clock()
	status, end := callFrom(start, plugin, f)
	return status, end - start
}

// callFrom is call for a run of calls, one after another: start is when
// this call began (the previous one's end), and it returns when it ended,
// which saves reading the clock twice per call on thousands of nodes.
func callFrom(start int64, plugin string, f func() *fwk.Status) (status *fwk.Status, end int64) {
	defer func() {
		if r := recover(); r != nil {
			status = fwk.AsStatus(fmt.Errorf("plugin %s panicked: %v", plugin, r))
		}
		if status != nil {
			status.SetPlugin(plugin)
		}
		end = clock()
	}()
	return f(), 0
}

// epoch anchors clock.
var epoch = time.Now()

// clock reads the monotonic clock alone, at half the cost of time.Now: Filter
// and Score time every plugin on every node, thousands of calls per cycle.
func clock() int64 { return int64(time.Since(epoch)) }

func result(plugin string, status *fwk.Status, nanos int64) event.PluginResult {
	return event.PluginResult{Plugin: plugin, Code: int(status.Code()), Reason: status.Message(), Nanos: nanos}
}

// bounded runs one extension point and gives up on it after the cycle
// timeout: a plugin that hangs fails this pod's cycle with an error, and the
// scheduler moves on. Go cannot stop the goroutine left behind, so bounded
// cuts it off from the cycle instead:
//   - f runs with a context that is cancelled at the timeout, so plugins
//     that watch it return, and f's loops call no further plugin once
//     abandoned says so (the snapshot's nodes are the next cycle's);
//   - f runs with a cycle state of its own (see ownState): what its plugins
//     do there reaches state only when f returns in time.
//
// The caller may read the variables f writes only when bounded returned nil:
// after a timeout they belong to the abandoned goroutine.
func (c *cycle) bounded(ctx context.Context, point string, state fwk.CycleState, f func(context.Context, fwk.CycleState)) *fwk.Status {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The last point's plugin must not take the blame for this one's hang.
	c.plugin.Store("")
	own := newOwnState(state)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx, own)
	}()
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case <-done:
		own.commit(state)
		return nil
	case <-timer.C:
		who := point
		if p, _ := c.plugin.Load().(string); p != "" {
			who = point + " plugin " + p
		}
		err := fmt.Errorf("%s did not return within %v", who, c.timeout)
		cancel(fmt.Errorf("%w: %w", errAbandoned, err))
		return fwk.AsStatus(err)
	}
}

// errAbandoned is the cause of the context bounded cancels at the timeout.
var errAbandoned = errors.New("abandoned by the scheduler")

// abandoned returns an error once bounded gave up on the extension point
// that ctx was made for, and nil before. The loops that call plugins ask it
// before each call. A scheduler that stops cancels ctx too, but its loops go
// on as upstream's do: only an abandoned point is cut short.
func abandoned(ctx context.Context) *fwk.Status {
	if ctx.Err() == nil {
		return nil
	}
	if err := context.Cause(ctx); errors.Is(err, errAbandoned) {
		return fwk.AsStatus(err)
	}
	return nil
}

// ownState is the cycle state one extension point runs with: a clone of the
// cycle's, so that a call abandoned at the timeout changes only a copy
// nobody reads. How deep the copy goes is each StateData's Clone: upstream's
// plugins copy what PreFilter's AddPod and RemovePod change and share the
// rest (VolumeBinding, DynamicResources and PodsToActivate share it all,
// behind their own locks).
//
// It remembers the keys the plugins read, wrote or deleted, and the skip sets
// they set, so that commit carries their work back when the point returned
// in time: PreFilter's and PreScore's writes reach Filter and Score that
// way. Keys only read are carried as well, because plugins may change in
// place what they read.
type ownState struct {
	fwk.CycleState
	skipFilter, skipScore, skipPreBind, parallelPreBind atomic.Bool

	// touched lists the keys used, copied on write: Filter and Score read
	// the same few keys from many goroutines, thousands of times a cycle,
	// and a look through a short list takes no lock.
	touched atomic.Pointer[[]fwk.StateKey]
	mu      sync.Mutex
}

func newOwnState(state fwk.CycleState) *ownState {
	return &ownState{CycleState: state.Clone()}
}

func (s *ownState) touch(key fwk.StateKey) {
	if keys := s.touched.Load(); keys != nil && slices.Contains(*keys, key) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var next []fwk.StateKey
	if keys := s.touched.Load(); keys != nil {
		if slices.Contains(*keys, key) {
			return
		}
		next = slices.Clone(*keys)
	}
	next = append(next, key)
	s.touched.Store(&next)
}

func (s *ownState) Read(key fwk.StateKey) (fwk.StateData, error) {
	s.touch(key)
	return s.CycleState.Read(key)
}

func (s *ownState) Write(key fwk.StateKey, val fwk.StateData) {
	s.touch(key)
	s.CycleState.Write(key, val)
}

func (s *ownState) Delete(key fwk.StateKey) {
	s.touch(key)
	s.CycleState.Delete(key)
}

func (s *ownState) SetSkipFilterPlugins(plugins sets.Set[string]) {
	s.skipFilter.Store(true)
	s.CycleState.SetSkipFilterPlugins(plugins)
}

func (s *ownState) SetSkipScorePlugins(plugins sets.Set[string]) {
	s.skipScore.Store(true)
	s.CycleState.SetSkipScorePlugins(plugins)
}

func (s *ownState) SetSkipPreBindPlugins(plugins sets.Set[string]) {
	s.skipPreBind.Store(true)
	s.CycleState.SetSkipPreBindPlugins(plugins)
}

func (s *ownState) SetParallelPreBindPlugins(plugins sets.Set[string]) {
	s.parallelPreBind.Store(true)
	s.CycleState.SetParallelPreBindPlugins(plugins)
}

// commit carries what the plugins did into the cycle's state.
func (s *ownState) commit(to fwk.CycleState) {
	if keys := s.touched.Load(); keys != nil {
		for _, key := range *keys {
			if v, err := s.CycleState.Read(key); err == nil {
				to.Write(key, v)
			} else {
				to.Delete(key)
			}
		}
	}
	if s.skipFilter.Load() {
		to.SetSkipFilterPlugins(s.CycleState.GetSkipFilterPlugins())
	}
	if s.skipScore.Load() {
		to.SetSkipScorePlugins(s.CycleState.GetSkipScorePlugins())
	}
	if s.skipPreBind.Load() {
		to.SetSkipPreBindPlugins(s.CycleState.GetSkipPreBindPlugins())
	}
	if s.parallelPreBind.Load() {
		to.SetParallelPreBindPlugins(s.CycleState.GetParallelPreBindPlugins())
	}
}

// runPoint runs a pod-level extension point: it calls the plugins one after
// another within the cycle timeout (see bounded), reports every call, and
// reports the point once it returned in time. What the point makes of each
// call is its own: then reads the plugin's status and what else run got
// from the plugin (v), may add to the call's report (r), and says whether
// the point stops there. runPoint returns bounded's status: when it is not
// nil the point was abandoned, and nothing then wrote may be read.
func runPoint[T fwk.Plugin, V any](ctx context.Context, c *cycle, state fwk.CycleState, point, node string, plugins iter.Seq2[int, T],
	run func(context.Context, fwk.CycleState, T) (V, *fwk.Status),
	then func(pl T, v V, s *fwk.Status, r *event.PluginResult) (stop bool)) *fwk.Status {
	// A point without plugins has nothing to run or report: no goroutine,
	// timer or copy of the state for it (the default profile has no
	// Permit or PostBind plugin, and that is two of each a pod).
	empty := true
	for range plugins {
		empty = false
		break
	}
	if empty {
		return nil
	}
	var results []event.PluginResult
	if timeout := c.bounded(ctx, point, state, func(ctx context.Context, state fwk.CycleState) {
		for _, pl := range plugins {
			if abandoned(ctx) != nil {
				return
			}
			c.plugin.Store(pl.Name())
			var v V
			s, nanos := call(pl.Name(), func() *fwk.Status {
				var s *fwk.Status
				v, s = run(ctx, state, pl)
				return s
			})
			r := result(pl.Name(), s, nanos)
			stop := then(pl, v, s, &r)
			results = append(results, r)
			if stop {
				return
			}
		}
	}); timeout != nil {
		return timeout
	}
	c.point(point, node, results)
	return nil
}

// statusOnly adapts a plugin call that returns nothing but a status to
// runPoint.
func statusOnly[T fwk.Plugin](run func(context.Context, fwk.CycleState, T) *fwk.Status) func(context.Context, fwk.CycleState, T) (struct{}, *fwk.Status) {
	return func(ctx context.Context, state fwk.CycleState, pl T) (struct{}, *fwk.Status) {
		return struct{}{}, run(ctx, state, pl)
	}
}

// pluginError turns a plugin's failure into its point's error, which names
// the plugin.
func pluginError(point, plugin string, s *fwk.Status) *fwk.Status {
	return fwk.AsStatus(fmt.Errorf("running %s plugin %q: %w", point, plugin, s.AsError())).WithPlugin(plugin)
}

// rejectedOrError is the status of a point that a plugin's failure stops: a
// rejection stays a rejection, anything else becomes an error.
func rejectedOrError(point, plugin string, s *fwk.Status) *fwk.Status {
	if s.IsRejected() {
		return s
	}
	return pluginError(point, plugin, s)
}

// preFilter runs PreFilter. A rejection fills d, as kube-scheduler does, so
// that PostFilter and the message see it.
func (c *cycle) preFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, d *framework.Diagnosis) (*fwk.PreFilterResult, *fwk.Status) {
	var res *fwk.PreFilterResult
	var status *fwk.Status
	skip := sets.New[string]()
	withNodes := sets.New[string]()
	if timeout := runPoint(ctx, c, state, "PreFilter", "", slices.All(c.p.preFilter),
		func(ctx context.Context, state fwk.CycleState, pl fwk.PreFilterPlugin) (*fwk.PreFilterResult, *fwk.Status) {
			return pl.PreFilter(ctx, state, pod, nodes)
		},
		func(pl fwk.PreFilterPlugin, r *fwk.PreFilterResult, s *fwk.Status, pr *event.PluginResult) bool {
			if r != nil && !r.AllNodes() {
				pr.NodeNames = sets.List(r.NodeNames)
			}
			switch {
			case s.IsSkip():
				skip.Insert(pl.Name())
				return false
			case s.Code() == fwk.UnschedulableAndUnresolvable:
				// Preemption cannot help: stop here.
				status = s
				return true
			case s.Code() == fwk.Unschedulable:
				// Preemption may help: the other plugins must prepare too.
				status = s
				return false
			case !s.IsSuccess():
				status = pluginError("PreFilter", pl.Name(), s)
				return true
			}
			// The nodes narrow to those every plugin named.
			if !r.AllNodes() {
				withNodes.Insert(pl.Name())
			}
			res = res.Merge(r)
			if !res.AllNodes() && len(res.NodeNames) == 0 {
				msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(withNodes))
				if withNodes.Len() == 1 {
					msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", sets.List(withNodes)[0])
				}
				status = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg)
				return true
			}
			return false
		}); timeout != nil {
		return nil, timeout
	}
	state.SetSkipFilterPlugins(skip)
	// The plugins that narrowed the nodes are blamed as well when the pod
	// fits nowhere: an event they care about may widen their choice.
	d.UnschedulablePlugins = withNodes
	if status.Code() == fwk.UnschedulableAndUnresolvable && status.Plugin() != "" {
		d.UnschedulablePlugins = sets.New[string]()
	}
	if status.IsRejected() {
		d.NodeToStatus.SetAbsentNodesStatus(status)
		d.PreFilterMsg = status.Message()
		d.AddPluginStatus(status)
	}
	return res, status
}

// filterRun is one pass of Filter over some nodes.
type filterRun struct {
	state fwk.CycleState
	pod   *v1.Pod
	nodes []fwk.NodeInfo
	// diagnosis receives the status of every node that does not fit.
	diagnosis *framework.Diagnosis
	// start is where the pass begins (it wraps round); it stops once
	// numToFind nodes fit.
	start, numToFind int
	// inOrder checks one node at a time, in order: the feasible nodes are
	// then those kube-scheduler finds with parallelism 1.
	inOrder bool
	// nominatedNode marks the pass over the pod's nominated node alone.
	nominatedNode bool
}

// filter runs every Filter plugin on the nodes, in parallel, starting at
// r.start, and stops once r.numToFind nodes fit, as upstream's
// findNodesThatPassFilters does. Nodes that do not fit go into the
// diagnosis. A node with nominated pods of equal or higher priority is
// checked twice, as upstream's RunFilterPluginsWithNominatedPods does:
// first with those pods in place, then without. It returns the feasible
// nodes, in the order they were checked, and how many nodes it processed.
func (c *cycle) filter(ctx context.Context, r filterRun) ([]fwk.NodeInfo, int, *fwk.Status) {
	skip := r.state.GetSkipFilterPlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.filter), func(pl fwk.FilterPlugin) bool { return skip.Has(pl.Name()) })
	names := make([]string, len(plugins))
	for i, pl := range plugins {
		names[i] = pl.Name()
	}
	begun := time.Now()
	n := len(r.nodes)
	// Only the nodes reached get a result: with thousands of nodes, Filter
	// stops after a few hundred fit.
	sc := c.scratch.takeFilter(n)
	results := sc.results
	var found atomic.Int64
	var failed atomic.Pointer[fwk.Status]

	// pass checks the nodes with the plugins, the state and the context
	// that bounded hands it.
	pass := func(ctx context.Context, state fwk.CycleState) {
		// abandon is bounded's context; ctx ends the pass early as well,
		// once enough nodes fit or one errs.
		abandon := ctx
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()

		// run calls each plugin on one node until one does not pass.
		run := func(state fwk.CycleState, ni fwk.NodeInfo, res *nodeCheck) *fwk.Status {
			if len(plugins) <= len(res.codeBuf) {
				res.codes, res.nanos = res.codeBuf[:0:len(plugins)], res.nanoBuf[:0:len(plugins)]
			} else {
				res.codes, res.nanos = make([]int8, 0, len(plugins)), make([]int64, 0, len(plugins))
			}
			begun := clock()
			for _, pl := range plugins {
				if s := abandoned(abandon); s != nil {
					return s
				}
				if r.inOrder {
					// One call at a time: a hang can be blamed on it.
					c.plugin.Store(pl.Name())
				}
				s, end := callFrom(begun, pl.Name(), func() *fwk.Status { return pl.Filter(ctx, state, r.pod, ni) })
				res.codes = append(res.codes, int8(s.Code()))
				res.nanos = append(res.nanos, end-begun)
				begun = end
				if !s.IsSuccess() {
					if !s.IsRejected() {
						s = fwk.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
					}
					res.reason = s.Message()
					return s
				}
			}
			return nil
		}
		check := func(i int) {
			ni := r.nodes[(r.start+i)%n]
			res := sc.check(ni.Node().Name)
			// Pods nominated here by preemption hold their room: the first pass
			// counts them, the second makes sure the pod does not rely on them.
			withNominated, nominatedState, nodeInfo, err := c.addNominatedPods(ctx, state, r.pod, ni)
			var status *fwk.Status
			if err != nil {
				status = fwk.AsStatus(err)
			} else {
				res.nominated = withNominated
				status = run(nominatedState, nodeInfo, res)
				if withNominated && status.IsRejected() {
					res.reason = "with the pods nominated to this node: " + res.reason
				}
				if withNominated && status.IsSuccess() {
					status = run(state, ni, res)
				}
			}
			if status.IsSuccess() && found.Add(1) > int64(r.numToFind) {
				// Enough nodes fit already: this one is not counted.
				found.Add(-1)
				cancel()
				return
			}
			res.status = status
			results[i] = res
			if status.Code() == fwk.Error {
				failed.CompareAndSwap(nil, status)
				cancel()
			}
		}
		if r.inOrder {
			for i := 0; i < n && ctx.Err() == nil; i++ {
				check(i)
			}
			return
		}
		c.p.fw.Parallelizer().Until(ctx, n, check, "Filter")
	}
	var timeout *fwk.Status
	if len(plugins) == 0 {
		// No Filter plugin: the first numToFind nodes fit, unchecked.
		for i := range min(r.numToFind, n) {
			results[i] = sc.check(r.nodes[(r.start+i)%n].Node().Name)
		}
	} else {
		timeout = c.bounded(ctx, "Filter", r.state, pass)
	}
	if timeout != nil {
		return nil, 0, timeout
	}
	evaluated := sc.event(names)
	feasible := make([]fwk.NodeInfo, 0, min(evaluated.Len(), r.numToFind))
	for i, res := range results {
		if res == nil {
			continue // not reached: enough nodes fit already
		}
		switch {
		case res.status.IsSuccess():
			feasible = append(feasible, r.nodes[(r.start+i)%n])
		case res.status.Code() != fwk.Error:
			r.diagnosis.NodeToStatus.Set(res.node, res.status)
			r.diagnosis.AddPluginStatus(res.status)
		}
	}
	c.scratch.putFilter(sc)
	evaluated.Nanos, evaluated.NominatedNode = time.Since(begun).Nanoseconds(), r.nominatedNode
	c.emit(event.Event{Kind: event.KindFilter, Filter: evaluated})
	processed := len(feasible) + r.diagnosis.NodeToStatus.Len()
	if s := failed.Load(); s != nil {
		return nil, processed, s
	}
	return feasible, processed, nil
}

// addNominatedPods returns a copy of the cycle state and of the node with
// the pods nominated to the node in place, those of equal or higher
// priority than pod; with none, it returns false and the originals.
func (c *cycle) addNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (bool, fwk.CycleState, fwk.NodeInfo, error) {
	nominated := c.p.fw.NominatedPodsForNode(ni.Node().Name)
	if len(nominated) == 0 {
		return false, state, ni, nil
	}
	nodeOut, stateOut := ni.Snapshot(), state.Clone()
	added := false
	for _, npi := range nominated {
		if corev1helpers.PodPriority(npi.GetPod()) < corev1helpers.PodPriority(pod) || npi.GetPod().UID == pod.UID {
			continue
		}
		nodeOut.AddPodInfo(npi)
		if s := c.p.fw.RunPreFilterExtensionAddPod(ctx, stateOut, pod, npi, nodeOut); !s.IsSuccess() {
			return false, state, ni, s.AsError()
		}
		added = true
	}
	return added, stateOut, nodeOut, nil
}

// postFilter runs PostFilter (preemption) until one plugin succeeds, errs or
// says nothing can help.
func (c *cycle) postFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, statuses fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if len(c.p.postFilter) == 0 {
		return nil, nil
	}
	var res *fwk.PostFilterResult
	// Unless a plugin decides, none could help, for the reasons they give.
	status := fwk.NewStatus(fwk.Unschedulable)
	if timeout := runPoint(ctx, c, state, "PostFilter", "", slices.All(c.p.postFilter),
		func(ctx context.Context, state fwk.CycleState, pl fwk.PostFilterPlugin) (*fwk.PostFilterResult, *fwk.Status) {
			return pl.PostFilter(ctx, state, pod, statuses)
		},
		func(_ fwk.PostFilterPlugin, r *fwk.PostFilterResult, s *fwk.Status, pr *event.PluginResult) bool {
			if r != nil && r.NominatingInfo != nil {
				pr.Nominated = r.NominatingInfo.NominatedNodeName
			}
			res = r
			if s.IsSuccess() || s.Code() == fwk.Error || s.Code() == fwk.UnschedulableAndUnresolvable {
				status = s
				return true
			}
			status.AppendReason(s.Message())
			return false
		}); timeout != nil {
		return nil, timeout
	}
	return res, status
}

// preScore runs PreScore; plugins that Skip are not called at Score.
func (c *cycle) preScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	var status *fwk.Status
	skip := sets.New[string]()
	if timeout := runPoint(ctx, c, state, "PreScore", "", slices.All(c.p.preScore),
		statusOnly(func(ctx context.Context, state fwk.CycleState, pl fwk.PreScorePlugin) *fwk.Status {
			return pl.PreScore(ctx, state, pod, nodes)
		}),
		func(pl fwk.PreScorePlugin, _ struct{}, s *fwk.Status, _ *event.PluginResult) bool {
			switch {
			case s.IsSkip():
				skip.Insert(pl.Name())
			case !s.IsSuccess():
				// A rejection too is an error here, as upstream.
				status = pluginError("PreScore", pl.Name(), s)
				return true
			}
			return false
		}); timeout != nil {
		return timeout
	}
	state.SetSkipScorePlugins(skip)
	return status
}

// score runs Score on every node (in parallel), then NormalizeScore and the
// weights, and returns each node's total.
func (c *cycle) score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	skip := state.GetSkipScorePlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.score), func(pl fwk.ScorePlugin) bool { return skip.Has(pl.Name()) })
	begun := time.Now()
	described := make([]event.ScorePlugin, len(plugins))
	for j, pl := range plugins {
		described[j] = event.ScorePlugin{Name: pl.Name(), Weight: c.p.weights[pl.Name()]}
	}
	// The matrix is kept by column, row i's cell for plugin j at i*k+j.
	res := event.NewScoreResults(described, len(nodes))
	k := len(plugins)
	var failed atomic.Pointer[fwk.Status]
	var normalizing atomic.Bool
	timeout := c.bounded(ctx, "Score", state, func(ctx context.Context, state fwk.CycleState) {
		// abandon is bounded's context; ctx ends the pass early as well,
		// once a plugin fails.
		abandon := ctx
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		scoreNode := func(i int) {
			ni := nodes[i]
			name := ni.Node().Name
			res.NodeNames[i] = name
			raw, nanos := res.Raw[i*k:(i+1)*k], res.PluginNanos[i*k:(i+1)*k]
			begun := clock()
			for j, pl := range plugins {
				if s := abandoned(abandon); s != nil {
					failed.CompareAndSwap(nil, s)
					cancel()
					return
				}
				s, end := callFrom(begun, pl.Name(), func() *fwk.Status {
					var s *fwk.Status
					raw[j], s = pl.Score(ctx, state, pod, ni)
					return s
				})
				nanos[j], begun = end-begun, end
				if !s.IsSuccess() {
					failed.CompareAndSwap(nil, fwk.AsStatus(fmt.Errorf("running Score plugin %q on node %s: %w", pl.Name(), name, s.AsError())).WithPlugin(pl.Name()))
					cancel()
					return
				}
			}
		}
		c.p.fw.Parallelizer().Until(ctx, len(nodes), scoreNode, "Score")
		if failed.Load() != nil {
			return
		}
		normalizing.Store(true)
		list := make(fwk.NodeScoreList, len(nodes))
		for j, pl := range plugins {
			if s := abandoned(abandon); s != nil {
				failed.CompareAndSwap(nil, s)
				return
			}
			c.plugin.Store(pl.Name())
			if s := c.normalize(ctx, state, pod, pl, j, res, list); s != nil {
				failed.CompareAndSwap(nil, s)
				return
			}
		}
	})
	if timeout != nil {
		// The rows are the abandoned goroutine's: nothing to show.
		return nil, timeout
	}
	status := failed.Load()
	if status != nil {
		for j := range res.Plugins {
			if p := &res.Plugins[j]; p.Name == status.Plugin() {
				p.Code, p.Reason = int(status.Code()), status.Message()
			}
		}
		// Show only what ran: nodes not reached have no name, and there
		// are no normalized scores when Score itself failed.
		if !normalizing.Load() {
			res.Normalized = nil
		}
	}
	res.Nanos = time.Since(begun).Nanoseconds()
	c.emit(event.Event{Kind: event.KindScore, Score: res})
	if status != nil {
		return nil, status
	}
	totals := c.scratch.totalsFor(len(nodes))
	for i, name := range res.NodeNames {
		totals[i] = fwk.NodePluginScores{Name: name, TotalScore: res.Total(i)}
	}
	return totals, nil
}

// normalize runs plugin j's NormalizeScore over every node's raw score into
// its normalized column; the weights apply when the totals are read. list
// is scratch space, one entry per row.
func (c *cycle) normalize(ctx context.Context, state fwk.CycleState, pod *v1.Pod, pl fwk.ScorePlugin, j int, res *event.ScoreResults, list fwk.NodeScoreList) *fwk.Status {
	k, d := len(res.Plugins), &res.Plugins[j]
	for i, name := range res.NodeNames {
		list[i] = fwk.NodeScore{Name: name, Score: res.Raw[i*k+j]}
	}
	if ext := pl.ScoreExtensions(); ext != nil {
		s, nanos := call(pl.Name(), func() *fwk.Status { return ext.NormalizeScore(ctx, state, pod, list) })
		d.NormalizeNanos = nanos
		if !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running NormalizeScore of %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	for i, name := range res.NodeNames {
		score := list[i].Score
		if score < fwk.MinNodeScore || score > fwk.MaxNodeScore {
			return fwk.AsStatus(fmt.Errorf("plugin %q returned score %d for node %s, outside [%d, %d] after normalizing",
				pl.Name(), score, name, fwk.MinNodeScore, fwk.MaxNodeScore)).WithPlugin(pl.Name())
		}
		res.Normalized[i*k+j] = score
	}
	return nil
}

// reserve runs Reserve in order until one fails.
func (c *cycle) reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	return inOrder(ctx, c, state, "Reserve", node, slices.All(c.p.reserve), (*fwk.Status).IsSuccess,
		func(ctx context.Context, state fwk.CycleState, pl fwk.ReservePlugin) *fwk.Status {
			return pl.Reserve(ctx, state, pod, node)
		})
}

// unreserve runs Unreserve of every Reserve plugin, in reverse order.
func (c *cycle) unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	inOrder(ctx, c, state, "Unreserve", node, slices.Backward(c.p.reserve), always,
		func(ctx context.Context, state fwk.CycleState, pl fwk.ReservePlugin) *fwk.Status {
			pl.Unreserve(ctx, state, pod, node)
			return nil
		})
}

// maxPermitWait caps what a Permit plugin may ask for, as upstream does.
const maxPermitWait = 15 * time.Minute

// permit runs Permit; any rejection ends it, any Wait makes the pod wait.
func (c *cycle) permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) (*fwk.Status, map[string]time.Duration) {
	var status *fwk.Status
	waits := map[string]time.Duration{}
	if timeout := runPoint(ctx, c, state, "Permit", node, slices.All(c.p.permit),
		func(ctx context.Context, state fwk.CycleState, pl fwk.PermitPlugin) (time.Duration, *fwk.Status) {
			s, wait := pl.Permit(ctx, state, pod, node)
			return wait, s
		},
		func(pl fwk.PermitPlugin, wait time.Duration, s *fwk.Status, r *event.PluginResult) bool {
			switch {
			case s.IsSuccess():
			case s.IsWait():
				wait = min(wait, maxPermitWait)
				r.TimeoutNanos = wait.Nanoseconds()
				waits[pl.Name()] = wait
				status = s
			default:
				status = rejectedOrError("Permit", pl.Name(), s)
				return true
			}
			return false
		}); timeout != nil {
		return timeout, nil
	}
	return status, waits
}

// preBindPreFlight asks each PreBind plugin whether it has work to do for
// the pod: Success if one has, Skip if none has. Plugins that Skip are not
// called at PreBind.
func (c *cycle) preBindPreFlight(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	skip, parallel := sets.New[string](), sets.New[string]()
	result := fwk.NewStatus(fwk.Skip)
	status := inOrder(ctx, c, state, "PreBindPreFlight", node, slices.All(c.p.preBind), func(s *fwk.Status) bool { return s.IsSuccess() || s.IsSkip() },
		func(ctx context.Context, state fwk.CycleState, pl fwk.PreBindPlugin) *fwk.Status {
			r, s := pl.PreBindPreFlight(ctx, state, pod, node)
			if r != nil && r.AllowParallel {
				parallel.Insert(pl.Name())
			}
			switch {
			case s.IsSuccess():
				result = nil
			case s.IsSkip():
				skip.Insert(pl.Name())
			case s.Code() != fwk.Error:
				return fwk.AsStatus(fmt.Errorf("PreBindPreFlight %s returned %q, which is unsupported. It is supposed to return Success, Skip, or Error status", pl.Name(), s.Code()))
			}
			return s
		})
	if status != nil {
		return status
	}
	state.SetSkipPreBindPlugins(skip)
	state.SetParallelPreBindPlugins(parallel)
	return result
}

// preBind runs PreBind in order until one fails, leaving out the plugins
// that skipped at PreBindPreFlight.
func (c *cycle) preBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	skip := state.GetSkipPreBindPlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.preBind), func(pl fwk.PreBindPlugin) bool { return skip.Has(pl.Name()) })
	return inOrder(ctx, c, state, "PreBind", node, slices.All(plugins), (*fwk.Status).IsSuccess,
		func(ctx context.Context, state fwk.CycleState, pl fwk.PreBindPlugin) *fwk.Status {
			return pl.PreBind(ctx, state, pod, node)
		})
}

// bind runs Bind plugins until one does not Skip.
func (c *cycle) bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	// Unless a plugin takes the pod, this is the point's status.
	status := fwk.NewStatus(fwk.Error, "every Bind plugin skipped the pod")
	if timeout := runPoint(ctx, c, state, "Bind", node, slices.All(c.p.bind),
		statusOnly(func(ctx context.Context, state fwk.CycleState, pl fwk.BindPlugin) *fwk.Status {
			return pl.Bind(ctx, state, pod, node)
		}),
		func(pl fwk.BindPlugin, _ struct{}, s *fwk.Status, _ *event.PluginResult) bool {
			switch {
			case s.IsSkip():
				return false
			case s.IsSuccess():
				status = nil
			default:
				status = rejectedOrError("Bind", pl.Name(), s)
			}
			return true
		}); timeout != nil {
		return timeout
	}
	return status
}

// postBind tells every PostBind plugin that the pod is bound.
func (c *cycle) postBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	inOrder(ctx, c, state, "PostBind", node, slices.All(c.p.postBind), always,
		func(ctx context.Context, state fwk.CycleState, pl fwk.PostBindPlugin) *fwk.Status {
			pl.PostBind(ctx, state, pod, node)
			return nil
		})
}

func always(*fwk.Status) bool { return true }

// inOrder runs an extension point whose plugins share one rule: a call
// either passes or stops the point, and the point's status is then that of
// the call (see rejectedOrError).
func inOrder[T fwk.Plugin](ctx context.Context, c *cycle, state fwk.CycleState, point, node string, plugins iter.Seq2[int, T], passes func(*fwk.Status) bool, run func(context.Context, fwk.CycleState, T) *fwk.Status) *fwk.Status {
	var status *fwk.Status
	if timeout := runPoint(ctx, c, state, point, node, plugins, statusOnly(run),
		func(pl T, _ struct{}, s *fwk.Status, _ *event.PluginResult) bool {
			if passes(s) {
				return false
			}
			status = rejectedOrError(point, pl.Name(), s)
			return true
		}); timeout != nil {
		return timeout
	}
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
