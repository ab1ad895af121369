package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/cluster"
	"minisched/event"
	"minisched/exclusive"
	"minisched/history"
	"minisched/k8sapiserver"
	"minisched/metrics"
	"minisched/minisched"
	"minisched/mirror"
	"minisched/schedperf"
	"minisched/server"
)

// Instance is a running minisched: control plane, scheduler and server.
type Instance struct {
	URL          string
	Server       *server.Server
	Cluster      *cluster.Cluster
	Scheduler    *minisched.Service
	Recorder     *history.Recorder
	ControlPlane *k8sapiserver.ControlPlane
	Client       kubernetes.Interface
	RESTConfig   *rest.Config
	// Mirror follows the source cluster of --mirror; nil otherwise.
	Mirror *mirror.Mirror

	// machinery runs the embedded cluster's controllers and kubelets; nil
	// when attached, or with neither.
	machinery *machinery
	// owner lets one operation on the whole cluster run at a time, and
	// pauses the machinery for those that rewrite it.
	owner *exclusive.Owner
	// observer hears every event: the history and the metrics.
	observer event.Observer
	metrics  *metrics.Metrics
	registry *prometheus.Registry

	cancel context.CancelFunc
	// started is what Close stops, last started first.
	started []component
	served  chan error
}

// A component is one part of a running minisched. Start brings the parts up
// in the order Instance.components lists them; Close stops the ones that
// started, in the opposite order.
type component struct {
	name  string
	start func(ctx context.Context) error
	// stop is nil for a part that ends with the context.
	stop func() error
}

// settings are what the flags decide before anything starts: a bad
// configuration, snapshot or source cluster is refused here.
type settings struct {
	Flags
	log           *slog.Logger
	outOfTree     frameworkruntime.Registry
	attached      bool
	exposed       bool
	rateLimit     float64
	proxies       []*net.IPNet
	schedulerName string
	config        *config.KubeSchedulerConfiguration
	snapshot      *initialSnapshot
	// gates are --feature-gates.
	gates map[string]bool
	// scenarios are the bundled scenarios and --scenarios-dir's.
	scenarios []fs.FS
}

// Start brings everything up and returns once the dashboard serves.
func Start(ctx context.Context, f Flags, log *slog.Logger, opts ...Option) (_ *Instance, err error) {
	s, err := settle(ctx, f, log, opts)
	if err != nil {
		return nil, err
	}
	inst := &Instance{}
	inst.owner = exclusive.New(inst.pause)
	ctx, inst.cancel = context.WithCancel(ctx)
	defer func() {
		if err != nil {
			_ = inst.Close()
		}
	}()
	began := time.Now()
	for _, c := range inst.components(s) {
		// A part that fails half-way is stopped too: each stop is safe on
		// what its start left undone.
		inst.started = append(inst.started, c)
		if err := c.start(ctx); err != nil {
			return nil, err
		}
		log.Debug("started", "part", c.name, "after", time.Since(began))
	}
	return inst, nil
}

func settle(ctx context.Context, f Flags, log *slog.Logger, opts []Option) (*settings, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &settings{Flags: f, log: log, outOfTree: o.outOfTree, attached: f.Kubeconfig != "" || f.InCluster, rateLimit: f.RateLimit}
	var err error
	if s.exposed, err = checkAddr(f, log); err != nil {
		return nil, err
	}
	if s.gates, err = parseFeatureGates(f.FeatureGates); err != nil {
		return nil, err
	}
	if s.proxies, err = parseCIDRs(f.TrustedProxies); err != nil {
		return nil, err
	}
	if s.scenarios, err = bundled(f.ScenariosDir); err != nil {
		return nil, err
	}
	if s.rateLimit == 0 && s.exposed {
		s.rateLimit = 20
	}
	s.schedulerName = f.SchedulerName
	if s.schedulerName == "" {
		s.schedulerName = "default-scheduler"
		if s.attached {
			s.schedulerName = "minisched"
		}
	}
	// The configuration's defaults read the gates (GenericWorkload adds
	// GangScheduling), as kube-scheduler's do once its flags are read; the
	// gates are set for the run when it starts.
	restore, err := setFeatureGates(s.gates)
	if err != nil {
		return nil, err
	}
	defer restore()
	if s.config, err = schedulerConfig(f.SchedulerConfig, s.schedulerName); err != nil {
		return nil, err
	}
	if s.snapshot, err = startingSnapshot(ctx, f, log); err != nil {
		return nil, err
	}
	if s.config, err = s.snapshot.config(f, s.config, s.schedulerName); err != nil {
		return nil, err
	}
	return s, nil
}

