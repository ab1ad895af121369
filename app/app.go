// Package app is the minisched command: flags, the control plane (embedded
// or attached), the scheduler service and the server, wired together. A
// binary with plugins of its own calls Main with WithPlugin options.
package app

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/cluster"
	"minisched/controllers"
	"minisched/event"
	"minisched/examples"
	"minisched/history"
	"minisched/k8sapiserver"
	"minisched/kubelet"
	"minisched/metrics"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
	"minisched/mirror"
	"minisched/server"
	"minisched/web"
)

// Option changes how Main builds minisched.
type Option func(*options)

type options struct {
	outOfTree frameworkruntime.Registry
}

// WithPlugin adds an out-of-tree plugin that configurations may enable, like
// kube-scheduler's app.WithPlugin.
func WithPlugin(name string, factory frameworkruntime.PluginFactory) Option {
	return func(o *options) {
		if o.outOfTree == nil {
			o.outOfTree = frameworkruntime.Registry{}
		}
		o.outOfTree[name] = factory
	}
}

// Main runs the command with os.Args and exits.
func Main(opts ...Option) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, stop := interruptible(signals, func() {
		fmt.Fprintln(os.Stderr, "minisched: interrupted again, quitting without waiting")
		os.Exit(130)
	})
	err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, opts...)
	stop()
	signal.Stop(signals)
	var exit *ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.Code)
	case errors.Is(err, pflag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "minisched:", err)
		os.Exit(1)
	}
}

// interruptible returns a context that the first signal cancels, so that
// minisched shuts down in order; a second signal calls quit, so that a
// shutdown that hangs never holds the terminal.
func interruptible(signals <-chan os.Signal, quit func()) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		select {
		case <-signals:
			cancel()
		case <-done:
			return
		}
		select {
		case <-signals:
			quit()
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() { once.Do(func() { close(done); cancel() }) }
}

// newFlagSet is a command's flags, parsed as kubectl's are: anywhere among
// the arguments, written --name, help on --help or -h, and an error with
// the usage printed to stderr.
func newFlagSet(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	return fs
}

// usageError is a command line the command cannot take: exit status 2, as
// a Kubernetes tool's. command names it for the hint.
type usageError struct {
	error
	command string
}

func (e usageError) Unwrap() error { return e.error }

// usage turns a command line's error into the command's end: help exits 0,
// a usage error prints itself and a hint, and exits 2; anything else is
// returned as it is.
func usage(err error, stderr io.Writer) error {
	var ue usageError
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return err
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "minisched: %v\nSee '%s --help' for usage.\n", ue.error, ue.command)
		return &ExitError{Code: 2}
	}
	return err
}

// parse parses a subcommand's flags; an error ends it as usage says.
func parse(fs *pflag.FlagSet, args []string, stderr io.Writer) error {
	if err := fs.Parse(args); err != nil {
		return usage(usageError{err, fs.Name()}, stderr)
	}
	return nil
}

// ExitError ends the command with a code of its own (a failed scenario
// expectation exits 1 without being an error of minisched's).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "exit status " + strconv.Itoa(e.Code) }

// ParseFlags parses the command's flags, as the command line, a container's
// command or a Deployment's args give them.
func ParseFlags(args []string) (Flags, error) { return parseFlags(args, io.Discard) }

