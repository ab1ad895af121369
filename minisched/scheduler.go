// Package minisched is a small but real Kubernetes scheduler. It runs the
// upstream scheduling framework's plugins through its own loop, so that every
// plugin call, every queue transition and every cycle can be seen; the queue
// is its own (package queue), the node cache is upstream's.
//
// Follow one pod in scheduleOne: it names every extension point in the order
// kube-scheduler runs them, from Pop to PostBind.
package minisched

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"minisched/minisched/event"
	"minisched/minisched/queue"
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
	// Seed makes tie-breaking between equally scored nodes repeatable.
	// Zero picks a random seed.
	Seed int64
	// CycleTimeout bounds one plugin call; a plugin that hangs longer fails
	// the pod's cycle with an error. Zero means 30s.
	CycleTimeout time.Duration
	// Cycles numbers the scheduling cycles. A Service shares one counter
	// across restarts so that cycle ids stay unique; nil starts at 1.
	Cycles *atomic.Int64
	// MaxInUnschedulable and UnschedulableFlushInterval tune the queue's
	// periodic flush; zero keeps kube-scheduler's 5m and 30s.
	MaxInUnschedulable         time.Duration
	UnschedulableFlushInterval time.Duration
}

// Scheduler watches pods and nodes through informers and schedules the pods
// of its profile one at a time.
type Scheduler struct {
	opts      Options
	client    clientset.Interface
	profile   *profile
	queue     *queue.Queue
	nominator *queue.Nominator
	cache     internalcache.Cache
	snapshot  *internalcache.Snapshot
	factory   informers.SharedInformerFactory
	podLister corelisters.PodLister
	observer  event.Observer
	gate      *Gate
	events    events.EventBroadcaster

	rand               *rand.Rand
	cycles             *atomic.Int64
	synced             atomic.Bool
	nextStartNodeIndex int
	bindings           sync.WaitGroup
}

// New builds a scheduler; Run starts it.
func New(ctx context.Context, opts Options) (*Scheduler, error) {
	if opts.Config == nil || len(opts.Config.Profiles) != 1 {
		return nil, errors.New("minisched needs a configuration with exactly one profile")
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
	// The upstream cache and framework report to kube-scheduler's metrics.
	metrics.Register()
	seed := opts.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	s := &Scheduler{
		opts:     opts,
		client:   opts.Client,
		observer: opts.Observer,
		gate:     opts.Gate,
		rand:     rand.New(rand.NewSource(seed)),
		cycles:   opts.Cycles,
		snapshot: internalcache.NewEmptySnapshot(),
		// The upstream factory: its pod informer skips finished pods.
		factory: kubescheduler.NewInformerFactory(opts.Client, 0, nil),
	}
	s.podLister = s.factory.Core().V1().Pods().Lister()
	s.cache = internalcache.New(ctx, nil,
		utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))
	draManager, err := newDRAManager(ctx, opts.Client, s.factory)
	if err != nil {
		return nil, err
	}
	s.events = events.NewBroadcaster(&events.EventSinkImpl{Interface: opts.Client.EventsV1()})
	cfg := &opts.Config.Profiles[0]
	s.profile, err = newProfile(ctx, cfg, opts.OutOfTree, frameworkDeps{
		client:          opts.Client,
		restConfig:      opts.RESTConfig,
		informerFactory: s.factory,
		snapshot:        s.snapshot,
		cache:           s.cache,
		recorder:        s.events.NewRecorder(scheme.Scheme, cfg.SchedulerName),
		parallelism:     int(opts.Config.Parallelism),
		draManager:      draManager,
	})
	if err != nil {
		return nil, err
	}
	if cfg.PercentageOfNodesToScore == nil && opts.Config.PercentageOfNodesToScore != nil {
		s.profile.percentageOfNodesToScore = *opts.Config.PercentageOfNodesToScore
	}
	hints, err := s.profile.hints(ctx)
	if err != nil {
		return nil, err
	}
	s.queue = queue.New(queue.Options{
		Less:           s.profile.fw.QueueSortFunc(),
		PreEnqueue:     s.profile.fw.PreEnqueuePlugins(),
		Hints:          hints,
		InitialBackoff: time.Duration(opts.Config.PodInitialBackoffSeconds) * time.Second,
		MaxBackoff:     time.Duration(opts.Config.PodMaxBackoffSeconds) * time.Second,
		Observer:       opts.Observer,
		Logger:         klog.FromContext(ctx),

		MaxInUnschedulable:         opts.MaxInUnschedulable,
		UnschedulableFlushInterval: opts.UnschedulableFlushInterval,
	})
	s.nominator = queue.NewNominator()
	s.profile.fw.SetPodNominator(s.nominator)
	s.profile.fw.SetPodActivator(s.queue)
	if err := s.addEventHandlers(); err != nil {
		return nil, err
	}
	if err := s.addObjectEventHandlers(hints); err != nil {
		return nil, err
	}
	return s, nil
}

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
	s.synced.Store(true)
	klog.FromContext(ctx).V(2).Info("informers synced")
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