// components lists minisched's parts in the order they start: the cluster,
// its controllers and kubelets, the scheduler, the server (which watches the
// cluster), the starting snapshot, the mirror and, last, the listener.
func (inst *Instance) components(s *settings) []component {
	var parts []component
	if len(s.gates) > 0 {
		// First: the apiserver reads the gates as it starts.
		var restore func()
		parts = append(parts, component{name: "feature gates", start: func(context.Context) (err error) {
			if restore, err = setFeatureGates(s.gates); err != nil {
				return err
			}
			s.log.Info("feature gates set", "gates", minisched.FormatGates(s.gates))
			return nil
		}, stop: func() error {
			if restore != nil {
				restore()
			}
			return nil
		}})
	}
	if s.attached {
		parts = append(parts, component{name: "attached cluster", start: func(context.Context) (err error) {
			if inst.RESTConfig, err = attach(s.Flags); err != nil {
				return err
			}
			s.log.Info("attached to a cluster", "apiserver", inst.RESTConfig.Host, "schedulerName", s.schedulerName)
			return nil
		}})
	} else {
		parts = append(parts, component{name: "control plane", start: func(ctx context.Context) (err error) {
			started := time.Now()
			inst.ControlPlane, err = k8sapiserver.Start(ctx, k8sapiserver.Config{
				DataDir: s.DataDir, KubeconfigPath: s.KubeconfigOut, EtcdLogs: s.Verbosity >= 2,
				// The gates' APIs, as scheduler_perf turns them on:
				// PodGroups for GenericWorkload.
				RuntimeConfig: schedperf.RuntimeConfig(s.gates),
			})
			if err != nil {
				return fmt.Errorf("starting the control plane: %w", err)
			}
			inst.RESTConfig = inst.ControlPlane.RESTConfig()
			s.log.Info("control plane ready", "apiserver", inst.ControlPlane.URL(), "kubeconfig", inst.ControlPlane.KubeconfigPath(),
				"took", time.Since(started).Round(time.Millisecond))
			return nil
		}, stop: func() error {
			// Whatever still watches the apiserver stops before it does.
			inst.cancel()
			if inst.ControlPlane == nil {
				return nil
			}
			return inst.ControlPlane.Close()
		}})
	}
	parts = append(parts, component{name: "client", start: func(context.Context) (err error) {
		if inst.Client, err = kubernetes.NewForConfig(inst.RESTConfig); err != nil {
			return fmt.Errorf("building a client: %w", err)
		}
		return nil
	}})
	if !s.attached {
		// A real cluster has its own controllers and kubelets.
		parts = append(parts, component{name: "controllers and kubelets", start: func(ctx context.Context) (err error) {
			if inst.machinery, err = newMachinery(s.Flags, inst.RESTConfig, inst.Client, s.log); err != nil || inst.machinery == nil {
				return err
			}
			return inst.machinery.start(ctx)
		}, stop: func() error {
			if inst.machinery == nil {
				return nil
			}
			return inst.machinery.close()
		}})
	}
	parts = append(parts,
		component{name: "scheduler", start: func(ctx context.Context) error { return inst.startScheduler(ctx, s) },
			stop: func() error {
				if inst.Scheduler != nil {
					inst.Scheduler.Stop()
				}
				return nil
			}},
		component{name: "server", start: func(ctx context.Context) error { return inst.watchCluster(ctx, s) }, stop: inst.shutdown},
		component{name: "starting snapshot", start: func(ctx context.Context) error {
			return s.snapshot.load(ctx, inst.Client, inst.owner.Pause, inst.Server, s.Flags, s.log)
		}},
	)
	if s.Mirror != "" {
		parts = append(parts, component{name: "mirror", start: func(ctx context.Context) (err error) {
			if inst.Mirror, err = s.snapshot.follow(ctx, inst.Cluster, inst.Client, s.Flags, s.log); err != nil {
				return err
			}
			// A reset ends the copy, and with it the mirror.
			inst.Cluster.OnReset(inst.Mirror.Stop)
			inst.Server.Follow(inst.Mirror)
			return nil
		}, stop: func() error {
			if inst.Mirror != nil {
				inst.Mirror.Stop()
			}
			return nil
		}})
	}
	return append(parts, component{name: "listener", start: func(context.Context) error { return inst.listen(s) }})
}

