// Package minisched is a small but real Kubernetes scheduler. It runs the
// upstream scheduling framework's plugins through its own loop, so that every
// plugin call, every queue transition and every cycle can be seen; the queue
// is its own (package queue), the node cache is upstream's.
//
// Follow one pod in scheduleOne: it names every extension point in the order
// kube-scheduler runs them, from Pop to PostBind. The points themselves run
// in files named for them: filter.go (PreFilter, Filter, PostFilter),
// score.go (PreScore, Score, NormalizeScore), binding.go (Reserve to
// PostBind), with call.go timing every call.
//
// This file is over 400 lines because scheduleOne and bindingCycle are kept
// whole, side by side, as the one walk a reader follows; the helpers they
// call live with their points.
package minisched

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	apidispatcher "k8s.io/kubernetes/pkg/scheduler/backend/api_dispatcher"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	apicalls "k8s.io/kubernetes/pkg/scheduler/framework/api_calls"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"minisched/event"
	"minisched/minisched/queue"
	"minisched/seen"
)

// Options configure a Scheduler.
type Options struct {
	Client     clientset.Interface
	RESTConfig *rest.Config
	// Config is the KubeSchedulerConfiguration; its single profile says
	// which plugins run and which pods (by schedulerName) this scheduler takes.
	Config *config.KubeSchedulerConfiguration
	// OutOfTree adds plugins of the user's own (see WithPlugin).
	OutOfTree frameworkruntime.Registry
	// Observer receives every event. It must not block.
	Observer event.Observer
	// Gate pauses and steps the loop. Nil runs freely.
	Gate *Gate
	// Seed, when not zero, makes runs repeatable: Filter checks the nodes
	// one at a time in order, as kube-scheduler does with parallelism 1,
	// so which nodes count as feasible, and so which equally scored node
	// wins, never depends on which goroutine finished first. Its value
	// does not matter.
	Seed int64
	// CycleTimeout bounds one extension point of the scheduling cycle
	// (PreFilter to Permit); a plugin that hangs longer fails the pod's
	// cycle with an error. Zero means 30s. Upstream has no such bound: its
	// plugins there are not meant to wait.
	CycleTimeout time.Duration
	// BindingTimeout bounds one extension point of the binding cycle
	// (PreBindPreFlight, PreBind, Bind, PostBind), where upstream's own
	// plugins wait: VolumeBinding up to its bindTimeoutSeconds, and
	// DynamicResources up to its bindingTimeout (600s each by default).
	// Zero means the longest of the profile's such waits plus a minute,
	// which never cuts one short.
	BindingTimeout time.Duration
	// Cycles numbers the scheduling cycles. A Service shares one counter
	// across restarts so that cycle ids stay unique; nil starts at 1.
	Cycles *atomic.Int64
	// MaxInUnschedulable and UnschedulableFlushInterval tune the queue's
	// periodic flush; zero keeps kube-scheduler's 5m and 30s.
	MaxInUnschedulable         time.Duration
	UnschedulableFlushInterval time.Duration
	// Gates set SchedulerGates for this scheduler alone; a gate not here
	// has the process's value.
	Gates map[featuregate.Feature]bool
}