func parseFlags(args []string, stderr io.Writer) (Flags, error) {
	fs := newFlagSet("minisched", stderr)
	var f Flags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "minisched: a live visualiser of Kubernetes scheduling cycles.\n\n"+
			"Usage:\n  minisched [flags]                 serve the dashboard on an embedded control plane\n"+
			"  minisched scenario run FILE...    run scenarios headless and print their reports\n"+
			"  minisched scenario diff ...       run one scenario under two configurations and compare\n"+
			"  minisched replay FILE             replay a recording in the dashboard, with no cluster\n"+
			"  minisched whatif ...              schedule a copy of a cluster's workload again and compare\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return f, usageError{err, fs.Name()}
	}
	if fs.NArg() > 0 {
		return f, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0)), fs.Name()}
	}
	// Secrets come from the environment, so that they are in no process
	// listing and --help never shows them.
	if f.Token == "" {
		f.Token = os.Getenv("MINISCHED_TOKEN")
	}
	if f.PublishedOn == "" {
		f.PublishedOn = os.Getenv("MINISCHED_PUBLISHED_ON")
	}
	if (f.TLSCert == "") != (f.TLSKey == "") {
		return f, errors.New("--tls-cert and --tls-key go together")
	}
	if err := f.checkImport(); err != nil {
		return f, err
	}
	if _, err := controllers.ParseList(f.Controllers); err != nil {
		return f, err
	}
	return f, nil
}

// DefaultFlags returns the settings the command starts from.
func DefaultFlags() Flags {
	var f Flags
	f.register(newFlagSet("defaults", io.Discard))
	return f
}

// Flags are the command's settings.
type Flags struct {
	Addr          string
	DataDir       string
	KubeconfigOut string
	// Kubeconfig or InCluster attach minisched to an existing cluster.
	Kubeconfig string
	InCluster  bool
	// AllowWrites lets the API and scenarios write to the cluster minisched
	// is attached to (only objects it labels itself).
	AllowWrites          bool
	LeaderElect          bool
	LeaderElectNamespace string
	// Lease is the leader election's timing, as kube-scheduler's
	// --leader-elect-lease-duration, -renew-deadline and -retry-period.
	Lease           LeaseTiming
	SchedulerConfig string
	SchedulerName   string
	History         int
	HistoryBytes    int
	AllowedOrigins  string
	Seed            int64
	Paused          bool
	Verbosity       int
	WebDir          string
	// Token, when set, is required on every request (env MINISCHED_TOKEN).
	Token string
	// InsecureNoToken lets minisched listen beyond loopback without a token.
	InsecureNoToken bool
	// PublishedOn is where a container's port is published on its host
	// (env MINISCHED_PUBLISHED_ON): on loopback, listening on 0.0.0.0 inside
	// the container exposes nothing.
	PublishedOn string
	// TLSCert and TLSKey serve HTTPS.
	TLSCert, TLSKey string
	// TrustedProxies are CIDRs of reverse proxies whose X-Forwarded-For the
	// rate limit believes.
	TrustedProxies string
	RateLimit      float64
	MaxNodes       int
	MaxPods        int
	// ScenariosDir adds its *.yaml files to the bundled scenarios.
	ScenariosDir string
	// StreamBuffer is how far a stream client may lag before it is
	// resynchronised; StreamWriteTimeout is how long one write may take
	// before the client counts as stalled and is disconnected.
	StreamBuffer       int
	StreamWriteTimeout time.Duration
	// Load is a snapshot file (GET /api/v1/export's document) loaded into
	// the embedded cluster at start.
	Load string
	// ImportFrom is a kubeconfig whose cluster is copied, read only, into
	// the embedded one at start; ImportNamespaces, ImportSelector and
	// ImportPods pick what is copied.
	ImportFrom string
	// Mirror is a kubeconfig whose cluster is copied as ImportFrom's is,
	// and then followed by watch: the copy stays in step, read only.
	Mirror           string
	ImportNamespaces string
	ImportSelector   string
	ImportPods       string
	// Controllers is kube-controller-manager's --controllers for the
	// embedded cluster: "*" for its defaults, "-name" to drop one, empty
	// for none (a scheduler-only cluster).
	Controllers string
	// Kubelets runs a simulated kubelet for every node of the embedded
	// cluster; PodStartDelay, MaxGracePeriod and NodeLeaseDuration tune
	// them.
	Kubelets          bool
	PodStartDelay     time.Duration
	MaxGracePeriod    time.Duration
	NodeLeaseDuration time.Duration
}

