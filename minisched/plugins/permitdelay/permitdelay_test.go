package permitdelay

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
)

// handle hands out one waiting pod, whatever the UID.
type handle struct {
	fwk.Handle
	pod *waitingPod
}

func (h *handle) GetWaitingPod(types.UID) fwk.WaitingPod { return h.pod }

// waitingPod reports who allowed it.
type waitingPod struct {
	fwk.WaitingPod
	allowed chan string
}

func (w *waitingPod) Allow(plugin string) { w.allowed <- plugin }

func TestPermit(t *testing.T) {
	tests := []struct {
		name        string
		node        string
		wantCode    fwk.Code
		wantTimeout time.Duration
		wantMessage string
	}{
		{name: "a node whose name ends in 0 lets the pod go at once", node: "node-0", wantCode: fwk.Success},
		{name: "a node whose name ends in no digit lets the pod go at once", node: "node", wantCode: fwk.Success},
		{name: "an empty node name lets the pod go at once", node: "", wantCode: fwk.Success},
		{name: "node-1 holds the pod a second", node: "node-1", wantCode: fwk.Wait, wantTimeout: 6 * time.Second, wantMessage: "waiting 1s as the node's name says"},
		{name: "node-9 holds the pod nine seconds", node: "node-9", wantCode: fwk.Wait, wantTimeout: 14 * time.Second, wantMessage: "waiting 9s as the node's name says"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &handle{pod: &waitingPod{allowed: make(chan string, 1)}}
			p, err := New(context.Background(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "uid-p"}}
			status, timeout := p.(*PermitDelay).Permit(context.Background(), nil, pod, tt.node)
			if status.Code() != tt.wantCode || timeout != tt.wantTimeout || status.Message() != tt.wantMessage {
				t.Errorf("Permit = %v %q, timeout %v; want %v %q, timeout %v",
					status.Code(), status.Message(), timeout, tt.wantCode, tt.wantMessage, tt.wantTimeout)
			}
		})
	}
}

// The plugin allows the pod itself once the delay is over, before the
// timeout would reject it.
func TestPermitAllowsAfterTheDelay(t *testing.T) {
	h := &handle{pod: &waitingPod{allowed: make(chan string, 1)}}
	p, err := New(context.Background(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "uid-p"}}
	_, timeout := p.(*PermitDelay).Permit(context.Background(), nil, pod, "node-1")
	select {
	case plugin := <-h.pod.allowed:
		if plugin != Name {
			t.Errorf("allowed by %q, want %q", plugin, Name)
		}
		if took := time.Since(begun); took < time.Second {
			t.Errorf("allowed after %v, before the node's second", took)
		}
	case <-time.After(time.Minute): // a guard: the Allow comes after a second
		t.Fatalf("not allowed within a minute (the timeout is %v)", timeout)
	}
}