// errNoNodesAvailable is upstream's ErrNoNodesAvailable, word for word.
var errNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Scheduler watches pods and nodes through informers and schedules the pods
// of its profiles one at a time: a pod goes through the profile its
// spec.schedulerName names, as under kube-scheduler.
type Scheduler struct {
	opts Options
	// catalog describes the plugins a configuration may enable (Catalog).
	catalog struct {
		once sync.Once
		list []PluginInfo
		err  error
	}
	client clientset.Interface
	// profiles are the configured frameworks by scheduler name, and order
	// lists them as the configuration does. They share one queue (and its
	// QueueSort), the cache, the waiting pods and the pods in PreBind.
	profiles map[string]*profile
	order    []*profile
	// extenders are the configuration's, shared by the profiles.
	extenders *extenders
	queue     *queue.Queue
	cache     internalcache.Cache
	snapshot  *internalcache.Snapshot
	factory   informers.SharedInformerFactory
	// dynFactory watches the custom resources out-of-tree plugins
	// registered events for; nil when none did.
	dynFactory dynamicinformer.DynamicSharedInformerFactory
	podLister  corelisters.PodLister
	observer   event.Observer
	logger     klog.Logger
	gate       *Gate
	events     events.EventBroadcaster
	dra        *dra
	// dispatcher sends the API calls when SchedulerAsyncAPICalls is on
	// (apicalls.go); nil otherwise, as upstream's.
	dispatcher *apidispatcher.APIDispatcher
	apiCacher  fwk.APICacher

	cycles             *atomic.Int64
	synced             atomic.Bool
	nextStartNodeIndex int
	bindings           sync.WaitGroup
	// binding counts the binding cycles under way: the queue forgets a pod
	// after WaitOnPermit, before it is bound.
	binding atomic.Int64
	seen    seen.Versions
	// scratch holds Filter's and Score's working tables between cycles.
	scratch scratch
	// nominateBeforeBinding is the NominatedNodeNameForExpectation gate,
	// batching the OpportunisticBatching gate.
	nominateBeforeBinding, batching bool
	// pops counts the pods popped, as upstream's scheduling cycles.
	pops int64
}