// startScheduler starts the history, the metrics and the scheduler; with
// --leader-elect, the scheduler runs only while it holds the lease.
func (inst *Instance) startScheduler(ctx context.Context, s *settings) error {
	inst.Recorder = history.New(history.Options{MaxWeight: s.History, MaxBytes: s.HistoryBytes})
	inst.registry = prometheus.NewRegistry()
	inst.registry.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	inst.metrics = metrics.New(inst.registry, inst.pending)
	inst.observer = event.Multi(inst.Recorder, inst.metrics)
	inst.Scheduler = minisched.NewService(minisched.ServiceOptions{
		Client: inst.Client, RESTConfig: inst.RESTConfig, Observer: inst.observer, OutOfTree: s.outOfTree,
		Tuning: minisched.Tuning{Seed: s.Seed}, StartPaused: s.Paused, BindingTimeout: s.BindingTimeout,
	})
	if !s.attached || !s.LeaderElect {
		if err := inst.Scheduler.Start(ctx, s.config); err != nil {
			return fmt.Errorf("starting the scheduler: %w", err)
		}
		return nil
	}
	ns := s.LeaderElectNamespace
	if ns == "" {
		ns = cmp.Or(os.Getenv("POD_NAMESPACE"), "default")
	}
	lead := func(ctx context.Context) {
		// A regained lease keeps the configuration last PUT.
		current := s.config
		if last := inst.Scheduler.Config(); last != nil {
			current = last
		}
		if err := inst.Scheduler.Start(ctx, current); err != nil {
			s.log.Error("starting the scheduler", "err", err)
		}
	}
	return elect(ctx, inst.Client, s.Lease, ns, s.schedulerName, s.log, lead, inst.Scheduler.Stop)
}

// pending is the queue's counts for the metrics: none while no scheduler runs.
func (inst *Instance) pending() map[event.QueueName]int {
	if inst.Scheduler == nil {
		return nil
	}
	if s := inst.Scheduler.Scheduler(); s != nil {
		return s.Queue().Counts()
	}
	return nil
}

// pause stops the controllers and kubelets while the whole cluster is
// rewritten (the owner's Pause calls it), and returns what starts them again.
func (inst *Instance) pause() (resume func() error) {
	if inst.machinery == nil {
		return func() error { return nil }
	}
	return inst.machinery.pause()
}

// Controllers names the kube-controller-manager controllers that run on
// the embedded cluster, sorted; none when attached or with --controllers=.
func (inst *Instance) Controllers() []string {
	if inst.machinery == nil {
		return nil
	}
	return inst.machinery.names()
}

// Close stops what Start started, last started first: the mirror, the
// server, the scheduler, the controllers and kubelets, the control plane.
// A second Close does nothing.
func (inst *Instance) Close() error {
	var errs []error
	for i := len(inst.started) - 1; i >= 0; i-- {
		if stop := inst.started[i].stop; stop != nil {
			if err := stop(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	inst.started = nil
	if inst.cancel != nil {
		inst.cancel()
	}
	return errors.Join(errs...)
}
