package nodenumber

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func nodeInfo(name string) fwk.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return ni
}

func pod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name         string
		pod, node    string
		wantPreScore fwk.Code
		wantScore    int64
	}{
		{name: "same last digit scores the most", pod: "pod-3", node: "node-3", wantPreScore: fwk.Success, wantScore: fwk.MaxNodeScore},
		{name: "only the last digit counts", pod: "pod-13", node: "node-3", wantPreScore: fwk.Success, wantScore: fwk.MaxNodeScore},
		{name: "another digit scores nothing", pod: "pod-3", node: "node-4", wantPreScore: fwk.Success, wantScore: 0},
		{name: "a node without a digit scores nothing", pod: "pod-3", node: "node", wantPreScore: fwk.Success, wantScore: 0},
		{name: "a pod without a digit skips Score", pod: "pod", node: "node-3", wantPreScore: fwk.Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*NodeNumber)
			state := framework.NewCycleState()
			ni := nodeInfo(tt.node)
			if s := pl.PreScore(context.Background(), state, pod(tt.pod), []fwk.NodeInfo{ni}); s.Code() != tt.wantPreScore {
				t.Fatalf("PreScore = %v, want %v", s, tt.wantPreScore)
			}
			if tt.wantPreScore == fwk.Skip {
				return
			}
			score, s := pl.Score(context.Background(), state, pod(tt.pod), ni)
			if !s.IsSuccess() || score != tt.wantScore {
				t.Errorf("Score = %d, %v; want %d", score, s, tt.wantScore)
			}
		})
	}
}

// Score reads what PreScore wrote: without it, it fails rather than guess.
func TestScoreWithoutPreScore(t *testing.T) {
	pl := &NodeNumber{}
	if _, s := pl.Score(context.Background(), framework.NewCycleState(), pod("pod-1"), nodeInfo("node-1")); s.Code() != fwk.Error {
		t.Errorf("Score without PreScore = %v, want an error", s)
	}
}
