package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/compare"
)

// TestWhatIf copies a cluster whose pods the default configuration spread,
// schedules the workload again in the copy under MostAllocated, and
// reports that the pods would pack onto the small node; the source keeps
// its placements.
func TestWhatIf(t *testing.T) {
	ctx := context.Background()
	source := start(t, nil)
	// Nodes and pods of one shape (2 GiB a CPU): BalancedAllocation scores
	// every node alike, and NodeResourcesFit decides by wide margins.
	for name, size := range map[string][2]string{"small": {"4", "8Gi"}, "big": {"16", "32Gi"}} {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(size[0]), v1.ResourceMemory: resource.MustParse(size[1]), v1.ResourcePods: resource.MustParse("110")}}}
		if _, err := source.Cluster.CreateNode(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 30*time.Second, "the scheduler to see both nodes", func() bool { return source.Scheduler.Scheduler().NodeCount() == 2 })
	for _, name := range []string{"a", "b", "c"} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("2Gi")}}}}}}
		if _, err := source.Cluster.CreatePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	placed := func() map[string]string {
		out := map[string]string{}
		pods, _ := source.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		for _, p := range pods.Items {
			out[p.Name] = p.Spec.NodeName
		}
		return out
	}
	waitUntil(t, 30*time.Second, "the pods bound in the source", func() bool {
		p := placed()
		return p["a"] != "" && p["b"] != "" && p["c"] != ""
	})
	before := placed()

	code, out, errs := runCommand(t, "whatif", "--import-from", source.ControlPlane.KubeconfigPath(), "--scheduler-config", "../examples/configs/most-allocated.yaml", "--output", "json")
	if code != 1 {
		t.Fatalf("whatif: exit %d, want 1 (pods would move); stderr: %s", code, errs)
	}
	var r compare.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, out)
	}
	if len(r.Pods) != 3 || r.A != "as copied" || !strings.Contains(r.B, "most-allocated.yaml") {
		t.Fatalf("report %+v", r)
	}
	for _, p := range r.Pods {
		if name := strings.TrimPrefix(p.Pod, "default/"); p.NodeA != before[name] {
			t.Errorf("%s: before %q in the report, %q in the source", p.Pod, p.NodeA, before[name])
		}
		if p.NodeB != "small" {
			t.Errorf("%s: after %q, want small (MostAllocated packs)", p.Pod, p.NodeB)
		}
	}
	if got := placed(); got["a"] != before["a"] || got["b"] != before["b"] || got["c"] != before["c"] {
		t.Errorf("the source's placements changed: %v, were %v", got, before)
	}

	// A against B on the copy: the defaults (LeastAllocated) put every pod
	// on big, MostAllocated on small, from the same start.
	code, out, errs = runCommand(t, "whatif", "--import-from", source.ControlPlane.KubeconfigPath(), "--against", "../examples/configs/most-allocated.yaml", "--output", "json")
	if code != 1 {
		t.Fatalf("whatif --against: exit %d, want 1 (the configurations differ); stderr: %s", code, errs)
	}
	r = compare.Report{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, out)
	}
	if len(r.Pods) != 3 || r.Moved != 3 || r.A != "kube-scheduler's defaults" {
		t.Fatalf("report %+v: want all three pods moved", r)
	}
	for _, p := range r.Pods {
		if p.NodeA != "big" || p.NodeB != "small" {
			t.Errorf("%s: %q under the defaults, %q under MostAllocated; want big, then small", p.Pod, p.NodeA, p.NodeB)
		}
	}
	if code, _, errs := runCommand(t, "whatif", "--import-from", source.ControlPlane.KubeconfigPath(), "--against", "no-such.yaml"); code != 2 || !strings.Contains(errs, "--against") {
		t.Errorf("whatif --against a missing file: exit %d, stderr %q; want 2 naming the flag", code, errs)
	}

	if code, _, errs := runCommand(t, "whatif", "--scheduler-config", "../examples/configs/most-allocated.yaml"); code != 2 || !strings.Contains(errs, "--import-from KUBECONFIG or --load FILE") {
		t.Errorf("whatif with no cluster: exit %d, stderr %q; want 2 and what to give", code, errs)
	}
}