// Queue gives read access to the scheduling queue.
func (s *Scheduler) Queue() *queue.Queue { return s.queue }

// Profile is the name of the profile's scheduler: the pods it takes.
func (s *Scheduler) Profile() string { return s.profile.name }

// scheduleOne takes the next pod through one scheduling cycle and, when a
// node is chosen, starts its binding cycle on a goroutine of its own.
func (s *Scheduler) scheduleOne(ctx context.Context) error {
	// QueueSort ordered activeQ; wait for a pod, then for the gate (pause,
	// step), then take the pod.
	if err := s.queue.WaitForPod(); err != nil {
		return err
	}
	if err := s.gate.Acquire(ctx); err != nil {
		return err
	}
	pi, err := s.queue.Pop()
	if err != nil {
		return err
	}
	pod := pi.Pod
	if s.gone(pod) {
		s.queue.Done(pod.UID)
		return nil
	}
	c := s.newCycle(ctx, pi)
	state := framework.NewCycleState()

	// Snapshot: the nodes as the cache sees them, assumed pods included.
	if err := s.cache.UpdateSnapshot(c.logger, s.snapshot); err != nil {
		s.fail(ctx, c, pi, fwk.AsStatus(fmt.Errorf("updating the snapshot: %w", err)), nil)
		return nil
	}
	nodes, err := s.snapshot.NodeInfos().List()
	if err != nil || len(nodes) == 0 {
		c.start(0)
		s.fail(ctx, c, pi, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "no nodes available to schedule pods"), nil)
		return nil
	}
	c.start(len(nodes))

	// PreFilter: plugins prepare state, may reject the pod outright, may
	// narrow the nodes to look at, may ask to be skipped at Filter.
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	preResult, status := c.preFilter(ctx, state, pod, nodes, &diagnosis)
	var feasible []fwk.NodeInfo
	switch {
	case status.IsRejected():
		// No node can fit; PostFilter may still help.
	case !status.IsSuccess():
		s.fail(ctx, c, pi, status, nil)
		return nil
	default:
		// Filter: every plugin on every node, nodes in parallel.
		candidates := s.narrow(nodes, preResult, &diagnosis)
		feasible, status = c.filter(ctx, state, pod, candidates, s.startIndex(len(candidates)), s.numToFind(len(candidates)), s.opts.Seed != 0, &diagnosis, s.nominator)
		s.advanceStart(len(candidates), len(feasible)+diagnosis.NodeToStatus.Len())
		if !status.IsSuccess() {
			s.fail(ctx, c, pi, status, nil)
			return nil
		}
	}
	if len(feasible) == 0 {
		// PostFilter: no node fits; preemption may make room for next time.
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diagnosis}
		result, pfStatus := c.postFilter(ctx, state, pod, diagnosis.NodeToStatus)
		fitErr.Diagnosis.PostFilterMsg = pfStatus.Message()
		f := &failure{diagnosis: &fitErr.Diagnosis}
		if result != nil {
			f.nominating = result.NominatingInfo
		}
		s.fail(ctx, c, pi, fwk.NewStatus(fwk.Unschedulable).WithError(fitErr), f)
		return nil
	}

	// PreScore, Score, NormalizeScore and the weights, when there is a
	// choice to make; then the best node wins, ties broken by the seed.
	host, ties := feasible[0].Node().Name, []string(nil)
	if len(feasible) > 1 {
		if status := c.preScore(ctx, state, pod, feasible); !status.IsSuccess() {
			s.fail(ctx, c, pi, status, nil)
			return nil
		}
		totals, status := c.score(ctx, state, pod, feasible)
		if !status.IsSuccess() {
			s.fail(ctx, c, pi, status, nil)
			return nil
		}
		host, ties = s.selectHost(totals)
	}

	// Assume: from now on the cache counts the pod on its node, so the next
	// cycle sees the room it takes before the binding is written.
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = host
	if err := s.cache.AssumePod(c.logger, assumed); err != nil {
		s.fail(ctx, c, pi, fwk.AsStatus(fmt.Errorf("assuming the pod: %w", err)), nil)
		return nil
	}

	// Reserve: plugins keep node-level state for the pod (volumes, DRA).
	if status := c.reserve(ctx, state, assumed, host); !status.IsSuccess() {
		s.unreserveAndForget(ctx, c, state, assumed, host)
		s.fail(ctx, c, pi, status, rejectedAt(host, status))
		return nil
	}

	// Permit: plugins approve, reject, or hold the pod for a while.
	status, waits := c.permit(ctx, state, assumed, host)
	if !status.IsSuccess() && !status.IsWait() {
		s.unreserveAndForget(ctx, c, state, assumed, host)
		s.fail(ctx, c, pi, status, rejectedAt(host, status))
		return nil
	}
	if status.IsWait() {
		s.profile.fw.AddWaitingPod(assumed, waits)
		c.permitWait(host, waits)
	}
	c.end(event.ResultScheduled, host, "", nil, len(feasible), ties)

	// The binding cycle: the next pod need not wait for the apiserver.
	s.bindings.Add(1)
	go func() {
		defer s.bindings.Done()
		start := time.Now()
		// WaitOnPermit: hold here until every waiting plugin allows.
		waitStart := time.Now()
		status := s.profile.fw.WaitOnPermit(ctx, assumed)
		permitNanos := time.Since(waitStart).Nanoseconds()
		if !status.IsSuccess() {
			s.bindingFailed(ctx, c, pi, state, assumed, host, status, start, permitNanos)
			return
		}
		// PreBind: plugins get the node ready (attach volumes...).
		if status := c.preBind(ctx, state, assumed, host); !status.IsSuccess() {
			s.bindingFailed(ctx, c, pi, state, assumed, host, status, start, permitNanos)
			return
		}
		// Bind: the first plugin that does not Skip writes the binding.
		if status := c.bind(ctx, state, assumed, host); !status.IsSuccess() {
			s.bindingFailed(ctx, c, pi, state, assumed, host, status, start, permitNanos)
			return
		}
		s.queue.Done(pod.UID)
		s.profile.fw.EventRecorder().Eventf(assumed, nil, v1.EventTypeNormal, "Scheduled", "Binding",
			"Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, host)
		// PostBind: plugins learn that the pod is bound.
		c.postBind(ctx, state, assumed, host)
		c.bindingEnd(event.BindingEnd{Node: host, Bound: true, PermitNanos: permitNanos, Nanos: time.Since(start).Nanoseconds()})
	}()
	return nil
}

