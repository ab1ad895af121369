package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"minisched/cluster"
	"minisched/controllers"
	"minisched/kubelet"
)

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
			"  minisched whatif ...              schedule a copy of a cluster's workload again and compare\n"+
			"  minisched why NAMESPACE/POD       why a pending pod fits no node, and what would make it fit\n\nFlags:\n")
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
	if _, err := parseFeatureGates(f.FeatureGates); err != nil {
		return f, usageError{err, fs.Name()}
	}
	if f.BindingTimeout < 0 {
		return f, usageError{fmt.Errorf("--binding-timeout %v is negative", f.BindingTimeout), fs.Name()}
	}
	if f.AllowHostAccess && !f.AllowWrites {
		return f, errors.New("--allow-host-access goes with --allow-writes")
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
	AllowWrites bool
	// AllowWritesIn names the namespaces --allow-writes may create in;
	// AllowHostAccess lets its pods use the host's namespaces and paths.
	AllowWritesIn        string
	AllowHostAccess      bool
	LeaderElect          bool
	LeaderElectNamespace string
	// Lease is the leader election's timing, as kube-scheduler's
	// --leader-elect-lease-duration, -renew-deadline and -retry-period.
	Lease           LeaseTiming
	SchedulerConfig string
	SchedulerName   string
	// FeatureGates is kube-scheduler's --feature-gates (A=true,B=false),
	// for the whole run: the scheduler, the embedded apiserver and the
	// controllers.
	FeatureGates string
	// BindingTimeout bounds one extension point of the binding cycle
	// (minisched.Options.BindingTimeout); zero: the profile's longest wait
	// and a minute.
	BindingTimeout time.Duration
	History        int
	HistoryBytes   int
	AllowedOrigins string
	Seed           int64
	Paused         bool
	Verbosity      int
	WebDir         string
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
	fs.StringVar(&f.AllowWritesIn, "allow-writes-in", "default", "with --allow-writes, the comma-separated namespaces minisched may create in")
	fs.BoolVar(&f.AllowHostAccess, "allow-host-access", false, "with --allow-writes, let the pods minisched creates use hostNetwork, hostPID, hostIPC and hostPath volumes")
	fs.BoolVar(&f.LeaderElect, "leader-elect", true, "when attached, schedule only while holding a lease, so that one of several replicas schedules")
	fs.StringVar(&f.LeaderElectNamespace, "leader-elect-namespace", "", "namespace of the lease (default: $POD_NAMESPACE, else default)")
	fs.DurationVar(&f.Lease.Duration, "leader-elect-lease-duration", 15*time.Second, "how long a standby replica waits after the last renewal before it takes the lease")
	fs.DurationVar(&f.Lease.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it stops scheduling")
	fs.DurationVar(&f.Lease.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often replicas try to take or renew the lease")
	fs.StringVar(&f.SchedulerConfig, "scheduler-config", "", "a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file; default: kube-scheduler's defaults")
	fs.StringVar(&f.SchedulerName, "scheduler-name", "", "schedule the pods with this spec.schedulerName (default: default-scheduler; minisched when attached)")
	fs.StringVar(&f.FeatureGates, "feature-gates", "", "kube-scheduler's feature gates, A=true,B=false, for the whole run: the scheduler, and the embedded apiserver and controllers (so gated APIs are served); gates minisched does not model yet are refused, saying which")
	fs.DurationVar(&f.BindingTimeout, "binding-timeout", 0, "the longest one binding-cycle point (PreBind, Bind, PostBind) may take before the pod's binding fails; default: the longest the profile's plugins may wait there (VolumeBinding's bindTimeoutSeconds, DynamicResources' bindingTimeout, 600s each) and a minute, so no upstream wait is cut short")
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
