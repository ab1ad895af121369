package k8sapiserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func start(t *testing.T, cfg Config) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return cp
}

func TestTemporaryControlPlane(t *testing.T) {
	cp := start(t, Config{})
	select {
	case <-cp.Ready():
	default:
		t.Fatal("Ready is not closed after Start returned")
	}
	if !strings.HasPrefix(cp.URL(), "https://127.0.0.1:") {
		t.Errorf("apiserver listens on %s, want loopback", cp.URL())
	}

	// The kubeconfig it wrote works for a client built from the file alone.
	restCfg, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath())
	if err != nil {
		t.Fatalf("loading the kubeconfig: %v", err)
	}
	client := kubernetes.NewForConfigOrDie(restCfg)
	ctx := context.Background()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a node: %v", err)
	}
	// Admission must neither taint new nodes nor demand a service account.
	got, err := client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Taints) != 0 {
		t.Errorf("new node got taints %v", got.Spec.Taints)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.invalid/pause"}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a pod: %v", err)
	}
	// The apiserver's hook that would make the system PriorityClasses is
	// off (closed before its first try, it ends the process 30 s later);
	// waitReady made them: a pod naming one is admitted with its priority
	// at once.
	checks, err := client.CoreV1().RESTClient().Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(ctx)
	if err != nil {
		t.Fatalf("/readyz?verbose: %v", err)
	}
	if !strings.Contains(string(checks), "[+]poststarthook/") || strings.Contains(string(checks), "bootstrap-system-priority-classes") {
		t.Errorf("the apiserver runs its PriorityClass hook:\n%s", checks)
	}
	critical := pod.DeepCopy()
	critical.Name, critical.Spec.PriorityClassName = "critical", "system-node-critical"
	if got, err := client.CoreV1().Pods("default").Create(ctx, critical, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a system-node-critical pod right after Start: %v", err)
	} else if got.Spec.Priority == nil || *got.Spec.Priority != 2000001000 {
		t.Errorf("system-node-critical pod got priority %v, want 2000001000", got.Spec.Priority)
	}

	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(kubectl, "--kubeconfig", cp.KubeconfigPath(), "get", "nodes").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "node-1") {
			t.Errorf("kubectl get nodes: %v\n%s", err, out)
		}
	}

	dir := cp.DataDir()
	if err := cp.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary data directory still there after Close: %v", err)
	}
	if err := cp.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestDataDirPersists(t *testing.T) {
	dir := t.TempDir()
	cp := start(t, Config{DataDir: dir})
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	ctx := context.Background()
	if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err != nil {
		t.Fatalf("etcd data gone after Close with a data dir: %v", err)
	}

	cp = start(t, Config{DataDir: dir})
	defer cp.Close()
	client = kubernetes.NewForConfigOrDie(cp.RESTConfig())
	if _, err := client.CoreV1().Nodes().Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("node did not survive a restart: %v", err)
	}
}

// TestRuntimeConfig: a version kube-apiserver 1.37 does not serve by
// default is served when RuntimeConfig turns it on, as with --runtime-config.
func TestRuntimeConfig(t *testing.T) {
	const gv = "resource.k8s.io/v1beta2"
	for _, tt := range []struct {
		name   string
		cfg    Config
		served bool
	}{
		{"by default", Config{}, false},
		{"turned on", Config{RuntimeConfig: map[string]string{gv: "true"}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cp := start(t, tt.cfg)
			defer cp.Close()
			_, err := kubernetes.NewForConfigOrDie(cp.RESTConfig()).Discovery().ServerResourcesForGroupVersion(gv)
			if served := err == nil; served != tt.served {
				t.Errorf("%s served: %t (%v), want %t", gv, served, err, tt.served)
			}
		})
	}
}