func (f *Flags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Addr, "addr", "127.0.0.1:8080", "address the dashboard and API listen on; keep it on loopback unless the room needs it")
	fs.StringVar(&f.DataDir, "data-dir", "", "keep etcd's data here across restarts (default: a temporary directory removed on exit)")
	fs.StringVar(&f.KubeconfigOut, "kubeconfig-out", "", "write a kubeconfig for kubectl here (default: <data dir>/kubeconfig)")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "attach to the cluster of this kubeconfig instead of starting an embedded one, as a second scheduler")
	fs.BoolVar(&f.InCluster, "in-cluster", false, "attach to the cluster minisched runs in (its pod's service account)")
	fs.BoolVar(&f.AllowWrites, "allow-writes", false, "when attached, let the API and scenarios create objects (labelled "+cluster.OwnerLabel+") and delete those, and only those; without it minisched only reads the cluster")
	fs.BoolVar(&f.LeaderElect, "leader-elect", true, "when attached, schedule only while holding a lease, so that one of several replicas schedules")
	fs.StringVar(&f.LeaderElectNamespace, "leader-elect-namespace", "", "namespace of the lease (default: $POD_NAMESPACE, else default)")
	fs.DurationVar(&f.Lease.Duration, "leader-elect-lease-duration", 15*time.Second, "how long a standby replica waits after the last renewal before it takes the lease")
	fs.DurationVar(&f.Lease.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it stops scheduling")
	fs.DurationVar(&f.Lease.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often replicas try to take or renew the lease")
	fs.StringVar(&f.SchedulerConfig, "scheduler-config", "", "a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file; default: kube-scheduler's defaults")
	fs.StringVar(&f.SchedulerName, "scheduler-name", "", "schedule the pods with this spec.schedulerName (default: default-scheduler; minisched when attached)")
	fs.IntVar(&f.StreamBuffer, "stream-buffer", 50_000, "how many events a stream client may lag behind before it is resynchronised from a fresh snapshot")
	fs.IntVar(&f.History, "history", 500_000, "how many events and plugin results the history keeps; the oldest go first")
	fs.IntVar(&f.HistoryBytes, "history-bytes", 256<<20, "the most memory, in bytes, the history may hold (events and their encoding); the oldest go first")
	fs.StringVar(&f.AllowedOrigins, "allowed-origins", "", "comma-separated origins (scheme://host:port), besides the server's own, whose pages may use the API and the stream; their hosts are accepted in Host headers")
	fs.Int64Var(&f.Seed, "seed", 0, "non-zero: repeatable runs; Filter checks nodes one at a time, in order, as kube-scheduler with parallelism 1, so that which of equally scored nodes wins never depends on goroutine timing (0: parallel, as kube-scheduler; docs/FIDELITY.md)")
	fs.BoolVar(&f.Paused, "paused", false, "start with the scheduler paused")
	fs.StringVar(&f.Token, "token", "", "require this token on every request but health probes (default $MINISCHED_TOKEN, the better place for it); open the dashboard as /?token=...")
	fs.BoolVar(&f.InsecureNoToken, "insecure-no-token", false, "listen beyond loopback without a token: anyone who reaches the address can change the cluster")
	fs.StringVar(&f.PublishedOn, "published-on", "", "in a container: the host address its port is published on (default $MINISCHED_PUBLISHED_ON); loopback there makes 0.0.0.0 inside safe without a token")
	fs.StringVar(&f.TLSCert, "tls-cert", "", "serve HTTPS with this certificate (PEM); with --tls-key")
	fs.StringVar(&f.TLSKey, "tls-key", "", "the private key (PEM) of --tls-cert")
	fs.StringVar(&f.TrustedProxies, "trusted-proxies", "", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For names the client the rate limit counts")
	fs.Float64Var(&f.RateLimit, "rate-limit", 0, "changing requests (POST, PUT, DELETE) a second each client may make, bursts of ten times that (default: none on loopback, 20 beyond it)")
	fs.IntVar(&f.MaxNodes, "max-nodes", 5000, "the most nodes the API and scenarios may create")
	fs.IntVar(&f.MaxPods, "max-pods", 50000, "the most pods the API and scenarios may create")
	fs.StringVar(&f.ScenariosDir, "scenarios-dir", "", "a folder of scenario files (*.yaml) to offer beside the bundled ones")
	fs.StringVar(&f.WebDir, "web-dir", "", "serve the dashboard from this directory instead of the embedded files (to work on the dashboard without rebuilding)")
	f.registerCopy(fs)
	fs.StringVar(&f.Mirror, "mirror", "", "copy the cluster of this kubeconfig as --import-from does, then keep the copy in step by watch: new pending pods there are scheduled by minisched here, and each pod shows where the real scheduler put it; minisched only gets, lists and watches there")
	fs.StringVar(&f.Controllers, "controllers", "*", "the kube-controller-manager controllers the embedded cluster runs, as kube-controller-manager's flag: * for its defaults, -name to drop one (-garbagecollector), empty for none; not when attached")
	fs.BoolVar(&f.Kubelets, "kubelets", true, "simulate a kubelet on every node of the embedded cluster: Leases and Ready nodes, pods that run, finish and terminate (docs/FIDELITY.md); not when attached")
	fs.DurationVar(&f.PodStartDelay, "pod-start-delay", kubelet.DefaultStartDelay, "with --kubelets: how long a bound pod takes to become Running")
	fs.DurationVar(&f.MaxGracePeriod, "max-grace-period", kubelet.DefaultMaxGracePeriod, "with --kubelets: the longest a graceful deletion waits, whatever the pod's grace period (negative: no cap)")
	fs.DurationVar(&f.NodeLeaseDuration, "node-lease-duration", kubelet.DefaultLeaseDuration, "with --kubelets: the kubelets' nodeLeaseDurationSeconds, whole seconds; each node's Lease is renewed every quarter of it, and node lifecycle's grace period is 5/4 of it (upstream's 40s and 50s). Thousands of nodes on a small machine want a longer one: at 40s, 5,000 nodes write 500 Leases a second")
	fs.IntVarP(&f.Verbosity, "v", "v", 0, "log verbosity; 2 or more also shows the embedded apiserver's and etcd's own logs")
}

// registerCopy adds the flags that start from a copy of a cluster: the
// server's and `minisched whatif`'s.
func (f *Flags) registerCopy(fs *pflag.FlagSet) {
	fs.StringVar(&f.Load, "load", "", "load this snapshot (the document GET /api/v1/export answers, YAML or JSON) into the embedded cluster at start, with its scheduler configuration unless --scheduler-config")
	fs.StringVar(&f.ImportFrom, "import-from", "", "copy the cluster of this kubeconfig into the embedded one at start: nodes, pods, namespaces, PriorityClasses, storage and devices; minisched only gets and lists there")
	fs.StringVar(&f.ImportNamespaces, "import-namespaces", "", "with --import-from or --mirror: copy only these comma-separated namespaces (default: all)")
	fs.StringVar(&f.ImportSelector, "import-selector", "", "with --import-from or --mirror: copy only the pods this label selector matches")
	fs.StringVar(&f.ImportPods, "import-pods", "all", "with --import-from: copy the pods that are bound, pending, or all; pending ones minisched schedules in the copy")
}

// Run runs minisched until ctx ends.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) error {
	if len(args) > 0 && args[0] == "scenario" {
		return runScenarios(ctx, args[1:], stdout, stderr, opts...)
	}
	if len(args) > 0 && args[0] == "replay" {
		return replay(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "whatif" {
		return whatIf(ctx, args[1:], stdout, stderr, opts...)
	}
	f, err := parseFlags(args, stderr)
	if err != nil {
		return usage(err, stderr)
	}
	QuietKlog(f.Verbosity)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-4 * f.Verbosity)}))
	inst, err := Start(ctx, f, log, opts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "minisched dashboard: %s\n", inst.URL)
	var died <-chan error // nil, so never ready, when attached to a real cluster
	if inst.ControlPlane != nil {
		died = inst.ControlPlane.Err()
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-died:
		// Exit, so that a supervisor (compose, a Deployment) restarts us.
		log.Error("the embedded control plane died", "err", err)
		_ = inst.Close()
		return fmt.Errorf("the embedded control plane died: %w", err)
	}
	return inst.Close()
}

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

	cancel context.CancelFunc
	served chan error
}

