// Package k8sapiserver runs a real etcd and a real kube-apiserver inside the
// current process. The apiserver listens on loopback only; etcd listens on a
// unix socket in a 0700 directory, so that no other local user reaches it.
//
// Its shape follows etcd's embed package: fill a Config, call Start (it
// returns once Ready is closed), use RESTConfig, watch Err for a component
// that dies, ask Healthy, and Close when done.
package k8sapiserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/embed"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	schedulingrest "k8s.io/kubernetes/pkg/registry/scheduling/rest"
)

// Config says where the control plane keeps its data and how it starts.
type Config struct {
	// DataDir holds etcd's data, the apiserver's certificates and keys.
	// Empty means a fresh temporary directory that Close removes.
	DataDir string
	// KubeconfigPath is where a kubeconfig for kubectl is written.
	// Empty means DataDir/kubeconfig.
	KubeconfigPath string
	// StartTimeout bounds Start. Zero means one minute.
	StartTimeout time.Duration
	// EtcdLogs shows etcd's own logs, and those of the apiserver's etcd
	// clients, on stderr. Off by default: they are noise to a person who
	// came to watch a scheduler.
	EtcdLogs bool

	// The bounds below keep a long workshop from growing without end.

	// QuotaBackendBytes caps etcd's database file. Past it etcd raises its
	// NOSPACE alarm and refuses writes (reads and deletes still work) and
	// Healthy reports it. Zero means DefaultQuotaBackendBytes (2 GiB, etcd's
	// own default, set explicitly so that it shows in the configuration);
	// negative turns the quota off.
	QuotaBackendBytes int64
	// CompactionRetention is how much history etcd keeps: etcd's periodic
	// auto-compaction drops revisions older than that, every
	// CompactionRetention. Zero means DefaultCompactionRetention (5 minutes,
	// the interval at which kube-apiserver compacts as well, so a watch that
	// falls further behind relists either way).
	CompactionRetention time.Duration
	// EventTTL is how long the apiserver keeps Events (kube-apiserver's
	// --event-ttl). Zero means DefaultEventTTL (10 minutes, not
	// kube-apiserver's hour): every scheduling attempt writes an Event, and
	// with an hour of them a day-long workshop's heap grew from 274 MB to
	// 720 MB over 10,000 pods.
	EventTTL time.Duration
	// DisableAdmissionPlugins are switched off in the apiserver. Nil means
	// DefaultDisabledAdmissionPlugins().
	DisableAdmissionPlugins []string
	// RBAC authorizes requests with RBAC rather than allowing every one,
	// so that a test can act as an identity with only some permissions
	// (RESTConfig's own identity is in system:masters and may do anything,
	// impersonate included). It adds RBAC's bootstrap to the start.
	RBAC bool
	// RuntimeConfig is kube-apiserver's --runtime-config: API versions to
	// serve beyond the defaults (or to turn off), such as
	// "resource.k8s.io/v1beta2": "true".
	RuntimeConfig map[string]string
}

// The defaults of Config's bounds.
const (
	DefaultQuotaBackendBytes   = 2 << 30
	DefaultCompactionRetention = 5 * time.Minute
	DefaultEventTTL            = 10 * time.Minute

	deleteCollectionWorkers = 8
)

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	cfg       Config
	dataDir   string
	removeDir bool
	// runDir holds etcd's socket; removeRunDir says it is a temporary
	// directory of its own (see makeRunDir).
	runDir       string
	removeRunDir bool
	etcdURL      string
	etcd         *embed.Etcd
	etcdStop     sync.Once
	restConfig   *rest.Config
	apiURL       string
	ready        chan struct{}
	// cancel stops the apiserver; apiDone is closed when its Run returned,
	// with apiErr set before.
	cancel  context.CancelFunc
	apiDone chan struct{}
	apiErr  error
	// stopping is closed when Close begins: a component that stops after
	// that is no failure.
	stopping chan struct{}
	// failed is closed at the first failure, with failure set before; errc
	// carries it to Err's first reader.
	failed    chan struct{}
	failure   error
	failOnce  sync.Once
	errc      chan error
	closeOnce sync.Once
	closeErr  error
}

