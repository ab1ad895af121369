// Package k8sapiserver runs a real etcd and a real kube-apiserver inside the
// current process, listening on loopback only.
//
// Its shape follows etcd's embed package: fill a Config, call Start, wait on
// Ready (Start already does), use RESTConfig, and Close when done.
package k8sapiserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/keyutil"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
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
	// EtcdLogs shows etcd's own logs on stderr. Off by default: they are noise
	// to a person who came to watch a scheduler.
	EtcdLogs bool
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	cfg        Config
	dataDir    string
	removeDir  bool
	etcd       *embed.Etcd
	restConfig *rest.Config
	apiURL     string
	ready      chan struct{}
	cancel     context.CancelFunc
	done       chan error
	closeOnce  sync.Once
	closeErr   error
}

// DisabledAdmissionPlugins are switched off because no controller-manager
// runs beside this apiserver: ServiceAccount would refuse every pod
// ("serviceaccount default not found") and TaintNodesByCondition would taint
// every new node not-ready, so nothing would ever schedule.
var DisabledAdmissionPlugins = []string{"ServiceAccount", "TaintNodesByCondition"}

// Start starts etcd and kube-apiserver and returns once the apiserver serves
// requests and the default namespace exists. On error nothing is left running.
func Start(ctx context.Context, cfg Config) (_ *ControlPlane, err error) {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = time.Minute
	}
	cp := &ControlPlane{cfg: cfg, ready: make(chan struct{}), done: make(chan error, 1)}
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

	etcdURL, err := cp.startEtcd(startCtx)
	if err != nil {
		return nil, err
	}
	if err := cp.startAPIServer(startCtx, etcdURL); err != nil {
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

func (cp *ControlPlane) startEtcd(ctx context.Context) (string, error) {
	ec := embed.NewConfig()
	ec.Name = "minisched"
	ec.Dir = filepath.Join(cp.dataDir, "etcd")
	loopback := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	ec.ListenClientUrls = []url.URL{loopback}
	ec.AdvertiseClientUrls = []url.URL{loopback}
	ec.ListenPeerUrls = []url.URL{loopback}
	ec.AdvertisePeerUrls = []url.URL{loopback}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	ec.ListenMetricsUrls = nil
	// A temporary directory is gone on exit anyway: skip fsync, which makes
	// the apiserver's hundreds of bootstrap writes slow on some disks.
	ec.UnsafeNoFsync = cp.removeDir
	// One member elects itself: a short election timeout saves most of a
	// second at every start.
	ec.TickMs, ec.ElectionMs = 10, 100
	if !cp.cfg.EtcdLogs {
		ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return "", fmt.Errorf("starting etcd: %w", err)
	}
	cp.etcd = e
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return "", fmt.Errorf("etcd failed while starting: %w", err)
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for etcd: %w", ctx.Err())
	}
	return "http://" + e.Clients[0].Addr().String(), nil
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, etcdURL string) error {
	pki := filepath.Join(cp.dataDir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return fmt.Errorf("creating certificate directory: %w", err)
	}
	saKey, err := serviceAccountKey(filepath.Join(pki, "sa.key"))
	if err != nil {
		return err
	}

	// A registry of our own keeps two control planes in one process (the
	// differential test runs two) from fighting over the global one.
	featureGate := utilfeature.DefaultMutableFeatureGate
	effective := compatibility.DefaultBuildEffectiveVersion()
	registry := basecompatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(basecompatibility.DefaultKubeComponent, effective, featureGate); err != nil {
		return fmt.Errorf("registering component globals: %w", err)
	}

	s := options.NewServerRunOptions()
	s.GenericServerRunOptions.ComponentGlobalsRegistry = registry
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening on loopback: %w", err)
	}
	s.SecureServing.Listener = listener
	s.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	s.SecureServing.BindPort = listener.Addr().(*net.TCPAddr).Port
	s.SecureServing.ExternalAddress = net.ParseIP("127.0.0.1")
	s.SecureServing.ServerCert.CertDirectory = pki
	s.ServiceClusterIPRanges = "10.0.0.0/16"
	s.EndpointReconcilerType = "none"
	s.Etcd.StorageConfig.Transport.ServerList = []string{etcdURL}
	s.ServiceAccountSigningKeyFile = saKey
	s.Authentication.ServiceAccounts.Issuers = []string{"https://minisched.invalid"}
	s.Authentication.ServiceAccounts.KeyFiles = []string{saKey}
	// Every client holds the loopback token anyway; RBAC's bootstrap would
	// only add a second to the start.
	s.Authorization.Modes = []string{"AlwaysAllow"}
	s.Admission.GenericAdmission.DisablePlugins = DisabledAdmissionPlugins

	if err := registry.Set(); err != nil {
		return fmt.Errorf("applying component globals: %w", err)
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return fmt.Errorf("completing apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return fmt.Errorf("validating apiserver options: %w", errors.Join(errs...))
	}
	config, err := app.NewConfig(completed)
	if err != nil {
		return fmt.Errorf("building apiserver config: %w", err)
	}
	completedConfig, err := config.Complete()
	if err != nil {
		return fmt.Errorf("completing apiserver config: %w", err)
	}
	server, err := app.CreateServerChain(completedConfig)
	if err != nil {
		return fmt.Errorf("creating apiserver: %w", err)
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return fmt.Errorf("preparing apiserver: %w", err)
	}

	runCtx, cancel := context.WithCancel(context.Background())
	cp.cancel = cancel
	go func() { cp.done <- prepared.Run(runCtx) }()

	cp.restConfig = rest.CopyConfig(server.GenericAPIServer.LoopbackClientConfig)
	cp.restConfig.QPS, cp.restConfig.Burst = 5000, 10000
	cp.apiURL = cp.restConfig.Host
	return cp.waitReady(ctx)
}

