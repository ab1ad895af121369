package random

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		args     runtime.Object
		wantSeed int64
		wantErr  bool
	}{
		{name: "no args: seed 0", args: nil, wantSeed: 0},
		{name: "the seed from the args", args: &runtime.Unknown{Raw: []byte(`{"seed": 42}`)}, wantSeed: 42},
		{name: "args that do not decode", args: &runtime.Unknown{Raw: []byte(`{"seed": "forty-two"}`)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(context.Background(), tt.args, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New: %v, want an error: %v", err, tt.wantErr)
			}
			if err == nil && p.(*Random).seed != tt.wantSeed {
				t.Errorf("seed %d, want %d", p.(*Random).seed, tt.wantSeed)
			}
		})
	}
}

// score is Random's score of the node for the pod, with seed.
func score(t *testing.T, seed int64, podName, nodeName string) int64 {
	t.Helper()
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}})
	s, status := (&Random{seed: seed}).Score(context.Background(), nil, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: podName}}, ni)
	if !status.IsSuccess() {
		t.Fatalf("Score: %v", status)
	}
	return s
}

func TestScore(t *testing.T) {
	nodes := []string{"node-0", "node-1", "node-2", "node-3", "node-4", "node-5", "node-6", "node-7", "node-8", "node-9"}
	tests := []struct {
		name        string
		seedA       int64
		podA        string
		seedB       int64
		podB        string
		wantSameAll bool
	}{
		{name: "the same seed and pod give the same scores", seedA: 1, podA: "web", seedB: 1, podB: "web", wantSameAll: true},
		{name: "another seed gives other scores", seedA: 1, podA: "web", seedB: 2, podB: "web"},
		{name: "another pod gives other scores", seedA: 1, podA: "web", seedB: 1, podB: "db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same := true
			for _, n := range nodes {
				a, b := score(t, tt.seedA, tt.podA, n), score(t, tt.seedB, tt.podB, n)
				for _, s := range []int64{a, b} {
					if s < fwk.MinNodeScore || s > fwk.MaxNodeScore {
						t.Fatalf("score %d of %s is outside [%d, %d]", s, n, fwk.MinNodeScore, fwk.MaxNodeScore)
					}
				}
				same = same && a == b
			}
			if same != tt.wantSameAll {
				t.Errorf("same scores on every node: %v, want %v", same, tt.wantSameAll)
			}
		})
	}
}