// DefaultDisabledAdmissionPlugins are those no controller-manager beside
// this apiserver would make work: ServiceAccount would refuse every pod
// ("serviceaccount default not found") and TaintNodesByCondition would taint
// every new node not-ready, so nothing would ever schedule.
func DefaultDisabledAdmissionPlugins() []string {
	return []string{"ServiceAccount", "TaintNodesByCondition"}
}

// Start starts etcd and kube-apiserver and returns once the apiserver serves
// requests and the default namespace exists. On error nothing is left running.
func Start(ctx context.Context, cfg Config) (_ *ControlPlane, err error) {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = time.Minute
	}
	if cfg.DisableAdmissionPlugins == nil {
		cfg.DisableAdmissionPlugins = DefaultDisabledAdmissionPlugins()
	}
	if cfg.QuotaBackendBytes == 0 {
		cfg.QuotaBackendBytes = DefaultQuotaBackendBytes
	}
	if cfg.CompactionRetention == 0 {
		cfg.CompactionRetention = DefaultCompactionRetention
	}
	if cfg.EventTTL == 0 {
		cfg.EventTTL = DefaultEventTTL
	}
	cp := &ControlPlane{
		cfg:      cfg,
		ready:    make(chan struct{}),
		apiDone:  make(chan struct{}),
		stopping: make(chan struct{}),
		failed:   make(chan struct{}),
		errc:     make(chan error, 1),
	}
	if cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "minisched-")
		if err != nil {
			return nil, fmt.Errorf("creating a temporary data directory: %w", err)
		}
		cp.dataDir, cp.removeDir = dir, true
	} else {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating data directory: %w", err)
		}
		cp.dataDir = cfg.DataDir
	}
	defer func() {
		if err != nil {
			_ = cp.Close()
		}
	}()

	startCtx, cancelStart := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancelStart()

	if err := cp.makeRunDir(); err != nil {
		return nil, err
	}
	if err := cp.startEtcd(startCtx); err != nil {
		return nil, err
	}
	if err := cp.startAPIServer(startCtx); err != nil {
		return nil, err
	}
	path := cfg.KubeconfigPath
	if path == "" {
		path = filepath.Join(cp.dataDir, "kubeconfig")
	}
	if err := WriteKubeconfig(path, cp.restConfig); err != nil {
		return nil, err
	}
	cp.cfg.KubeconfigPath = path
	close(cp.ready)
	return cp, nil
}

// maxSocketPath is the longest socket path used: sun_path holds 108 bytes
// on Linux and 104 on macOS, the terminating NUL included.
const maxSocketPath = 100

// fail records the first failure of a component, unless the control plane
// is closing, and hands it to Err.
func (cp *ControlPlane) fail(err error) {
	select {
	case <-cp.stopping:
		return
	default:
	}
	cp.failOnce.Do(func() {
		cp.failure = err
		close(cp.failed)
		cp.errc <- err
		close(cp.errc)
	})
}

// priorityClassesHook is the apiserver's post-start hook that creates the
// system PriorityClasses. It is left out: its first try comes a whole second
// after the server starts (wait.Poll, not PollImmediate), and /readyz fails
// until then, most of the start's wait. Worse for a process that embeds the
// apiserver, it cannot be stopped: closed before it succeeded, it keeps
// retrying and after 30 s ends the whole process (klog.Fatal). waitReady
// creates the same classes at once instead.
const priorityClassesHook = schedulingrest.PostStartHookName

// waitReady waits for /readyz, the system PriorityClasses (which it
// creates, in place of priorityClassesHook), and the default namespace,
// which the apiserver creates a moment after it starts serving.
func (cp *ControlPlane) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(cp.restConfig)
	if err != nil {
		return fmt.Errorf("building a client: %w", err)
	}
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-cp.failed:
			return false, fmt.Errorf("control plane failed while starting: %w", cp.failure)
		default:
		}
		status := 0
		client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status != 200 {
			return false, nil
		}
		if !systemPriorityClasses(ctx, client) {
			return false, nil
		}
		_, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, nil
	})
}

