package snapshot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"minisched/app"
	"minisched/internal/resttest"
	"minisched/snapshot"
)

// start runs a minisched with its own embedded control plane.
func start(t *testing.T, f app.Flags) *app.Instance {
	t.Helper()
	app.QuietKlog(0)
	f.Addr = "127.0.0.1:0"
	inst, err := app.Start(context.Background(), f, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("starting minisched: %v", err)
	}
	t.Cleanup(func() {
		if err := inst.Close(); err != nil {
			t.Errorf("stopping minisched: %v", err)
		}
	})
	return inst
}

// call sends a request to an instance's API and returns the status and body.
func call(t *testing.T, inst *app.Instance, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	resp := resttest.Call(t, method, strings.TrimSuffix(inst.URL, "/")+path, contentType, body, nil)
	return resp.Code, resp.Body
}

// waitFor polls cond; on a timeout it shows the scheduler's queue, which
// says why a pod waits.
func waitFor(t *testing.T, inst *app.Instance, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, cond); err != nil {
		_, queue := call(t, inst, "GET", "/api/v1/queue", "", nil)
		t.Fatalf("waiting for %s: %v; the queue: %s", what, err, queue)
	}
}

func pod(namespace, name, cpu string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": name}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// buildCluster makes a cluster with every kind a snapshot carries that
// the scheduler reads: nodes with labels, taints and allocatable; a pod
// created bound, one the scheduler bound, one no node fits; a
// PriorityClass; a StorageClass and a PersistentVolume bound to a claim.
func buildCluster(t *testing.T, inst *app.Instance) {
	t.Helper()
	ctx := context.Background()
	c := inst.Client
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("creating %s: %v", what, err)
		}
	}
	_, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "shop"}}}, metav1.CreateOptions{})
	must("namespace shop", err)
	gpu := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"topology.kubernetes.io/zone": "a"}},
		Spec:   v1.NodeSpec{Taints: []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}}}
	_, err = inst.Cluster.CreateNode(ctx, gpu)
	must("node-a", err)
	plain := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-b", Labels: map[string]string{"topology.kubernetes.io/zone": "b"}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}}}
	_, err = inst.Cluster.CreateNode(ctx, plain)
	must("node-b", err)
	_, err = inst.Cluster.CreatePriorityClass(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000})
	must("PriorityClass high", err)

	binding := storagev1.VolumeBindingWaitForFirstConsumer
	_, err = c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"},
		Provisioner: "example.com/fast", VolumeBindingMode: &binding}, metav1.CreateOptions{})
	must("StorageClass fast", err)
	class := "fast"
	// A claim and a volume made for each other; the persistentvolume
	// controller binds them, as on a real cluster.
	_, err = c.CoreV1().PersistentVolumeClaims("shop").Create(ctx, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: "pv-1", AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
	must("PersistentVolumeClaim shop/data", err)
	_, err = c.CoreV1().PersistentVolumes().Create(ctx, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: v1.PersistentVolumeSpec{StorageClassName: class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data"}},
			ClaimRef:               &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "shop", Name: "data"}}}, metav1.CreateOptions{})
	must("PersistentVolume pv-1", err)
	waitFor(t, inst, "the persistentvolume controller to bind shop/data to pv-1", func(ctx context.Context) (bool, error) {
		pvc, err := c.CoreV1().PersistentVolumeClaims("shop").Get(ctx, "data", metav1.GetOptions{})
		pv, err2 := c.CoreV1().PersistentVolumes().Get(ctx, "pv-1", metav1.GetOptions{})
		return err == nil && err2 == nil && pvc.Status.Phase == v1.ClaimBound && pv.Status.Phase == v1.VolumeBound, nil
	})

	created := pod("shop", "web-1", "1")
	created.Spec.NodeName = "node-b"
	_, err = inst.Cluster.CreatePod(ctx, created)
	must("pod shop/web-1", err)
	scheduled := pod("shop", "web-2", "500m")
	scheduled.Spec.PriorityClassName = "high"
	scheduled.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	_, err = inst.Cluster.CreatePod(ctx, scheduled)
	must("pod shop/web-2", err)
	_, err = inst.Cluster.CreatePod(ctx, pod("default", "huge", "64"))
	must("pod default/huge", err)
	waitFor(t, inst, "the scheduler to bind shop/web-2", func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods("shop").Get(ctx, "web-2", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "", nil
	})
}

// TestRoundTripIsExact exports a cluster, loads the snapshot into a second
// minisched (over POST /import, and with --load) and exports that: the
// documents are byte-equal, in JSON and in YAML.
func TestRoundTripIsExact(t *testing.T) {
	source := start(t, app.DefaultFlags())
	buildCluster(t, source)
	copied := start(t, app.DefaultFlags())

	code, first := call(t, source, "GET", "/api/v1/export?format=json", "", nil)
	if code != http.StatusOK {
		t.Fatalf("export: %d %s", code, first)
	}
	code, answer := call(t, copied, "POST", "/api/v1/import", "application/json", first)
	if code != http.StatusOK {
		t.Fatalf("import: %d %s", code, answer)
	}
	var counts snapshot.Counts
	if err := json.Unmarshal(answer, &counts); err != nil {
		t.Fatalf("import answered %s: %v", answer, err)
	}
	// The StorageClasses are fast and the source's built-in default; the
	// DeviceClass is the source's built-in one.
	want := snapshot.Counts{Namespaces: 5, PriorityClasses: 1, StorageClasses: 2, DeviceClasses: 1, PersistentVolumeClaims: 1, PersistentVolumes: 1,
		Nodes: 2, Pods: 3, BoundPods: 2, PendingPods: 1, SchedulerConfiguration: true}
	if counts != want {
		t.Errorf("import created %+v, want %+v", counts, want)
	}
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			_, a := call(t, source, "GET", "/api/v1/export?format="+format, "", nil)
			_, b := call(t, copied, "GET", "/api/v1/export?format="+format, "", nil)
			if !bytes.Equal(a, b) {
				t.Errorf("the copy's snapshot differs from the source's:\n--- source\n%s\n--- copy\n%s", a, b)
			}
		})
	}
	t.Run("--load", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "snapshot.json")
		if err := os.WriteFile(path, first, 0o600); err != nil {
			t.Fatal(err)
		}
		f := app.DefaultFlags()
		f.Load = path
		loaded := start(t, f)
		_, a := call(t, source, "GET", "/api/v1/export?format=json", "", nil)
		_, b := call(t, loaded, "GET", "/api/v1/export?format=json", "", nil)
		if !bytes.Equal(a, b) {
			t.Errorf("the cluster --load made differs from the source:\n--- source\n%s\n--- loaded\n%s", a, b)
		}
		// The dashboard is told it shows a copy, and of what.
		var snap struct {
			Copy *struct{ Kind, Source string }
		}
		_, raw := call(t, loaded, "GET", "/api/v1/snapshot", "", nil)
		if err := json.Unmarshal(raw, &snap); err != nil || snap.Copy == nil || snap.Copy.Kind != "load" || snap.Copy.Source != path {
			t.Errorf("the snapshot of a --load cluster says copy %+v (%v), want kind load from %s", snap.Copy, err, path)
		}
	})
	doc, err := snapshot.Decode(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Pods {
		if p.UID != "" || p.ResourceVersion != "" || len(p.ManagedFields) > 0 || !p.CreationTimestamp.IsZero() {
			t.Errorf("pod %s/%s keeps server-set metadata: %+v", p.Namespace, p.Name, p.ObjectMeta)
		}
	}
}
