package minisched

// Explanations: why a pending pod fits no node. The real PreFilter and
// Filter plugins of the pod's profile run on a snapshot of their own, every
// Filter plugin on every node (the cycle stops at the first that fails; an
// explanation wants them all), and each failure is read out of the
// plugin's own verdict, with upstream's helpers for the details.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/scheme"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedulingapi "k8s.io/kubernetes/pkg/apis/scheduling"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/explain"
)

// ErrNoNode is ExplainNode's answer for a node the scheduler does not have.
var ErrNoNode = errors.New("the scheduler has no such node")

// ErrNotPending refuses to explain a pod that is bound: it fits where it is.
var ErrNotPending = errors.New("the pod is not pending")

// Explain says why the pod fits no node, node by node. It changes nothing:
// the plugins run on a snapshot and a framework of the explanation's own,
// beside the scheduling loop. A pod that is gone is an apiserver NotFound.
func (s *Scheduler) Explain(ctx context.Context, namespace, name string) (*explain.Explanation, error) {
	var e *explain.Explanation
	err := s.explaining(ctx, namespace, name, func(x *explanation) { e = x.all(ctx) })
	return e, err
}

// ExplainNode says why the pod does not fit one node, and tries the changes
// that would make it fit there (see explain.Trial), for any node: the
// explanation tries only the closest. No failures: it fits there now.
func (s *Scheduler) ExplainNode(ctx context.Context, namespace, name, node string) (*explain.Node, error) {
	var n *explain.Node
	var err error
	if err2 := s.explaining(ctx, namespace, name, func(x *explanation) { n, err = x.one(ctx, node) }); err2 != nil {
		return nil, err2
	}
	return n, err
}

// explanation is one pod's explanation under way: its profile's plugins,
// the snapshot, and the cycle state PreFilter wrote.
type explanation struct {
	*reading
	e     *explain.Explanation
	own   *profile
	snap  *internalcache.Snapshot
	pre   *fwk.PreFilterResult
	state *framework.CycleState
	// rejected is PreFilter's verdict when it turns the pod away whatever
	// the node.
	rejected *explain.Failure
}

// explaining takes the pod's profile's explainer, a snapshot and a PreFilter
// run, and hands them to do, one explanation at a time per profile.
func (s *Scheduler) explaining(ctx context.Context, namespace, name string, do func(*explanation)) error {
	pod, err := s.podLister.Pods(namespace).Get(name)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName != "" {
		return fmt.Errorf("%w: it is bound to %s", ErrNotPending, pod.Spec.NodeName)
	}
	// The watch may not have told of a binding this scheduler made: its
	// cache knows the pod's node from Assume on.
	if cached, err := s.cache.GetPod(pod); err == nil && cached.Spec.NodeName != "" {
		if assumed, _ := s.cache.IsAssumedPod(pod); assumed {
			return fmt.Errorf("%w: it is being bound to %s (its binding cycle is under way)", ErrNotPending, cached.Spec.NodeName)
		}
		return fmt.Errorf("%w: it is bound to %s", ErrNotPending, cached.Spec.NodeName)
	}
	p := s.profileOf(pod)
	if p == nil {
		return apierrors.NewBadRequest(fmt.Sprintf("no profile schedules pod %s/%s: its schedulerName is %q, the profiles are %s",
			namespace, name, pod.Spec.SchedulerName, strings.Join(s.Profiles(), ", ")))
	}
	logger := klog.FromContext(ctx)
	x := &p.explainer
	x.once.Do(func() { x.build(ctx, s, p) })
	if x.err != nil {
		return x.err
	}
	// They share the snapshot.
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := s.cache.UpdateSnapshot(logger, x.snap); err != nil {
		return fmt.Errorf("taking a snapshot of the nodes: %w", err)
	}
	nodes, err := x.snap.NodeInfos().List()
	if err != nil {
		return fmt.Errorf("listing the snapshot's nodes: %w", err)
	}
	state := framework.NewCycleState()
	pre, status, _ := x.p.fw.RunPreFilterPlugins(ctx, state, pod)
	ex := &explanation{reading: newReading(s, logger, pod, state, nodes), own: x.p, snap: x.snap, pre: pre, state: state,
		e: &explain.Explanation{Namespace: namespace, Pod: name, Profile: p.name, Nodes: len(nodes), PodGroup: podGroupOf(x.snap, pod)}}
	if status.IsRejected() || status.Code() == fwk.Error {
		ex.rejected = &explain.Failure{Plugin: status.Plugin(), Code: status.Code().String(), Reason: status.Message(), Size: 1}
	}
	do(ex)
	return nil
}