// Start brings everything up and returns once the dashboard serves.
func Start(ctx context.Context, f Flags, log *slog.Logger, opts ...Option) (_ *Instance, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	exposed, err := checkAddr(f, log)
	if err != nil {
		return nil, err
	}
	proxies, err := parseCIDRs(f.TrustedProxies)
	if err != nil {
		return nil, err
	}
	rateLimit := f.RateLimit
	if rateLimit == 0 && exposed {
		rateLimit = 20
	}
	attached := f.Kubeconfig != "" || f.InCluster
	schedulerName := f.SchedulerName
	if schedulerName == "" {
		schedulerName = "default-scheduler"
		if attached {
			schedulerName = "minisched"
		}
	}
	// A bad configuration, snapshot or source cluster is refused before
	// anything starts.
	cfg, err := schedulerConfig(f.SchedulerConfig, schedulerName)
	if err != nil {
		return nil, err
	}
	snap, err := startingSnapshot(ctx, f, log)
	if err != nil {
		return nil, err
	}
	if cfg, err = snap.config(f, cfg, schedulerName); err != nil {
		return nil, err
	}
	inst := &Instance{}
	ctx, inst.cancel = context.WithCancel(ctx)
	defer func() {
		if err != nil {
			_ = inst.Close()
		}
	}()
	started := time.Now()
	if attached {
		if inst.RESTConfig, err = attach(f); err != nil {
			return nil, err
		}
		log.Info("attached to a cluster", "apiserver", inst.RESTConfig.Host, "schedulerName", schedulerName)
	} else {
		inst.ControlPlane, err = k8sapiserver.Start(ctx, k8sapiserver.Config{
			DataDir: f.DataDir, KubeconfigPath: f.KubeconfigOut, EtcdLogs: f.Verbosity >= 2,
		})
		if err != nil {
			return nil, fmt.Errorf("starting the control plane: %w", err)
		}
		inst.RESTConfig = inst.ControlPlane.RESTConfig()
		log.Info("control plane ready", "apiserver", inst.ControlPlane.URL(), "kubeconfig", inst.ControlPlane.KubeconfigPath(),
			"took", time.Since(started).Round(time.Millisecond))
	}
	inst.Client, err = kubernetes.NewForConfig(inst.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("building a client: %w", err)
	}
	if !attached {
		// A real cluster has its own controllers and kubelets.
		if inst.machinery, err = newMachinery(f, inst.RESTConfig, inst.Client, log); err != nil {
			return nil, err
		}
		if inst.machinery != nil {
			if err := inst.machinery.start(ctx); err != nil {
				return nil, err
			}
			log.Debug("controllers and kubelets started", "after", time.Since(started))
		}
	}

	inst.Recorder = history.New(history.Options{MaxWeight: f.History, MaxBytes: f.HistoryBytes})
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	var pending func() map[event.QueueName]int
	counts := metrics.New(reg, func() map[event.QueueName]int { return pending() })
	observer := event.Multi(inst.Recorder, counts)
	inst.Scheduler = minisched.NewService(minisched.ServiceOptions{
		Client: inst.Client, RESTConfig: inst.RESTConfig, Observer: observer, OutOfTree: o.outOfTree,
		Tuning: minisched.Tuning{Seed: f.Seed}, StartPaused: f.Paused,
	})
	pending = func() map[event.QueueName]int {
		if s := inst.Scheduler.Scheduler(); s != nil {
			return s.Queue().Counts()
		}
		return nil
	}
	if attached && f.LeaderElect {
		ns := f.LeaderElectNamespace
		if ns == "" {
			ns = cmp.Or(os.Getenv("POD_NAMESPACE"), "default")
		}
		start := func(ctx context.Context) {
			// A regained lease keeps the configuration last PUT.
			current := cfg
			if last := inst.Scheduler.Config(); last != nil {
				current = last
			}
			if err := inst.Scheduler.Start(ctx, current); err != nil {
				log.Error("starting the scheduler", "err", err)
			}
		}
		if err := elect(ctx, inst.Client, f.Lease, ns, schedulerName, log, start, inst.Scheduler.Stop); err != nil {
			return nil, err
		}
	} else if err := inst.Scheduler.Start(ctx, cfg); err != nil {
		return nil, fmt.Errorf("starting the scheduler: %w", err)
	}
	log.Debug("scheduler started", "after", time.Since(started))

	var health func() error
	if inst.ControlPlane != nil {
		health = inst.ControlPlane.Healthy
	}
	webFS := web.FS()
	if f.WebDir != "" {
		webFS = os.DirFS(f.WebDir)
	}
	var pause func() func() error
	if inst.machinery != nil {
		pause = inst.machinery.pause
	}
	var meta metadata.Interface
	if !attached {
		if meta, err = metadata.NewForConfig(inst.RESTConfig); err != nil {
			return nil, fmt.Errorf("building a metadata client: %w", err)
		}
	}
	inst.Cluster = cluster.New(cluster.Options{
		Client: inst.Client, Observer: observer, Writes: writes(attached, f.AllowWrites), MaxNodes: f.MaxNodes, MaxPods: f.MaxPods,
		Metadata: meta, Pause: pause,
	})
	inst.Server = server.New(server.Options{
		Client: inst.Client, Cluster: inst.Cluster, Scheduler: inst.Scheduler, Recorder: inst.Recorder, Observer: observer,
		Web: webFS, Bundled: bundled(f.ScenariosDir), SchedulerName: schedulerName, Metrics: reg, StreamMetrics: counts,
		Addr: f.Addr, AllowedOrigins: splitList(f.AllowedOrigins), AllowReset: !attached, Health: health,
		Token: f.Token, RateLimit: rateLimit, TrustedProxies: proxies, TLSCert: f.TLSCert, TLSKey: f.TLSKey, StreamBuffer: f.StreamBuffer, StreamWriteTimeout: f.StreamWriteTimeout,
		CopyOf: snap.copyOf(),
	})
	if err := inst.Server.Start(ctx); err != nil {
		return nil, fmt.Errorf("watching the cluster: %w", err)
	}
	log.Debug("cluster watched", "after", time.Since(started))
	if err := snap.load(ctx, inst.Client, pause, f, log); err != nil {
		return nil, err
	}
	if f.Mirror != "" {
		if inst.Mirror, err = snap.follow(ctx, inst.Cluster, inst.Client, f, log); err != nil {
			return nil, err
		}
		// A reset ends the copy, and with it the mirror.
		inst.Cluster.OnReset(inst.Mirror.Stop)
		inst.Server.Follow(inst.Mirror)
	}
	l, err := net.Listen("tcp", f.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", f.Addr, err)
	}
	inst.served = make(chan error, 1)
	go func() { inst.served <- inst.Server.Serve(l) }()
	scheme := "http"
	if f.TLSCert != "" {
		scheme = "https"
	}
	inst.URL = scheme + "://" + l.Addr().String() + "/"
	return inst, nil
}

