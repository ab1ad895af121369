package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

// manyLabels returns n labels of about 16 bytes each.
func manyLabels(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("key-%06d", i)] = "value"
	}
	return m
}

func TestCheckSize(t *testing.T) {
	big := strings.Repeat("x", MaxAnnotationBytes)
	tests := []struct {
		name string
		obj  any
		want string // "" to pass
	}{
		{"a node of a few labels", &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: manyLabels(10)}}, ""},
		{"a node of 2,000 labels", &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: manyLabels(2000)}}, "node n: labels of 30000 bytes, over minisched's limit of 16384"},
		{"a node's annotations", &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"a": big}}}, "node n: annotations of"},
		{"a node's taints", &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "k", Value: strings.Repeat("v", MaxTaintBytes), Effect: v1.TaintEffectNoSchedule}}}}, "node n: taints of"},
		{"a pod of 10,000 containers", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1.PodSpec{Containers: containers(10000, 0)}}, ""},
		{"a pod whose spec passes a MiB", &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1.PodSpec{Containers: containers(100, 11000)}}, "pod p: spec of"},
		{"a Deployment's pod template", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: manyLabels(2000)}}}}, "Deployment d's pod template: labels of"},
		{"another kind", &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: manyLabels(2000)}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSize(tt.obj)
			var tooLarge *TooLargeError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckSize: %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &tooLarge) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckSize: %v, want a TooLargeError saying %q", err, tt.want)
			}
		})
	}
}

func containers(n, argBytes int) []v1.Container {
	out := make([]v1.Container, n)
	for i := range out {
		out[i] = v1.Container{Name: fmt.Sprintf("c%d", i), Image: "pause"}
		if argBytes > 0 {
			out[i].Args = []string{strings.Repeat("a", argBytes)}
		}
	}
	return out
}

// TestMetaBytesBound: the labels, annotations and taints of all nodes and
// pods count against one bound, as the watch reports them; a change that
// would pass it is refused as a create is.
func TestMetaBytesBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Each node below counts 900 labels of 15 bytes and its hostname
	// label: 13,523 bytes. Two fit under the bound, three do not.
	const each, bound = 13523, 28 << 10
	c := New(Options{Client: fake.NewClientset(), MaxMetaBytes: bound})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	counted := func(what string, cond func(n int64) bool) {
		t.Helper()
		if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
			return cond(c.metaBytes.Load()), nil
		}); err != nil {
			t.Fatalf("waiting for the watch to count %s: %v (counted %d)", what, err, c.metaBytes.Load())
		}
	}
	for _, name := range []string{"a", "b"} {
		if _, err := c.CreateNode(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: manyLabels(900)}}); err != nil {
			t.Fatalf("node %s: %v", name, err)
		}
	}
	counted("two nodes", func(n int64) bool { return n == 2*each })
	var tooLarge *TooLargeError
	if _, err := c.CreateNode(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: manyLabels(900)}}); !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("over the limit of %d", bound)) {
		t.Errorf("a third node past the bound: %v, want a TooLargeError", err)
	}
	if _, err := c.UpdateNode(ctx, "a", NodeChange{Labels: manyLabels(1090)}); !errors.As(err, &tooLarge) {
		t.Errorf("a node's labels grown past the bound: %v, want a TooLargeError", err)
	}
	if _, err := c.UpdateNode(ctx, "a", NodeChange{Labels: manyLabels(10)}); err != nil {
		t.Errorf("a node's labels cut: %v", err)
	}
	counted("the cut labels", func(n int64) bool { return n == each+150 })
	if _, err := c.CreateNode(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: manyLabels(900)}}); err != nil {
		t.Errorf("a third node once there is room: %v", err)
	}
}