// all explains every node: the closest tried, the rest grouped, and
// whether preemption would help.
func (x *explanation) all(ctx context.Context) *explain.Explanation {
	e := x.e
	if x.rejected != nil {
		e.PodReason = x.rejected
		explain.Assemble(e, nil, nil, nil)
		return e
	}
	var failing []explain.Node
	var fits []string
	// The status the cycle would have recorded for each node that fails:
	// its first failing plugin's, as the cycle stops there. Preemption tries
	// the nodes whose status is Unschedulable (not ...AndUnresolvable).
	statuses := framework.NewDefaultNodeToStatus()
	for _, ni := range x.nodes {
		fs, first := x.failures(ctx, ni)
		if len(fs) == 0 {
			fits = append(fits, ni.Node().Name)
			continue
		}
		if first != nil {
			statuses.Set(ni.Node().Name, first)
		}
		failing = append(failing, explain.Node{Name: ni.Node().Name, Failures: fs})
	}
	if len(fits) == 0 {
		e.Preemption = preemptionDryRun(ctx, x.own, x.state, x.pod, x.nodes, statuses)
	}
	explain.Assemble(e, failing, fits, func(n *explain.Node) *explain.Trial {
		if !n.Tryable() {
			return nil
		}
		ni, err := x.snap.Get(n.Name)
		if err != nil {
			return nil
		}
		return x.try(ctx, x.own, ni, n.Failures)
	})
	return e
}

// podGroupOf says what the snapshot holds of the pod's group
// (GenericWorkload); nil for a pod alone.
func podGroupOf(snap *internalcache.Snapshot, pod *v1.Pod) *explain.PodGroup {
	sg := pod.Spec.SchedulingGroup
	if sg == nil || sg.PodGroupName == nil {
		return nil
	}
	g := &explain.PodGroup{Namespace: pod.Namespace, Name: *sg.PodGroupName}
	pg, err := snap.PodGroups().Get(g.Namespace, g.Name)
	if err != nil {
		g.Missing = true
		return g
	}
	if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
		g.MinCount = gang.MinCount
	}
	if state, err := snap.PodGroupStates().Get(g.Namespace, g.Name); err == nil {
		g.Pods, g.Scheduled = state.AllPodsCount(), state.ScheduledPodsCount()
	}
	if c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingapi.PodGroupInitiallyScheduled); c != nil && c.Status == metav1.ConditionFalse {
		g.TurnedAway = c.Message
	}
	return g
}

// one explains one node, and tries its changes.
func (x *explanation) one(ctx context.Context, name string) (*explain.Node, error) {
	ni, err := x.snap.Get(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoNode, name)
	}
	n := &explain.Node{Name: name}
	if x.rejected != nil {
		n.Failures = []explain.Failure{*x.rejected}
		return n, nil
	}
	n.Failures, _ = x.failures(ctx, ni)
	if n.Tryable() {
		n.Tried = x.try(ctx, x.own, ni, n.Failures)
	}
	return n, nil
}

// failures runs every Filter plugin on the node and reads each failure;
// first is the status of the first that failed, where a cycle stops.
func (x *explanation) failures(ctx context.Context, ni fwk.NodeInfo) ([]explain.Failure, *fwk.Status) {
	node := ni.Node()
	if x.pre != nil && !x.pre.AllNodes() && !x.pre.NodeNames.Has(node.Name) {
		return []explain.Failure{{Plugin: "PreFilter", Code: fwk.UnschedulableAndUnresolvable.String(),
			Reason: "node(s) didn't satisfy the plugins that narrowed the nodes at PreFilter", Size: 1}}, nil
	}
	var fs []explain.Failure
	var first *fwk.Status
	skip := x.state.GetSkipFilterPlugins()
	for _, pl := range x.own.filter {
		if skip.Has(pl.Name()) {
			continue
		}
		st := pl.Filter(ctx, x.state, x.pod, ni)
		if st.IsSuccess() {
			continue
		}
		if first == nil {
			first = st
		}
		fs = append(fs, x.failure(pl.Name(), st, ni))
	}
	return fs, first
}

