package k8sapiserver

// The embedded kube-apiserver, started as its own test server starts it
// (cmd/kube-apiserver/app/testing/testserver.go), on loopback only.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/keyutil"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	schedulingv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
)

// watchAPIServer reports the apiserver's Run returning, unless Close asked
// for it.
func (cp *ControlPlane) watchAPIServer() {
	select {
	case <-cp.apiDone:
		err := cp.apiErr
		if err == nil {
			err = errors.New("Run returned")
		}
		cp.fail(fmt.Errorf("kube-apiserver stopped: %w", err))
	case <-cp.stopping:
	}
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	pki := filepath.Join(cp.dataDir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return fmt.Errorf("creating certificate directory: %w", err)
	}
	saKey, err := serviceAccountKey(filepath.Join(pki, "sa.key"))
	if err != nil {
		return err
	}

	// The component-globals registry is our own, so that a second control
	// plane in one process (the differential test runs two) does not
	// register twice in the global one. The feature gate is the process's
	// global gate: the apiserver's code reads that one directly.
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
	s.Etcd.StorageConfig.Transport.ServerList = []string{cp.etcdURL}
	s.EventTTL = cp.cfg.EventTTL
	// kube-apiserver deletes a collection one object at a time by default;
	// a reset deletes every pod at once, and a room waits for it.
	s.Etcd.DeleteCollectionWorkers = deleteCollectionWorkers
	s.ServiceAccountSigningKeyFile = saKey
	s.Authentication.ServiceAccounts.Issuers = []string{"https://minisched.invalid"}
	s.Authentication.ServiceAccounts.KeyFiles = []string{saKey}
	// Every client holds the loopback token anyway; RBAC's bootstrap would
	// only add a second to the start.
	s.Authorization.Modes = []string{"AlwaysAllow"}
	if cp.cfg.RBAC {
		s.Authorization.Modes = []string{"RBAC"}
	}
	s.Admission.GenericAdmission.DisablePlugins = cp.cfg.DisableAdmissionPlugins
	maps.Copy(s.APIEnablement.RuntimeConfig, cp.cfg.RuntimeConfig)

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
	config.KubeAPIs.ControlPlane.Generic.DisabledPostStartHooks.Insert(priorityClassesHook)
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
	go func() {
		cp.apiErr = prepared.Run(runCtx)
		close(cp.apiDone)
	}()
	go cp.watchAPIServer()

	cp.restConfig = rest.CopyConfig(server.GenericAPIServer.LoopbackClientConfig)
	cp.restConfig.QPS, cp.restConfig.Burst = 5000, 10000
	cp.apiURL = cp.restConfig.Host
	return cp.waitReady(ctx)
}

// systemPriorityClasses creates the classes priorityClassesHook would
// create, from the same list, and says whether all of them exist.
func systemPriorityClasses(ctx context.Context, client kubernetes.Interface) bool {
	for _, pc := range schedulingv1.SystemPriorityClasses() {
		_, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return false
		}
	}
	return true
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
