package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/app"
	"minisched/explain"
)

// TestWhyFromACopy: `minisched why --kubeconfig` copies a cluster with a
// read-only identity and explains a pending pod there; the source is not
// written. `-o json` is the explanation's schema.
func TestWhyFromACopy(t *testing.T) {
	admin, kubeconfigs := sourceCluster(t)
	ctx := context.Background()
	huge := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "huge"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}}}}}}
	if _, err := admin.CoreV1().Pods("shop").Create(ctx, huge, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := versions(t, admin)

	var out, errOut bytes.Buffer
	if err := app.Run(ctx, []string{"why", "shop/huge", "--kubeconfig", kubeconfigs["reader"]}, &out, &errOut); err != nil {
		t.Fatalf("minisched why: %v\n%s", err, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"shop/huge", "Fits nowhere. Closest: 2 nodes (node-1, node-2) need the pod to request", "NodeResourcesFit", "fits then"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text has no %q:\n%s", want, text)
		}
	}

	out.Reset()
	if err := app.Run(ctx, []string{"why", "pod/huge", "-n", "shop", "-o", "json", "--kubeconfig", kubeconfigs["reader"]}, &out, &errOut); err != nil {
		t.Fatalf("minisched why -o json: %v\n%s", err, errOut.String())
	}
	var e explain.Explanation
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out.String())
	}
	if e.Schema != explain.Schema || e.Namespace != "shop" || e.Pod != "huge" || e.Nodes != 2 || len(e.Closest) != 2 || e.Closest[0].Tried == nil || !e.Closest[0].Tried.Fits {
		t.Errorf("the explanation: %+v", e)
	}

	if after := versions(t, admin); !equalMaps(before, after) {
		t.Errorf("the source was written: before %v, after %v", before, after)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWhyFromTheServer: against a running minisched; a bound pod is
// refused, saying why, with exit status 2.
func TestWhyFromTheServer(t *testing.T) {
	inst := start(t, nil)
	ctx := context.Background()
	mk := func(name, cpu string) {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
		if _, err := inst.Cluster.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "why-node"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}
	if _, err := inst.Cluster.CreateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	mk("fits", "100m")
	mk("too-big", "4")
	waitUntil(t, 30*time.Second, "fits bound, too-big tried", func() bool {
		p, err := inst.Client.CoreV1().Pods("default").Get(ctx, "fits", metav1.GetOptions{})
		if err != nil || p.Spec.NodeName == "" {
			return false
		}
		q, err := inst.Client.CoreV1().Pods("default").Get(ctx, "too-big", metav1.GetOptions{})
		return err == nil && len(q.Status.Conditions) > 0
	})
	var out, errOut bytes.Buffer
	if err := app.Run(ctx, []string{"why", "too-big", "--server", inst.URL}, &out, &errOut); err != nil {
		t.Fatalf("minisched why: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "Fits nowhere. Closest: why-node needs the pod to request") {
		t.Errorf("the text:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	err := app.Run(ctx, []string{"why", "default/fits", "--server", inst.URL}, &out, &errOut)
	var exit *app.ExitError
	if !errors.As(err, &exit) || exit.Code != 2 || !strings.Contains(errOut.String(), "bound to why-node") {
		t.Errorf("a bound pod: %v, %q; want exit 2 saying where it is bound", err, errOut.String())
	}
}
