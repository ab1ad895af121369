package minisched

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/event"
	"minisched/minisched/schedconfig"
)

// ServiceOptions configure a Service.
type ServiceOptions struct {
	Client     clientset.Interface
	RESTConfig *rest.Config
	Observer   event.Observer
	OutOfTree  frameworkruntime.Registry
	// Tuning holds the seed and the queue's timings; SetTuning changes them
	// for the next Restart.
	Tuning Tuning
	// CycleTimeout and BindingTimeout bound one extension point of the
	// scheduling and of the binding cycle (see Options).
	CycleTimeout, BindingTimeout time.Duration
	// StartPaused holds the first pod until Resume or Step.
	StartPaused bool
}

// Tuning are the knobs a scenario may turn besides the configuration.
type Tuning struct {
	// Seed makes runs repeatable; see Options.Seed.
	Seed int64 `json:"seed,omitempty"`
	// MaxInUnschedulable and UnschedulableFlushInterval set the periodic
	// flush of pods left in the unschedulable set (5m and 30s by default).
	MaxInUnschedulable         time.Duration `json:"maxInUnschedulable,omitempty"`
	UnschedulableFlushInterval time.Duration `json:"unschedulableFlushInterval,omitempty"`
	// FeatureGates set SchedulerGates for the scheduler alone, in
	// kube-scheduler's flag form (A=true,B=false); see ParseSchedulerGates.
	FeatureGates string `json:"featureGates,omitempty"`
}

// Service owns the running scheduler: it starts it, restarts it with a new
// configuration (pods are kept: the new scheduler finds them through its
// informers), stops it, and pauses or steps it for the dashboard.
type Service struct {
	opts ServiceOptions
	gate *Gate

	mu     sync.Mutex
	base   context.Context
	cfg    *config.KubeSchedulerConfiguration
	sched  *Scheduler
	cancel context.CancelFunc
	done   chan struct{}

	// Read without mu: the gate reports changes from the scheduling loop,
	// which Restart may be waiting for while it holds mu.
	generation atomic.Int64
	running    atomic.Bool
	queueSort  atomic.Pointer[event.QueueSort]
	// cycles numbers cycles across restarts.
	cycles atomic.Int64
	// holdWhy is why the scheduler is held (Hold), for its state.
	holdWhy atomic.Pointer[string]
}

// NewService returns a stopped service.
func NewService(opts ServiceOptions) *Service {
	if opts.Observer == nil {
		opts.Observer = event.Discard
	}
	s := &Service{opts: opts}
	s.gate = NewGate(opts.StartPaused, func(bool, int) { s.report("") })
	return s
}

// Start runs a scheduler with cfg. ctx bounds the life of this scheduler and
// of those Restart runs after it.
func (s *Service) Start(ctx context.Context, cfg *config.KubeSchedulerConfiguration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base = ctx
	return s.restartLocked(cfg)
}

// Restart builds a scheduler with cfg and, only if that works, stops the
// running one and runs the new one. A configuration the framework refuses
// leaves the running scheduler untouched. While no scheduler runs (a replica
// standing by for the lease, or one stopped) Restart only checks cfg and keeps
// it for the next Start: a configuration change must never start a second
// scheduler beside the leader.
func (s *Service) Restart(cfg *config.KubeSchedulerConfiguration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sched == nil {
		if err := s.CheckConfig(cfg); err != nil {
			return err
		}
		s.cfg = cfg
		s.report("configuration kept: it applies when this replica next schedules")
		return nil
	}
	return s.restartLocked(cfg)
}

func (s *Service) restartLocked(cfg *config.KubeSchedulerConfiguration) error {
	t := s.opts.Tuning
	gates, ownGates, err := ParseSchedulerGates(t.FeatureGates)
	if err != nil {
		return &schedconfig.Error{Err: err}
	}
	runCtx, cancel := context.WithCancel(s.base)
	sched, err := New(runCtx, Options{
		Client: s.opts.Client, RESTConfig: s.opts.RESTConfig, Config: cfg, OutOfTree: s.opts.OutOfTree,
		Observer: s.opts.Observer, Gate: s.gate, Seed: t.Seed, CycleTimeout: s.opts.CycleTimeout, BindingTimeout: s.opts.BindingTimeout, Cycles: &s.cycles,
		MaxInUnschedulable: t.MaxInUnschedulable, UnschedulableFlushInterval: t.UnschedulableFlushInterval, Gates: gates,
	})
	if err != nil {
		cancel()
		return &schedconfig.Error{Err: err}
	}
	s.stopLocked()
	s.cfg, s.sched, s.cancel, s.done = cfg, sched, cancel, make(chan struct{})
	s.generation.Add(1)
	s.running.Store(true)
	plugin, ordered := sched.QueueSort()
	s.queueSort.Store(&event.QueueSort{Plugin: plugin, Ordered: ordered})
	go func(done chan struct{}) {
		defer close(done)
		if err := sched.Run(runCtx); err != nil {
			s.opts.Observer.Observe(event.Event{Time: time.Now(), Kind: event.KindScheduler,
				Scheduler: &event.SchedulerState{State: "stopped", Message: err.Error()}})
		}
	}(s.done)
	started := "started with " + profileWords(sched.Profiles())
	if ownGates != "" {
		started += " and its own feature gates " + ownGates
	}
	s.report(started)
	return nil
}