// Controllers names the kube-controller-manager controllers that run on
// the embedded cluster, sorted; none when attached or with --controllers=.
func (inst *Instance) Controllers() []string {
	if inst.machinery == nil {
		return nil
	}
	return inst.machinery.names()
}

// Close stops the server, the scheduler and the control plane, in that
// order, within a few seconds.
func (inst *Instance) Close() error {
	var errs []error
	if inst.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := inst.Server.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping the server: %w", err))
		}
		cancel()
		if inst.served != nil {
			if err := <-inst.served; err != nil {
				errs = append(errs, err)
			}
		}
	}
	if inst.Mirror != nil {
		inst.Mirror.Stop()
	}
	if inst.Scheduler != nil {
		inst.Scheduler.Stop()
	}
	if inst.machinery != nil {
		if err := inst.machinery.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if inst.cancel != nil {
		inst.cancel()
	}
	if inst.ControlPlane != nil {
		if err := inst.ControlPlane.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bundled is the scenarios the dashboard offers: the embedded ones, and a
// folder's, which win on a name both have.
func bundled(dir string) []fs.FS {
	if dir == "" {
		return []fs.FS{examples.Scenarios()}
	}
	return []fs.FS{os.DirFS(dir), examples.Scenarios()}
}

// attach builds the client configuration of an existing cluster.
func attach(f Flags) (*rest.Config, error) {
	if f.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--in-cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", f.Kubeconfig, err)
	}
	return cfg, nil
}

func schedulerConfig(path, schedulerName string) (*config.KubeSchedulerConfiguration, error) {
	if path == "" {
		return schedconfig.Default(schedulerName)
	}
	return configFile("--scheduler-config", path, schedulerName)
}

// configFile reads the KubeSchedulerConfiguration a flag names; errors
// name the flag.
func configFile(flag, path, schedulerName string) (*config.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", flag, err)
	}
	cfg, err := schedconfig.Load(data, schedulerName)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return cfg, nil
}

