package minisched

// PreFilter, Filter (with the nominated pods) and PostFilter.

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

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
	// batch marks a pass of opportunistic batching's (event.BatchRecheck,
	// event.BatchHint); withoutNominated leaves nominated pods out, as
	// upstream's RunFilterPlugins, which the batch's recheck calls.
	batch            string
	withoutNominated bool
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
			withNominated, nominatedState, nodeInfo, err := false, state, ni, error(nil)
			if !r.withoutNominated {
				withNominated, nominatedState, nodeInfo, err = c.addNominatedPods(ctx, state, r.pod, ni)
			}
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
	evaluated.Nanos, evaluated.NominatedNode, evaluated.Batch = time.Since(begun).Nanoseconds(), r.nominatedNode, r.batch
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

// filterNominatedNode runs Filter on the pod's nominated node alone, or,
// for a pod with none, on the node opportunistic batching hinted, as
// upstream's evaluateNominatedNode. The diagnosis is passed by value, as
// upstream does: the statuses it records are shared, plugins it blames as
// Pending are not.
func (s *Scheduler) filterNominatedNode(ctx context.Context, c *cycle, state fwk.CycleState, pod *v1.Pod, hint string, d framework.Diagnosis) []fwk.NodeInfo {
	name, batch := pod.Status.NominatedNodeName, ""
	if name == "" {
		name, batch = hint, event.BatchHint
	}
	if name == "" {
		return nil
	}
	ni, err := s.snapshot.Get(name)
	if err != nil {
		c.logger.V(2).Info("The nominated node is not in the snapshot", "node", name, "err", err)
		return nil
	}
	feasible, _, status := c.filter(ctx, filterRun{
		state: state, pod: pod, nodes: []fwk.NodeInfo{ni}, diagnosis: &d, numToFind: 1, nominatedNode: true, batch: batch,
	})
	if !status.IsSuccess() {
		c.logger.Error(status.AsError(), "Evaluating the nominated node", "node", name)
		return nil
	}
	if feasible, status = c.extenderFilter(pod, feasible, &d); !status.IsSuccess() {
		c.logger.Error(status.AsError(), "Evaluating the nominated node", "node", name)
		return nil
	}
	return feasible
}

// narrow keeps the nodes PreFilter named, when it named any; the others
// are unschedulable because of the plugins that narrowed them.
func (s *Scheduler) narrow(nodes []fwk.NodeInfo, res *fwk.PreFilterResult, d *framework.Diagnosis) []fwk.NodeInfo {
	if res.AllNodes() {
		return nodes
	}
	kept := make([]fwk.NodeInfo, 0, len(res.NodeNames))
	for _, n := range nodes {
		if res.NodeNames.Has(n.Node().Name) {
			kept = append(kept, n)
		}
	}
	d.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
		fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(d.UnschedulablePlugins))))
	return kept
}

// numToFind is how many feasible nodes are enough, as in kube-scheduler:
// all of them below 100 nodes, then a share that shrinks as the cluster
// grows; one, when there is no Score plugin to choose between them.
func (p *profile) numToFind(all int) int {
	const minFeasible, minPercentage = 100, 5
	if len(p.score) == 0 && (p.extenders == nil || !p.extenders.filtering() && !p.extenders.scoring()) {
		return min(all, 1)
	}
	if all < minFeasible {
		return all
	}
	percentage := int(p.percentageOfNodesToScore)
	if percentage == 0 {
		percentage = max(50-all/125, minPercentage)
	}
	return max(all*percentage/100, minFeasible)
}