// waitReady waits for /readyz and the default namespace, which the apiserver
// creates a moment after it starts serving.
func (cp *ControlPlane) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(cp.restConfig)
	if err != nil {
		return fmt.Errorf("building a client: %w", err)
	}
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-cp.done:
			cp.done <- err
			return false, fmt.Errorf("apiserver stopped while starting: %w", err)
		default:
		}
		status := 0
		client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status != 200 {
			return false, nil
		}
		_, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, nil
	})
}

// serviceAccountKey returns the path of a signing key, made once per data
// directory so that tokens stay valid across restarts.
func serviceAccountKey(path string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generating service account key: %w", err)
	}
	pem, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return "", fmt.Errorf("encoding service account key: %w", err)
	}
	if err := keyutil.WriteKey(path, pem); err != nil {
		return "", fmt.Errorf("writing service account key: %w", err)
	}
	return path, nil
}

// Ready is closed once the control plane serves requests.
func (cp *ControlPlane) Ready() <-chan struct{} { return cp.ready }

// RESTConfig returns a copy of a privileged client configuration.
func (cp *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(cp.restConfig) }

// URL is the apiserver's address, https://127.0.0.1:<port>.
func (cp *ControlPlane) URL() string { return cp.apiURL }

// KubeconfigPath is where the kubeconfig for kubectl was written.
func (cp *ControlPlane) KubeconfigPath() string { return cp.cfg.KubeconfigPath }

// DataDir is the directory that holds etcd's data.
func (cp *ControlPlane) DataDir() string { return cp.dataDir }

// Close stops the apiserver, then etcd, and removes a temporary data
// directory. It is safe to call more than once.
func (cp *ControlPlane) Close() error {
	cp.closeOnce.Do(func() {
		var errs []error
		if cp.cancel != nil {
			cp.cancel()
			select {
			case err := <-cp.done:
				if err != nil && !errors.Is(err, context.Canceled) {
					errs = append(errs, fmt.Errorf("stopping apiserver: %w", err))
				}
			case <-time.After(20 * time.Second):
				errs = append(errs, errors.New("apiserver did not stop within 20s"))
			}
		}
		if cp.etcd != nil {
			cp.etcd.Close()
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