// Stop stops the scheduler and waits for its binding cycles.
func (s *Service) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
	s.report("stopped")
}

func (s *Service) stopLocked() {
	if s.sched == nil {
		return
	}
	// Pods held at Permit would hold the stop up for their whole wait.
	s.sched.order[0].fw.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		wp.Reject("", "the scheduler is restarting")
	})
	s.cancel()
	<-s.done
	s.sched = nil
	s.running.Store(false)
}

// Tuning returns the knobs the next Restart uses.
func (s *Service) Tuning() Tuning {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Tuning
}

// SetTuning changes the knobs for the next Restart.
func (s *Service) SetTuning(t Tuning) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Tuning = t
}

// CheckConfig builds a scheduler with cfg and throws it away: it says
// whether Restart would take cfg, without touching the running scheduler.
func (s *Service) CheckConfig(cfg *config.KubeSchedulerConfiguration) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sched, err := New(ctx, Options{Client: s.opts.Client, RESTConfig: s.opts.RESTConfig, Config: cfg, OutOfTree: s.opts.OutOfTree})
	if err != nil {
		return &schedconfig.Error{Err: err}
	}
	sched.Discard()
	return nil
}

// Config returns the running configuration.
func (s *Service) Config() *config.KubeSchedulerConfiguration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Scheduler returns the running scheduler, or nil.
func (s *Service) Scheduler() *Scheduler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sched
}

// Ready reports whether a scheduler runs and has synced its informers.
func (s *Service) Ready() bool {
	sched := s.Scheduler()
	return sched != nil && sched.synced.Load()
}

// Pause holds the scheduler before its next pod.
func (s *Service) Pause() { s.gate.Pause() }

// Resume lets the scheduler run freely.
func (s *Service) Resume() { s.gate.Resume() }

// Step lets exactly one more pod through, then holds again.
func (s *Service) Step() { s.gate.Step() }

// Hold stops the scheduler before its next pod until release is called,
// whatever its pause (Gate.Hold); the scheduler's state says why.
func (s *Service) Hold(why string) (release func()) {
	s.holdWhy.Store(&why)
	return s.gate.Hold()
}

// Cycles counts the scheduling cycles begun since the service started,
// across restarts.
func (s *Service) Cycles() int64 { return s.cycles.Load() }

// State reports running, paused or stopped.
func (s *Service) State() event.SchedulerState { return s.state("") }

func (s *Service) state(msg string) event.SchedulerState {
	paused, steps := s.gate.State()
	state := "running"
	switch {
	case !s.running.Load():
		state = "stopped"
	case paused:
		state = "paused"
	}
	if msg == "" && s.gate.Held() {
		if why := s.holdWhy.Load(); why != nil {
			msg = "held: " + *why
		}
	}
	return event.SchedulerState{State: state, Generation: s.generation.Load(), Steps: steps, Message: msg,
		Holding: s.gate.Holding(), QueueSort: s.queueSort.Load()}
}

func (s *Service) report(msg string) {
	state := s.state(msg)
	s.opts.Observer.Observe(event.Event{Time: time.Now(), Kind: event.KindScheduler, Scheduler: &state})
}

// NodeCount is how many nodes the scheduler's cache holds.
func (s *Scheduler) NodeCount() int { return s.cache.NodeCount() }

// HasNode says whether the scheduler's cache holds the node.
func (s *Scheduler) HasNode(name string) bool {
	_, err := s.cache.GetNode(name)
	return err == nil
}

// Plugins lists the plugins enabled at each extension point, with weights.
// Plugins lists the plugins the named profile enables at each extension
// point, with weights; nil when no profile has that name.
func (s *Scheduler) Plugins(profile string) *config.Plugins {
	p := s.profiles[profile]
	if p == nil {
		return nil
	}
	return p.fw.ListPlugins()
}

// AvailablePlugins names every plugin a configuration may enable: the
// in-tree ones, the learning ones and the out-of-tree ones.
func (s *Service) AvailablePlugins() []string {
	reg, err := registry(s.opts.OutOfTree)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(reg))
	for name := range reg {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// profileWords names the profiles for the scheduler's state line.
func profileWords(names []string) string {
	if len(names) == 1 {
		return "profile " + names[0]
	}
	return "profiles " + strings.Join(names, ", ")
}