// New builds a scheduler; Run starts it.
func New(ctx context.Context, opts Options) (_ *Scheduler, err error) {
	if opts.Config == nil || len(opts.Config.Profiles) == 0 {
		return nil, errors.New("minisched needs a configuration with a profile")
	}
	if opts.Observer == nil {
		opts.Observer = event.Discard
	}
	if opts.Gate == nil {
		opts.Gate = NewGate(false, nil)
	}
	if opts.Cycles == nil {
		opts.Cycles = &atomic.Int64{}
	}
	if opts.CycleTimeout == 0 {
		opts.CycleTimeout = 30 * time.Second
	}
	if opts.BindingTimeout == 0 {
		for i := range opts.Config.Profiles {
			opts.BindingTimeout = max(opts.BindingTimeout, bindingWait(&opts.Config.Profiles[i])+time.Minute)
		}
	}
	// The upstream cache and framework report to kube-scheduler's metrics.
	metrics.Register()
	s := &Scheduler{
		opts:     opts,
		client:   opts.Client,
		observer: opts.Observer,
		logger:   klog.FromContext(ctx),
		gate:     opts.Gate,
		cycles:   opts.Cycles,
		snapshot: internalcache.NewEmptySnapshot(),

		nominateBeforeBinding: utilfeature.DefaultFeatureGate.Enabled(features.NominatedNodeNameForExpectation),
		batching:              opts.enabled(features.OpportunisticBatching),
		// The upstream factory: its pod informer skips finished pods.
		factory: kubescheduler.NewInformerFactory(opts.Client, 0, nil),
	}
	s.podLister = s.factory.Core().V1().Pods().Lister()
	if opts.enabled(features.SchedulerAsyncAPICalls) {
		s.dispatcher = apidispatcher.New(opts.Client, int(opts.Config.Parallelism), apicalls.Relevances)
	}
	s.cache = internalcache.New(ctx, s.dispatcher,
		utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))
	s.dra, err = newDRA(ctx, opts.Client, s.factory)
	if err != nil {
		return nil, err
	}
	s.events = events.NewBroadcaster(&events.EventSinkImpl{Interface: opts.Client.EventsV1()})
	// The broadcaster's goroutine runs from here: a scheduler New does not
	// return never runs, and must not leave it behind.
	defer func() {
		if err != nil {
			s.events.Shutdown()
		}
	}()
	var profiles []config.KubeSchedulerProfile
	if s.extenders, profiles, err = newExtenders(opts.Config, opts.Seed); err != nil {
		return nil, err
	}
	deps := frameworkDeps{
		client:          opts.Client,
		restConfig:      opts.RESTConfig,
		informerFactory: s.factory,
		snapshot:        s.snapshot,
		cache:           s.cache,
		parallelism:     int(opts.Config.Parallelism),
		draManager:      s.dra.sharedManager(),
		// One map each for every profile, as upstream: a pod waits at
		// Permit, or binds, whichever profile placed it.
		shared: []frameworkruntime.Option{
			frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
			frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
			// DefaultPreemption asks them (ProcessPreemption), and the
			// framework queues the pods they rejected on any event.
			frameworkruntime.WithExtenders(s.extenders.list),
			frameworkruntime.WithAPIDispatcher(s.dispatcher),
		},
	}
	s.profiles = map[string]*profile{}
	hooks := map[string]queue.Profile{}
	// registered is every profile's events, for the informers to watch.
	registered := map[string][]fwk.ClusterEventWithHint{}
	for i := range profiles {
		cfg := &profiles[i]
		deps.recorder = &victimReporter{EventRecorderLogger: s.events.NewRecorder(scheme.Scheme, cfg.SchedulerName), observer: opts.Observer}
		p, err := newProfile(ctx, cfg, opts.OutOfTree, deps)
		if err != nil {
			return nil, profileError(opts.Config, cfg, err)
		}
		if cfg.PercentageOfNodesToScore == nil && opts.Config.PercentageOfNodesToScore != nil {
			p.percentageOfNodesToScore = *opts.Config.PercentageOfNodesToScore
		}
		hints, err := p.hints(ctx)
		if err != nil {
			return nil, profileError(opts.Config, cfg, err)
		}
		hooks[p.name] = queue.Profile{PreEnqueue: p.fw.PreEnqueuePlugins(), Hints: hints}
		for plugin, events := range hints {
			registered[plugin] = append(registered[plugin], events...)
		}
		p.extenders = s.extenders
		p.batch = newBatch(p, len(s.extenders.list) > 0)
		s.profiles[p.name] = p
		s.order = append(s.order, p)
	}
	// Validation holds every profile to the same QueueSort, as upstream's.
	first := s.order[0].fw
	s.queue = queue.New(queue.Options{
		Less:           first.QueueSortFunc(),
		SortKey:        sortKey(first),
		Profiles:       hooks,
		PodLister:      s.podLister,
		InitialBackoff: time.Duration(opts.Config.PodInitialBackoffSeconds) * time.Second,
		MaxBackoff:     time.Duration(opts.Config.PodMaxBackoffSeconds) * time.Second,
		Observer:       opts.Observer,
		Logger:         klog.FromContext(ctx),

		MaxInUnschedulable:         opts.MaxInUnschedulable,
		UnschedulableFlushInterval: opts.UnschedulableFlushInterval,
		NoPopFromBackoffQ:          !opts.enabled(features.SchedulerPopFromBackoffQ),
		GenericWorkload:            utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
	})
	if s.dispatcher != nil {
		s.apiCacher = apiCacher{dispatcher: s.dispatcher, cache: s.cache}
	}
	// The queue is the nominator too, as upstream's is.
	for _, p := range s.order {
		p.fw.SetPodNominator(s.queue)
		p.fw.SetPodActivator(s.queue)
		p.fw.SetAPICacher(s.apiCacher)
	}
	if err := s.addEventHandlers(); err != nil {
		return nil, err
	}
	if err := s.addObjectEventHandlers(registered); err != nil {
		return nil, err
	}
	return s, nil
}

// Discard releases what New started, for a scheduler that will not Run
// (a configuration's check).
func (s *Scheduler) Discard() { s.events.Shutdown() }