// try applies a node's changes on copies of the pod and the node, and runs
// the real PreFilter and Filter plugins again there: the proof a suggestion
// shows, or what still fails. Pods a change takes away leave as preemption
// takes them away in its dry run: from the node's copy, and from the
// PreFilter plugins' state through their RemovePod extensions.
func (r *reading) try(ctx context.Context, own *profile, ni fwk.NodeInfo, fs []explain.Failure) *explain.Trial {
	pod := r.pod.DeepCopy()
	node := ni.Node().DeepCopy()
	ni = ni.Snapshot()
	gone := map[string]bool{}
	for _, f := range fs {
		c := f.Change
		switch c.Kind {
		case "reduce-request":
			for name, total := range c.Requests {
				reduce(pod, v1.ResourceName(name), total)
			}
		case "add-toleration":
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: c.Key, Operator: v1.TolerationOpEqual, Value: c.Value, Effect: v1.TaintEffect(c.Effect)})
		case "add-label":
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			node.Labels[c.Key] = c.Value
		case "uncordon":
			node.Spec.Unschedulable = false
		case "free-port", "evict":
			for _, p := range c.Pods {
				gone[p] = true
			}
		}
	}
	ni.SetNode(node)
	state := framework.NewCycleState()
	if _, status, _ := own.fw.RunPreFilterPlugins(ctx, state, pod); !status.IsSuccess() {
		return &explain.Trial{Failures: []explain.Failure{{Plugin: status.Plugin(), Code: status.Code().String(), Reason: status.Message(), Size: 1}}}
	}
	if len(gone) > 0 {
		if st := r.remove(ctx, own, state, pod, ni, gone); !st.IsSuccess() {
			return &explain.Trial{Failures: []explain.Failure{{Plugin: st.Plugin(), Code: st.Code().String(), Reason: st.Message(), Size: 1}}}
		}
	}
	skip := state.GetSkipFilterPlugins()
	t := &explain.Trial{Fits: true}
	for _, pl := range own.filter {
		if skip.Has(pl.Name()) {
			continue
		}
		if st := pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			t.Fits = false
			t.Failures = append(t.Failures, explain.Failure{Plugin: pl.Name(), Code: st.Code().String(), Reason: st.Message(), Size: 1})
		}
	}
	return t
}

// remove takes pods away, wherever they run: from target (a copy) when
// they run there, and from the state of the PreFilter plugins, which count
// pods on other nodes too (spread, inter-pod affinity).
func (r *reading) remove(ctx context.Context, own *profile, state fwk.CycleState, pod *v1.Pod, target fwk.NodeInfo, gone map[string]bool) *fwk.Status {
	for _, other := range r.nodes {
		ni := other
		if other.Node().Name == target.Node().Name {
			ni = target
		}
		for _, pi := range other.GetPods() {
			if !gone[key(pi.GetPod())] {
				continue
			}
			if ni == target {
				if err := target.RemovePod(r.logger, pi.GetPod()); err != nil {
					return fwk.AsStatus(fmt.Errorf("taking %s off the node's copy: %w", key(pi.GetPod()), err))
				}
			}
			if st := own.fw.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, ni); !st.IsSuccess() {
				return st
			}
		}
	}
	return nil
}

// reduce lowers the pod's request of a resource to total, taking what is
// too much from the containers that ask the most.
func reduce(pod *v1.Pod, name v1.ResourceName, total string) {
	want, err := resource.ParseQuantity(total)
	if err != nil {
		return
	}
	var sum resource.Quantity
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[name]; ok {
			sum.Add(q)
		}
	}
	excess := sum.DeepCopy()
	excess.Sub(want)
	for excess.Sign() > 0 {
		biggest := -1
		for i, c := range pod.Spec.Containers {
			q, ok := c.Resources.Requests[name]
			if ok && q.Sign() > 0 && (biggest < 0 || q.Cmp(pod.Spec.Containers[biggest].Resources.Requests[name]) > 0) {
				biggest = i
			}
		}
		if biggest < 0 {
			return
		}
		c := &pod.Spec.Containers[biggest]
		q := c.Resources.Requests[name]
		cut := excess.DeepCopy()
		if cut.Cmp(q) > 0 {
			cut = q.DeepCopy()
		}
		q.Sub(cut)
		excess.Sub(cut)
		c.Resources.Requests[name] = q
		if l, ok := c.Resources.Limits[name]; ok && l.Cmp(q) < 0 {
			c.Resources.Limits[name] = q
		}
	}
}