// checkAddr refuses to listen beyond loopback without a token, unless told
// so, and says whether the dashboard is exposed to other machines.
func checkAddr(f Flags, log *slog.Logger) (exposed bool, err error) {
	if _, _, err := net.SplitHostPort(f.Addr); err != nil {
		return false, fmt.Errorf("--addr %q: %w", f.Addr, err)
	}
	if !loopback(f.Addr) && (f.PublishedOn == "" || !loopback(net.JoinHostPort(f.PublishedOn, "0"))) {
		exposed = true
	}
	switch {
	case !exposed:
		return false, nil
	case f.Token != "":
		log.Warn("the dashboard listens beyond loopback on " + f.Addr + "; every request must carry the token")
	case f.InsecureNoToken:
		log.Warn("the dashboard listens beyond loopback without a token (--insecure-no-token): anyone who can reach " + f.Addr +
			" can create and delete pods and nodes")
	default:
		return true, fmt.Errorf("--addr %s listens beyond loopback: give a token (MINISCHED_TOKEN or --token), "+
			"or --insecure-no-token to let anyone who reaches it change the cluster "+
			"(in a container published on the host's loopback, set MINISCHED_PUBLISHED_ON=127.0.0.1)", f.Addr)
	}
	return true, nil
}

// writes is what the API and scenarios may write: everything on the
// embedded cluster; on a real one nothing, or with --allow-writes only what
// minisched labels.
func writes(attached, allow bool) cluster.Writes {
	switch {
	case !attached:
		return cluster.WritesAll
	case allow:
		return cluster.WritesOwned
	}
	return cluster.WritesNone
}

// loopback says whether a host:port listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

func parseCIDRs(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, part := range splitList(s) {
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// QuietKlog keeps the Kubernetes components' logs out of the console unless
// asked for: at -v 2 and above they go to stderr at verbosity v-2.
func QuietKlog(v int) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if v >= 2 {
		_ = fs.Set("v", strconv.Itoa(v-2))
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