// Run starts the informers and schedules until ctx ends; then it waits for
// the binding cycles under way.
func (s *Scheduler) Run(ctx context.Context) error {
	s.events.StartRecordingToSink(ctx.Done())
	defer s.events.Shutdown()
	s.factory.Start(ctx.Done())
	defer s.factory.Shutdown()
	for typ, synced := range s.factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	if s.dynFactory != nil {
		// As upstream, scheduling waits for the custom resources too: a
		// resource that is not served (no CRD) holds it, so say so.
		s.dynFactory.Start(ctx.Done())
		defer s.dynFactory.Shutdown()
		synced := make(chan struct{})
		go func() {
			select {
			case <-synced:
			case <-time.After(10 * time.Second):
				klog.FromContext(ctx).Info("Still waiting for the custom resources plugins registered events for: is each one's CRD installed?")
			}
		}()
		for gvr, ok := range s.dynFactory.WaitForCacheSync(ctx.Done()) {
			if !ok {
				close(synced)
				return fmt.Errorf("informer for %v did not sync", gvr)
			}
		}
		close(synced)
	}
	s.synced.Store(true)
	klog.FromContext(ctx).V(2).Info("informers synced")
	if s.dispatcher != nil {
		s.dispatcher.Run(klog.FromContext(ctx))
		// After the binding cycles have ended (deferred calls run last in,
		// first out: Run waits for them before it returns).
		defer s.dispatcher.Close()
	}
	go s.queue.Run(ctx)
	for {
		if err := s.scheduleOne(ctx); err != nil {
			s.bindings.Wait()
			if errors.Is(err, queue.ErrClosed) || errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
	}
}

// BindingCycles is how many binding cycles are under way.
func (s *Scheduler) BindingCycles() int { return int(s.binding.Load()) }

// Queue gives read access to the scheduling queue.
func (s *Scheduler) Queue() *queue.Queue { return s.queue }

// Profiles names the profiles' schedulers, as the configuration orders
// them: the pods each takes.
func (s *Scheduler) Profiles() []string {
	names := make([]string, len(s.order))
	for i, p := range s.order {
		names[i] = p.name
	}
	return names
}

// profileOf is the profile that schedules pod, nil when none does.
func (s *Scheduler) profileOf(pod *v1.Pod) *profile { return s.profiles[pod.Spec.SchedulerName] }

// profileError names the profile a configuration with several had trouble
// with.
func profileError(cfg *config.KubeSchedulerConfiguration, p *config.KubeSchedulerProfile, err error) error {
	if len(cfg.Profiles) == 1 {
		return err
	}
	return fmt.Errorf("profile %s: %w", p.SchedulerName, err)
}

// QueueSort names the profile's QueueSort plugin and says whether the queue
// sends a sort key for activeQ (it knows PrioritySort's).
func (s *Scheduler) QueueSort() (plugin string, ordered bool) {
	return queueSortPlugin(s.order[0].fw), s.queue.Ordered()
}

func queueSortPlugin(f framework.Framework) string {
	if qs := f.ListPlugins().QueueSort.Enabled; len(qs) > 0 {
		return qs[0].Name
	}
	return ""
}

// sortKey is the key of the profile's QueueSort plugin, nil when minisched
// does not know it: only PrioritySort, kube-scheduler's one, has a key.
func sortKey(f framework.Framework) func(fwk.QueuedEntityInfo) string {
	if queueSortPlugin(f) == queuesort.Name {
		return queue.PrioritySortKey
	}
	return nil
}

// scheduleOne takes the next pod through one scheduling cycle and, when a
// node is chosen, starts its binding cycle on a goroutine of its own. It
// follows kube-scheduler's scheduleOnePod (pkg/scheduler/schedule_one.go).
func (s *Scheduler) scheduleOne(ctx context.Context) error {
	// QueueSort ordered the queue; wait for a pod, then for the gate (pause,
	// step), then take the pod.
	if err := s.queue.WaitForPod(); err != nil {
		return err
	}
	if err := s.gate.Acquire(ctx); err != nil {
		return err
	}
	e, err := s.queue.Pop()
	if err != nil {
		return err
	}
	// Pops are counted as upstream's scheduling cycles: a batch serves the
	// very next pod popped only (or a pod group's pods, which share one).
	s.pops++
	pop := s.pops
	pi, ok := e.(*queue.PodInfo)
	if !ok {
		// A pod group (GenericWorkload): podgroup.go.
		s.scheduleOnePodGroup(ctx, e.(*queue.GroupInfo), pop)
		return nil
	}
	pod := pi.Pod
	p := s.profileOf(pod)
	if p == nil {
		// Only pods of a profile enter the queue; as upstream, say so.
		s.logger.Error(nil, "No profile schedules the pod", "pod", klog.KObj(pod), "schedulerName", pod.Spec.SchedulerName)
		s.queue.Done(pod.UID)
		return nil
	}
	if s.skipPodSchedule(p, pod) {
		s.queue.Done(pod.UID)
		return nil
	}
	c := s.newCycle(ctx, pi, p)
	s.extenders.begin(c)
	defer s.extenders.end(c)
	state := framework.NewCycleState()
	// Plugins may name pods that deserve another try at once (PodsToActivate).
	podsToActivate := framework.NewPodsToActivate()
	state.Write(framework.PodsToActivateKey, podsToActivate)

	// Snapshot: the nodes as the cache sees them, assumed pods included.
	if err := s.cache.UpdateSnapshot(c.logger, s.snapshot); err != nil {
		c.start(0)
		s.fail(ctx, c, pi, fwk.AsStatus(fmt.Errorf("updating the snapshot: %w", err)), nil)
		return nil
	}
	nodes, err := s.snapshot.NodeInfos().List()
	if err != nil {
		c.start(0)
		s.fail(ctx, c, pi, fwk.AsStatus(fmt.Errorf("listing the snapshot's nodes: %w", err)), nil)
		return nil
	}
	c.start(len(nodes))
	if len(nodes) == 0 {
		// No plugin rejected the pod: the queue treats it as an error.
		s.fail(ctx, c, pi, fwk.NewStatus(fwk.UnschedulableAndUnresolvable).WithError(errNoNodesAvailable), nil)
		return nil
	}

	// Sign, PreFilter, Filter, PreScore, Score: the node the pod fits best.
	pl, status := s.findNode(ctx, c, state, pod, nodes, pop)
	if !status.IsSuccess() {
		s.fail(ctx, c, pi, status, nil)
		return nil
	}
	if pl.fitErr != nil {
		f := &failure{diagnosis: &pl.fitErr.Diagnosis, nominating: clearNomination}
		if len(c.p.postFilter) > 0 {
			// PostFilter: no node fits; preemption may make room for next time.
			result, pfStatus := c.postFilter(ctx, state, pod, pl.fitErr.Diagnosis.NodeToStatus)
			pl.fitErr.Diagnosis.PostFilterMsg = pfStatus.Message()
			f.nominating = nil
			if result != nil {
				f.nominating = result.NominatingInfo
			}
		}
		s.fail(ctx, c, pi, fwk.NewStatus(fwk.Unschedulable).WithError(pl.fitErr), f)
		return nil
	}
	host := pl.host

	// Assume: from now on the cache counts the pod on its node, so the next
	// cycle sees the room it takes before the binding is written. An assumed
	// pod holds no nomination any more. Reserve: plugins keep node-level
	// state for the pod (volumes, DRA).
	assumed, status := s.assumeAndReserve(ctx, c, state, pod, host)
	if !status.IsSuccess() {
		status, f := rejectedAt(pod, host, status)
		s.fail(ctx, c, pi, status, f)
		return nil
	}

	// Permit, then the binding cycle.
	s.permitAndBind(ctx, c, pi, state, assumed, pl, podsToActivate)
	return nil
}

// assumeAndReserve assumes the pod on host, in the cache or, in a pod
// group's cycle, in the snapshot alone (the group's placement is tried
// there first), and runs the Reserve plugins; on a failure it undoes both.
// An error assuming the pod comes back as an error status.
func (s *Scheduler) assumeAndReserve(ctx context.Context, c *cycle, state fwk.CycleState, pod *v1.Pod, host string) (*v1.Pod, *fwk.Status) {
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = host
	var err error
	if state.IsPodGroupSchedulingCycle() {
		err = s.snapshot.AssumePod(podInfo(assumed))
	} else {
		err = s.cache.AssumePod(c.logger, assumed)
	}
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("assuming the pod: %w", err))
	}
	s.queue.DeleteNominatedPodIfExists(assumed)
	if status := c.reserve(ctx, state, assumed, host); !status.IsSuccess() {
		s.unreserveAndForget(ctx, c, state, assumed, host)
		return nil, status
	}
	return assumed, nil
}