// explainer is a profile's framework for explanations: the same plugins,
// on a snapshot of its own, so that they run beside the scheduling loop
// without touching its snapshot.
type explainer struct {
	once sync.Once
	mu   sync.Mutex
	p    *profile
	snap *internalcache.Snapshot
	err  error
}

// build makes the framework once. Its profile name differs from the
// profile's: some plugins register informer indexers by profile name
// (DynamicResources), and a second set of the same name would clash.
func (x *explainer) build(ctx context.Context, s *Scheduler, p *profile) {
	cfg := p.cfg.DeepCopy()
	cfg.SchedulerName = p.name + "/explain"
	x.snap = internalcache.NewEmptySnapshot()
	x.p, x.err = newProfile(ctx, cfg, s.opts.OutOfTree, frameworkDeps{
		client: s.client, restConfig: s.opts.RESTConfig, informerFactory: s.factory, snapshot: x.snap, cache: s.cache,
		recorder: s.events.NewRecorder(scheme.Scheme, p.name), parallelism: 1, draManager: s.dra.sharedManager(),
		shared: []frameworkruntime.Option{
			frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
			frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		},
	})
	if x.err != nil {
		x.err = fmt.Errorf("building the profile's plugins for explanations: %w", x.err)
		return
	}
	// Preemption's dry run counts the pods nominated to a node, as the
	// cycle's does.
	x.p.fw.SetPodNominator(s.queue)
}

// preemptionDryRun asks the profile's DefaultPreemption, as its PostFilter
// would, whether evicting pods of lower priority would make room, without
// evicting any: upstream's own eligibility check, dry run over its
// shortlist of the nodes preemption could help on, and choice of candidate.
func preemptionDryRun(ctx context.Context, own *profile, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, statuses *framework.NodeToStatus) *explain.Preemption {
	var ev *preemption.Evaluator
	for _, pl := range own.postFilter {
		if dp, ok := pl.(*defaultpreemption.DefaultPreemption); ok {
			ev = dp.Evaluator
		}
	}
	if ev == nil {
		return nil
	}
	nominated := statuses.Get(pod.Status.NominatedNodeName)
	if ok, msg := ev.PodEligibleToPreemptOthers(ctx, pod, nominated); !ok {
		return &explain.Preemption{Reason: msg}
	}
	// A node without a pod of lower priority gives no candidate: leaving
	// it out changes no answer (the shortlist counts candidates, in order)
	// and spares cloning the cycle state for it.
	var potential []fwk.NodeInfo
	helpable := 0
	priority := corev1helpers.PodPriority(pod)
	for _, ni := range nodes {
		if statuses.Get(ni.Node().Name).Code() != fwk.Unschedulable {
			continue
		}
		helpable++
		if slices.ContainsFunc(ni.GetPods(), func(pi fwk.PodInfo) bool { return corev1helpers.PodPriority(pi.GetPod()) < priority }) {
			potential = append(potential, ni)
		}
	}
	switch {
	case helpable == 0:
		return &explain.Preemption{Reason: "no node turns the pod away for a reason evicting pods could change"}
	case len(potential) == 0:
		return &explain.Preemption{Reason: fmt.Sprintf("no pod of lower priority runs on the %d nodes where evicting could help", helpable)}
	}
	pdbs, err := ev.PdbLister.List(k8slabels.Everything())
	if err != nil {
		return &explain.Preemption{Reason: "listing PodDisruptionBudgets: " + err.Error()}
	}
	// As many candidates as upstream shortlists, from the first node
	// rather than a random one, so that the answer repeats.
	_, shortlist := ev.GetOffsetAndNumCandidates(int32(helpable))
	candidates, _, err := ev.DryRunPreemption(ctx, state, pod, potential, pdbs, 0, shortlist)
	if err != nil {
		return &explain.Preemption{Reason: "the dry run failed: " + err.Error()}
	}
	if len(candidates) == 0 {
		return &explain.Preemption{Reason: "evicting pods of lower priority would make room on no node"}
	}
	best := ev.SelectCandidate(ctx, candidates)
	p := &explain.Preemption{Helps: true, Node: best.Name(), Candidates: len(candidates)}
	for _, v := range best.Victims().Pods {
		p.Victims = append(p.Victims, v.Namespace+"/"+v.Name)
	}
	return p
}
