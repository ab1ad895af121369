// Package nodenumber is the Score lesson of mini-kube-scheduler: it prefers
// the node whose name ends in the same digit as the pod's name.
package nodenumber

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the registry and in configurations.
const Name = "NodeNumber"

const stateKey fwk.StateKey = Name + "/podDigit"

// NodeNumber scores a node 100 when the last digit of its name equals the
// last digit of the pod's name, 0 otherwise.
type NodeNumber struct{}

var (
	_ fwk.PreScorePlugin = &NodeNumber{}
	_ fwk.ScorePlugin    = &NodeNumber{}
)

// New builds the plugin.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return &NodeNumber{}, nil }

// Name returns the plugin's name.
func (*NodeNumber) Name() string { return Name }

type podDigit int

func (d podDigit) Clone() fwk.StateData { return d }

// PreScore reads the pod's digit once per cycle, so Score need not. A pod
// whose name ends in no digit has nothing to match: PreScore answers Skip
// and Score is not called at all.
func (*NodeNumber) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	d, ok := lastDigit(pod.Name)
	if !ok {
		return fwk.NewStatus(fwk.Skip, fmt.Sprintf("pod name %q does not end in a digit", pod.Name))
	}
	state.Write(stateKey, podDigit(d))
	return nil
}

// Score compares the node's last digit with the pod's.
func (*NodeNumber) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	data, err := state.Read(stateKey)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("reading the pod's digit: %w", err))
	}
	if d, ok := lastDigit(nodeInfo.Node().Name); ok && d == int(data.(podDigit)) {
		return fwk.MaxNodeScore, nil
	}
	return 0, nil
}

// ScoreExtensions returns nil: the scores are already in [0, 100].
func (*NodeNumber) ScoreExtensions() fwk.ScoreExtensions { return nil }

func lastDigit(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	c := s[len(s)-1]
	if c < '0' || c > '9' {
		return 0, false
	}
	return int(c - '0'), true
}