// permitAndBind runs the Permit plugins on the pod assumed and reserved on
// its node and, unless one rejects it, ends its scheduling cycle and starts
// its binding cycle on a goroutine of its own: the next pod need not wait
// for the apiserver.
func (s *Scheduler) permitAndBind(ctx context.Context, c *cycle, pi *queue.PodInfo, state *framework.CycleState, assumed *v1.Pod, pl placement, podsToActivate *framework.PodsToActivate) {
	// Permit: plugins approve, reject, or hold the pod for a while.
	status, waits := c.permit(ctx, state, assumed, pl.host)
	if !status.IsSuccess() && !status.IsWait() {
		s.unreserveAndForget(ctx, c, state, assumed, pl.host)
		status, f := rejectedAt(pi.Pod, pl.host, status)
		s.fail(ctx, c, pi, status, f)
		return
	}
	var waitingSince time.Time
	if status.IsWait() {
		waitingSince = time.Now()
		c.p.fw.AddWaitingPod(assumed, waits)
		c.permitWait(pl.host, waits)
	}
	s.activate(c.logger, podsToActivate)
	c.end(event.CycleEnd{Result: event.ResultScheduled, Node: pl.host, FeasibleNodes: pl.feasible, Ties: pl.ties})

	s.bindings.Add(1)
	s.binding.Add(1)
	go func() {
		defer s.bindings.Done()
		defer s.binding.Add(-1)
		s.bindingCycle(ctx, c, pi, state, assumed, pl.host, waitingSince, podsToActivate)
	}()
}