// Ready is closed once the control plane serves requests: the apiserver
// answered /readyz and the default namespace exists. Start returns after
// that, so it is closed on every ControlPlane Start returned; it stays
// closed when a component fails later (see Err and Healthy).
func (cp *ControlPlane) Ready() <-chan struct{} { return cp.ready }

// Err reports a component dying after Start: etcd stopping or losing its
// listener, or the apiserver's Run returning, while Close was not called.
// The first receiver gets the error, then the channel is closed, so every
// receiver wakes; Healthy gives the error to anyone. Close sends nothing.
func (cp *ControlPlane) Err() <-chan error { return cp.errc }

// Healthy returns nil while the control plane serves; otherwise why not:
// not ready yet, closed, a component that died (as Err reported), or an etcd
// alarm (NOSPACE: the database reached QuotaBackendBytes and writes are
// refused; CORRUPT). It is cheap enough for every /healthz request.
func (cp *ControlPlane) Healthy() error {
	select {
	case <-cp.ready:
	default:
		return errors.New("control plane not ready yet")
	}
	select {
	case <-cp.failed:
		return cp.failure
	default:
	}
	select {
	case <-cp.stopping:
		return errors.New("control plane closed")
	default:
	}
	for _, a := range cp.etcd.Server.Alarms() {
		switch a.Alarm {
		case pb.AlarmType_NOSPACE:
			return fmt.Errorf("etcd raised its NOSPACE alarm: the database reached its quota of %d bytes, writes are refused", cp.cfg.QuotaBackendBytes)
		case pb.AlarmType_NONE:
		default:
			return fmt.Errorf("etcd raised its %s alarm", a.Alarm)
		}
	}
	return nil
}

// RESTConfig returns a copy of a privileged client configuration.
func (cp *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(cp.restConfig) }

// URL is the apiserver's address, https://127.0.0.1:<port>.
func (cp *ControlPlane) URL() string { return cp.apiURL }

// EtcdURL is etcd's client address, unix:///<run directory>/etcd.sock.
func (cp *ControlPlane) EtcdURL() string { return cp.etcdURL }

// KubeconfigPath is where the kubeconfig for kubectl was written.
func (cp *ControlPlane) KubeconfigPath() string { return cp.cfg.KubeconfigPath }

// DataDir is the directory that holds etcd's data.
func (cp *ControlPlane) DataDir() string { return cp.dataDir }

// Config returns the configuration the control plane runs with, defaults
// filled in.
func (cp *ControlPlane) Config() Config { return cp.cfg }

// Close stops the apiserver, then etcd, and removes a temporary data
// directory. It is safe to call more than once.
func (cp *ControlPlane) Close() error {
	cp.closeOnce.Do(func() {
		close(cp.stopping)
		var errs []error
		if cp.cancel != nil {
			cp.cancel()
			// After a failure the apiserver cannot stop cleanly: its
			// shutdown hooks wait up to 20 s each for etcd to drop their
			// leases. Do not make the person at Ctrl-C wait for that.
			grace := 20 * time.Second
			select {
			case <-cp.failed:
				grace = 3 * time.Second
			default:
			}
			select {
			case <-cp.apiDone:
				if err := cp.apiErr; err != nil && !errors.Is(err, context.Canceled) {
					errs = append(errs, fmt.Errorf("stopping apiserver: %w", err))
				}
			case <-time.After(grace):
				errs = append(errs, fmt.Errorf("apiserver did not stop within %v", grace))
			}
		}
		cp.stopEtcd()
		if cp.removeRunDir {
			if err := os.RemoveAll(cp.runDir); err != nil {
				errs = append(errs, fmt.Errorf("removing etcd's socket directory: %w", err))
			}
		}
		if cp.removeDir {
			if err := os.RemoveAll(cp.dataDir); err != nil {
				errs = append(errs, fmt.Errorf("removing data directory: %w", err))
			}
		}
		cp.closeErr = errors.Join(errs...)
	})
	return cp.closeErr
}
