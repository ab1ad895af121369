package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"minisched/event"
)

type events struct {
	mu   sync.Mutex
	list []event.Event
}

func (e *events) Observe(ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

// nodesAdded counts the node events that report an addition: what the
// limit counts. An informer may also report a node it holds again as an
// update (a relist), which the limit does not count.
func (e *events) nodesAdded() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.list {
		if ev.Kind == event.KindNode && ev.Node.Action == event.Added {
			n++
		}
	}
	return n
}

func node(name string) *v1.Node { return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }

// TestCreateWithinLimitsAndOwned creates through a watched cluster: each
// create is reported as an event, the limit counts what the watch saw, and
// on a shared cluster what minisched creates carries its label.
func TestCreateWithinLimitsAndOwned(t *testing.T) {
	tests := []struct {
		name      string
		writes    Writes
		wantLabel bool
	}{
		{"own cluster", WritesAll, false},
		{"shared cluster", WritesOwned, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			seen := &events{}
			c := New(Options{Client: fake.NewClientset(), Observer: seen, Writes: tt.writes, MaxNodes: 2})
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			for _, name := range []string{"a", "b"} {
				created, err := c.CreateNode(ctx, node(name))
				if err != nil {
					t.Fatalf("node %s: %v", name, err)
				}
				if got := created.Labels[OwnerLabel] != ""; got != tt.wantLabel {
					t.Errorf("node %s labelled %v, want %v", name, got, tt.wantLabel)
				}
			}
			if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
				return seen.nodesAdded() >= 2, nil
			}); err != nil {
				t.Fatal(err)
			}
			var limit *LimitError
			if _, err := c.CreateNode(ctx, node("c")); !errors.As(err, &limit) {
				t.Errorf("a third node past MaxNodes 2: %v, want a LimitError", err)
			}
			if got := len(c.Nodes()); got != 2 {
				t.Errorf("%d nodes after the refused create, want 2", got)
			}
		})
	}
}

func TestNodeDefaults(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name        string
		allocatable v1.ResourceList
		capacity    v1.ResourceList
		wantCPU     string
		wantPods    string
	}{
		{name: "nothing given", wantCPU: "8", wantPods: "16"},
		{name: "allocatable only", allocatable: v1.ResourceList{v1.ResourceCPU: q("2")}, wantCPU: "2", wantPods: "16"},
		{name: "capacity only", capacity: v1.ResourceList{v1.ResourceCPU: q("3")}, wantCPU: "3", wantPods: "16"},
		{name: "allocatable without capacity, given empty", allocatable: v1.ResourceList{v1.ResourceCPU: q("2")}, capacity: v1.ResourceList{}, wantCPU: "2", wantPods: "16"},
		{name: "both empty", allocatable: v1.ResourceList{}, capacity: v1.ResourceList{}, wantCPU: "8", wantPods: "16"},
	}
	c := New(Options{NodeAllocatable: v1.ResourceList{v1.ResourceCPU: q("8"), v1.ResourcePods: q("16")}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := node("n")
			n.Status.Allocatable, n.Status.Capacity = tt.allocatable, tt.capacity
			c.nodeDefaults(n)
			if got := n.Status.Allocatable.Cpu().String(); got != tt.wantCPU {
				t.Errorf("allocatable cpu %s, want %s", got, tt.wantCPU)
			}
			if got := n.Status.Allocatable.Pods().String(); got != tt.wantPods {
				t.Errorf("allocatable pods %s, want %s", got, tt.wantPods)
			}
			for name, a := range n.Status.Allocatable {
				if c, ok := n.Status.Capacity[name]; !ok || c.Cmp(a) < 0 {
					t.Errorf("capacity of %s is %v, below allocatable %v", name, n.Status.Capacity[name], a.String())
				}
			}
			if n.Labels[v1.LabelHostname] != "n" || len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Type != v1.NodeReady {
				t.Errorf("hostname label %v, conditions %v", n.Labels, n.Status.Conditions)
			}
		})
	}
}