// placement is what the scheduling algorithm made of a pod: the node it
// chose (host), the nodes that tied with it and how many nodes fit; or,
// when none fits, why (fitErr).
type placement struct {
	host     string
	ties     []string
	feasible int
	fitErr   *framework.FitError
}

// findNode runs the scheduling algorithm on the snapshot (upstream's
// schedulePod): Sign, PreFilter, Filter (on the nominated node or the
// batch's hint first), the extenders' filters, PreScore, Score, and the
// choice of a host. A status that is not Success is an error that ends the
// cycle; a placement with a fitErr says no node fits.
func (s *Scheduler) findNode(ctx context.Context, c *cycle, state *framework.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, pop int64) (placement, *fwk.Status) {
	// Sign (OpportunisticBatching): the plugins sign the pod; the next pod
	// of the same signature may be offered this one's other nodes.
	var sig fwk.PodSignature
	if c.batch != nil {
		sig = c.sign(ctx, state, pod)
	}

	// PreFilter: plugins prepare state, may reject the pod outright, may
	// narrow the nodes to look at, may ask to be skipped at Filter.
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	preResult, status := c.preFilter(ctx, state, pod, nodes, &diagnosis)
	var feasible []fwk.NodeInfo
	hint := ""
	switch {
	case status.IsRejected():
		// No node can fit; PostFilter may still help.
	case !status.IsSuccess():
		return placement{}, status
	default:
		// The batch's hint: the best node the last pod like this one left.
		if c.batch != nil {
			hint = s.hint(ctx, c, state, pod, sig, pop)
		}
		// Filter, first on the node an earlier preemption nominated, or
		// else the hint: if the pod fits there, it goes there, unscored.
		feasible = s.filterNominatedNode(ctx, c, state, pod, hint, diagnosis)
		if len(feasible) == 0 {
			// Filter: every plugin on the nodes, in parallel, from where the
			// last cycle stopped, until enough nodes fit.
			candidates := s.narrow(nodes, preResult, &diagnosis)
			var processed int
			feasible, processed, status = c.filter(ctx, filterRun{
				state: state, pod: pod, nodes: candidates, diagnosis: &diagnosis,
				start: s.nextStartNodeIndex, numToFind: c.p.numToFind(len(candidates)), inOrder: s.opts.Seed != 0,
			})
			s.nextStartNodeIndex = (s.nextStartNodeIndex + processed) % len(nodes)
			if !status.IsSuccess() {
				return placement{}, status
			}
			// Extenders filter what the plugins left, one after another.
			if feasible, status = c.extenderFilter(pod, feasible, &diagnosis); !status.IsSuccess() {
				return placement{}, status
			}
		}
	}
	if len(feasible) == 0 {
		return placement{fitErr: &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diagnosis}}, nil
	}

	// PreScore, Score, NormalizeScore and the weights, when there is a
	// choice to make; then the best node wins.
	host, ties := feasible[0].Node().Name, []string(nil)
	var others framework.SortedScoredNodes
	if len(feasible) > 1 {
		var totals []fwk.NodePluginScores
		if len(c.p.score) > 0 || len(c.extenders.list) > 0 {
			if status := c.preScore(ctx, state, pod, feasible); !status.IsSuccess() {
				return placement{}, status
			}
			var res *event.ScoreResults
			if totals, res, status = c.score(ctx, state, pod, feasible); !status.IsSuccess() {
				return placement{}, status
			}
			if sig != nil {
				// The batch keeps them: its own copy, with the raw scores.
				totals = scoredNodes(res)
			}
		} else {
			// With no Score plugin every node scores 1, as upstream.
			totals = c.scratch.totalsFor(len(feasible))
			for i, n := range feasible {
				totals[i] = fwk.NodePluginScores{Name: n.Node().Name, TotalScore: 1}
			}
			if sig != nil {
				totals = slices.Clone(totals)
			}
		}
		host, ties, others = selectHost(totals)
	}
	if c.batch != nil {
		c.p.batch.store(c, sig, hint, host, others, pop)
	}
	return placement{host: host, ties: ties, feasible: len(feasible)}, nil
}

