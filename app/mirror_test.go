package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/app"
	"minisched/event"
	"minisched/server"
)

// TestMirrorFollowsReadOnly mirrors a source control plane that authorizes
// with RBAC, as an identity that may only get, list and watch. What
// changes there shows in the copy: a new node; a new pending pod, which
// minisched schedules in the copy; the real scheduler's bind, which the
// copy's pod names; deletions. The source is only read. An identity that
// may not watch is told so, and a reset ends the mirror.
func TestMirrorFollowsReadOnly(t *testing.T) {
	admin, kubeconfigs := sourceCluster(t)
	ctx := context.Background()

	t.Run("an identity that may not watch", func(t *testing.T) {
		f := app.DefaultFlags()
		f.Addr, f.Mirror = "127.0.0.1:0", kubeconfigs["reader-without-watch"]
		inst, err := app.Start(ctx, f, quiet())
		if err == nil {
			_ = inst.Close()
			t.Fatal("the mirror started, want a refusal")
		}
		if !strings.Contains(err.Error(), "--mirror") || !strings.Contains(err.Error(), "cannot watch") {
			t.Errorf("error %q: want it to name --mirror and the watch refused", err)
		}
	})

	before := versions(t, admin)
	inst := start(t, func(f *app.Flags) { f.Mirror = kubeconfigs["reader"] })
	copied := func(namespace, name string) *v1.Pod {
		p, err := inst.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return p
	}
	waitUntil(t, 60*time.Second, "the source's pending pods placed in the copy", func() bool {
		p := copied("shop", "web-2")
		return p != nil && p.Spec.NodeName != ""
	})
	if got := versions(t, admin); len(got) != len(before) {
		t.Fatalf("the source changed: %d objects, were %d", len(got), len(before))
	} else {
		for k, v := range before {
			if got[k] != v {
				t.Errorf("%s was written in the source: resourceVersion %s, was %s", k, got[k], v)
			}
		}
	}

	// A new node and a new pending pod in the source.
	cpu := resource.MustParse("64")
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-3"}, Status: v1.NodeStatus{
		Allocatable: v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourcePods: resource.MustParse("110")},
		Capacity:    v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourcePods: resource.MustParse("110")},
		Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
	if _, err := admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "node-3 in the copy, with its allocatable", func() bool {
		n, err := inst.Client.CoreV1().Nodes().Get(ctx, "node-3", metav1.GetOptions{})
		return err == nil && n.Status.Allocatable.Cpu().Equal(cpu)
	})
	_, err := admin.CoreV1().Pods("shop").Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-3", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "web-3 scheduled by minisched in the copy", func() bool {
		p := copied("shop", "web-3")
		return p != nil && p.Spec.NodeName != ""
	})
	ours := copied("shop", "web-3").Spec.NodeName

	// The real scheduler binds it, to a node minisched did not choose.
	real := "node-1"
	if ours == real {
		real = "node-2"
	}
	binding := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web-3"}, Target: v1.ObjectReference{Kind: "Node", Name: real}}
	if err := admin.CoreV1().Pods("shop").Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the copy's web-3 to name the real node", func() bool {
		p := copied("shop", "web-3")
		return p != nil && p.Annotations[event.RealNodeAnnotation] == real
	})
	if p := copied("shop", "web-3"); p.Spec.NodeName != ours {
		t.Errorf("the copy's web-3 moved from %s to %s: minisched's placement should stay", ours, p.Spec.NodeName)
	}
	var view server.MirrorView
	waitUntil(t, 30*time.Second, "GET /mirror to count web-3 as placed elsewhere, and nothing behind", func() bool {
		view = getMirror(t, inst)
		return view.Synced && view.Behind == 0 && view.Differ >= 1 && view.Compared >= view.Differ
	})

	// Deletions follow.
	zero := int64(0)
	if err := admin.CoreV1().Pods("shop").Delete(ctx, "web-3", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().Nodes().Delete(ctx, "node-3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "web-3 and node-3 gone from the copy", func() bool {
		_, err := inst.Client.CoreV1().Nodes().Get(ctx, "node-3", metav1.GetOptions{})
		return copied("shop", "web-3") == nil && err != nil
	})

	// A reset ends the copy, and the mirror with it.
	req, _ := http.NewRequest("POST", inst.URL+"api/v1/reset", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("reset: %v %v", resp, err)
	}
	resp.Body.Close()
	if view = getMirror(t, inst); !view.Stopped {
		t.Errorf("after a reset the mirror still runs: %+v", view)
	}

	t.Run("a copy at its pod limit says what it did not copy", func(t *testing.T) {
		full := start(t, func(f *app.Flags) { f.Mirror, f.MaxPods = kubeconfigs["reader"], 4 })
		_, err := admin.CoreV1().Pods("shop").Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "one-too-many"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 30*time.Second, "GET /mirror to say the pod is held back by the limit", func() bool {
			v := getMirror(t, full)
			return v.Behind >= 1 && strings.Contains(v.LastError, "--max-pods 4")
		})
		if _, err := full.Client.CoreV1().Pods("shop").Get(ctx, "one-too-many", metav1.GetOptions{}); err == nil {
			t.Error("the pod was copied past the limit")
		}
	})
}

func getMirror(t *testing.T, inst *app.Instance) server.MirrorView {
	t.Helper()
	resp, err := http.Get(inst.URL + "api/v1/mirror")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v server.MirrorView
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /mirror: %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