// gone reports a pod that no longer needs scheduling: deleted, being
// deleted, or bound by someone else while it waited.
func (s *Scheduler) gone(pod *v1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return true
	}
	current, err := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	return apierrors.IsNotFound(err) || err == nil && (current.UID != pod.UID || current.Spec.NodeName != "")
}

// narrow keeps the nodes PreFilter named, when it named any.
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
	d.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) didn't satisfy PreFilter's node names"))
	return kept
}

// numToFind is how many feasible nodes are enough, as in kube-scheduler:
// all of them below 100 nodes, then a share that shrinks as the cluster grows.
func (s *Scheduler) numToFind(all int) int {
	const minFeasible, minPercentage = 100, 5
	if all < minFeasible {
		return all
	}
	percentage := int(s.profile.percentageOfNodesToScore)
	if percentage == 0 {
		percentage = max(50-all/125, minPercentage)
	}
	return max(all*percentage/100, minFeasible)
}

// startIndex and advanceStart rotate where Filter starts, so that when it
// stops early every node still gets its turn.
func (s *Scheduler) startIndex(n int) int {
	if n == 0 {
		return 0
	}
	return s.nextStartNodeIndex % n
}

func (s *Scheduler) advanceStart(n, processed int) {
	if n > 0 {
		s.nextStartNodeIndex = (s.nextStartNodeIndex + processed) % n
	}
}

// selectHost picks the node with the highest total; equal totals are
// broken by the seeded random source, and reported as ties.
func (s *Scheduler) selectHost(totals []nodeTotal) (string, []string) {
	best := totals[0]
	var tied []string
	count := 1
	for _, t := range totals[1:] {
		switch {
		case t.total > best.total:
			best, count, tied = t, 1, nil
		case t.total == best.total:
			count++
			tied = append(tied, t.node)
			// Reservoir sampling: each tied node wins with equal chance.
			if s.rand.Intn(count) == 0 {
				tied = append(tied[:len(tied)-1], best.node)
				best = t
			}
		}
	}
	return best.node, tied
}

// rejectedAt describes a rejection by a plugin on the chosen node (Reserve,
// Permit): the pod waits in the unschedulable set for that plugin's events.
func rejectedAt(host string, status *fwk.Status) *failure {
	if !status.IsRejected() {
		return nil
	}
	d := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	d.NodeToStatus.Set(host, status)
	d.AddPluginStatus(status)
	return &failure{diagnosis: &d}
}

// unreserveAndForget undoes Reserve and Assume.
func (s *Scheduler) unreserveAndForget(ctx context.Context, c *cycle, state fwk.CycleState, assumed *v1.Pod, host string) {
	c.unreserve(ctx, state, assumed, host)
	if err := s.cache.ForgetPod(c.logger, assumed); err != nil {
		c.logger.Error(err, "Forgetting the assumed pod", "pod", klog.KObj(assumed))
	}
}

// bindingFailed undoes the cycle's reservation and sends the pod back to the
// queue. The room it held is free again: pods waiting for room may retry.
func (s *Scheduler) bindingFailed(ctx context.Context, c *cycle, pi *queue.PodInfo, state fwk.CycleState, assumed *v1.Pod, host string, status *fwk.Status, start time.Time, permitNanos int64) {
	s.unreserveAndForget(ctx, c, state, assumed, host)
	s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodDelete, assumed, nil)
	c.bindingEnd(event.BindingEnd{Node: host, Message: status.Message(), Plugin: status.Plugin(),
		PermitNanos: permitNanos, Nanos: time.Since(start).Nanoseconds()})
	s.requeue(ctx, pi, status, rejectedAt(host, status))
}
