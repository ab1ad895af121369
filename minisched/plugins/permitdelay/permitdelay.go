// Package permitdelay is the Permit lesson of mini-kube-scheduler: it holds
// a pod at Permit for as many seconds as the last digit of its node's name,
// so a learner can watch a pod wait before its binding cycle goes on.
package permitdelay

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the registry and in configurations.
const Name = "PermitDelay"

// grace is added to the delay to form the timeout, so that the plugin's own
// Allow always comes first.
const grace = 5 * time.Second

// PermitDelay delays binding by the node's last digit in seconds.
type PermitDelay struct {
	handle fwk.Handle
}

var _ fwk.PermitPlugin = &PermitDelay{}

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &PermitDelay{handle: h}, nil
}

// Name returns the plugin's name.
func (*PermitDelay) Name() string { return Name }

// Permit answers Wait, then allows the pod once the delay has passed.
func (p *PermitDelay) Permit(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	delay := time.Duration(lastDigit(nodeName)) * time.Second
	if delay == 0 {
		return nil, 0
	}
	uid := pod.UID
	time.AfterFunc(delay, func() {
		// The waiting pod is registered after Permit returns; with a delay of
		// a second or more it is there by now.
		if wp := p.handle.GetWaitingPod(uid); wp != nil {
			wp.Allow(Name)
		}
	})
	return fwk.NewStatus(fwk.Wait, "waiting "+delay.String()+" as the node's name says"), delay + grace
}

func lastDigit(s string) int {
	if s == "" || s[len(s)-1] < '0' || s[len(s)-1] > '9' {
		return 0
	}
	return int(s[len(s)-1] - '0')
}