// newCycle begins the reporting of one attempt at pi: its cycle id, the
// profile whose plugins it calls, and the scratch it may use.
func (s *Scheduler) newCycle(ctx context.Context, pi *queue.PodInfo, p *profile) *cycle {
	var batch *event.Batch
	if s.batching {
		batch = &event.Batch{}
	}
	return &cycle{
		id:        s.cycles.Add(1),
		pod:       event.RefOf(pi.Pod),
		attempt:   pi.Attempts,
		begun:     time.Now(),
		logger:    klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KObj(pi.Pod)),
		observer:  s.observer,
		p:         p,
		extenders: s.extenders,
		timeout:   s.opts.CycleTimeout,
		binding:   s.opts.BindingTimeout,
		scratch:   &s.scratch,
		batch:     batch,
	}
}

// bindingCycle waits for Permit, then binds the pod: PreBindPreFlight,
// WaitOnPermit, PreBind, Bind, PostBind. Any failure undoes the reservation
// and sends the pod back to the queue.
// waitingSince is when the pod began to wait at Permit, if it does.
func (s *Scheduler) bindingCycle(ctx context.Context, c *cycle, pi *queue.PodInfo, state fwk.CycleState, assumed *v1.Pod, host string, waitingSince time.Time, podsToActivate *framework.PodsToActivate) {
	start := time.Now()
	failed := func(status *fwk.Status, permitNanos int64) {
		s.bindingFailed(ctx, c, pi, state, assumed, host, status, start, permitNanos)
	}
	// PreBindPreFlight: PreBind plugins say whether they will have work to
	// do. When they will, or when the pod waits at Permit, the pod's
	// nominated node tells other components where it is about to go.
	var preFlight *fwk.Status
	if s.nominateBeforeBinding {
		preFlight = c.preBindPreFlight(ctx, state, assumed, host)
		if preFlight.Code() == fwk.Error || preFlight.IsRejected() {
			failed(preFlight, 0)
			return
		}
		if preFlight.IsSuccess() || c.p.fw.WillWaitOnPermit(ctx, assumed) {
			nominating := &fwk.NominatingInfo{NominatedNodeName: host, NominatingMode: fwk.ModeOverride}
			if err := s.updateStatus(ctx, assumed, nil, nominating); err != nil {
				c.logger.Error(err, "Setting the nominated node before binding", "node", host)
			}
		}
	}

	// WaitOnPermit: hold here until every waiting plugin allows.
	status := c.p.fw.WaitOnPermit(ctx, assumed)
	var permitNanos int64
	if !waitingSince.IsZero() {
		permitNanos = time.Since(waitingSince).Nanoseconds()
	}
	if !status.IsSuccess() {
		if status.IsRejected() {
			status = rejectedByPlugin(assumed, host, status)
		}
		failed(status, permitNanos)
		return
	}
	// From here on no plugin can call the pod unschedulable: a failure is an
	// error, retried after a backoff. The queue forgets the pod's flight.
	s.queue.Done(assumed.UID)

	// PreBind: plugins get the node ready (attach volumes...). Preemption
	// may cancel a pod whose PreBind has work to do, until it is bound.
	if preFlight.IsSuccess() {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		c.p.fw.AddPodInPreBind(assumed.UID, cancel)
		defer c.p.fw.RemovePodInPreBind(assumed.UID)
	}
	if status := c.preBind(ctx, state, assumed, host); !status.IsSuccess() {
		failed(status, permitNanos)
		return
	}
	if inPreBind := c.p.fw.GetPodInPreBind(assumed.UID); inPreBind != nil && !inPreBind.MarkPrebound() {
		failed(fwk.AsStatus(context.Cause(ctx)), permitNanos)
		return
	}
	// Bind: a binder extender interested in the pod, or else the first
	// plugin that does not Skip, writes the binding.
	bound, status := c.extenderBind(assumed, host)
	if !bound {
		status = c.bind(ctx, state, assumed, host)
	}
	if !status.IsSuccess() {
		failed(status, permitNanos)
		return
	}
	c.p.fw.EventRecorder().Eventf(assumed, nil, v1.EventTypeNormal, "Scheduled", "Binding",
		"Successfully assigned %s/%s to %s", assumed.Namespace, assumed.Name, host)
	// PostBind: plugins learn that the pod is bound.
	c.postBind(ctx, state, assumed, host)
	s.activate(c.logger, podsToActivate)
	c.bindingEnd(event.BindingEnd{Node: host, Bound: true, PermitNanos: permitNanos, Nanos: time.Since(start).Nanoseconds()})
}

// activate moves the pods plugins asked for to activeQ.
func (s *Scheduler) activate(logger klog.Logger, pods *framework.PodsToActivate) {
	pods.Lock()
	defer pods.Unlock()
	if len(pods.Map) == 0 {
		return
	}
	s.queue.Activate(logger, pods.Map)
	pods.Map = map[string]*v1.Pod{}
}

// skipPodSchedule reports a pod that must not be tried: being deleted, or
// already assumed (an update may have queued it again during its cycle).
func (s *Scheduler) skipPodSchedule(p *profile, pod *v1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		p.fw.EventRecorder().Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling",
			"skip schedule deleting pod: %v/%v", pod.Namespace, pod.Name)
		return true
	}
	assumed, _ := s.cache.IsAssumedPod(pod)
	return assumed
}
