// Package labelscore is an example Score plugin: it prefers nodes by a number
// an operator writes into a label, so that a person can steer placement
// without touching the scheduler.
package labelscore

import (
	"context"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in configurations.
const Name = "LabelScore"

// Label holds a node's score, 0 to 100.
const Label = "minisched.example/score"

// LabelScore scores each node with the number in its label.
type LabelScore struct{}

var _ fwk.ScorePlugin = &LabelScore{}

// New builds the plugin; it takes no arguments.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return &LabelScore{}, nil }

// Name returns the plugin's name.
func (*LabelScore) Name() string { return Name }

// Score reads the label; a node without one, or with a bad one, scores 0.
func (*LabelScore) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	n, err := strconv.ParseInt(nodeInfo.Node().Labels[Label], 10, 64)
	if err != nil {
		return 0, nil
	}
	return min(max(n, fwk.MinNodeScore), fwk.MaxNodeScore), nil
}

// ScoreExtensions returns nil: scores are already in [0, 100].
func (*LabelScore) ScoreExtensions() fwk.ScoreExtensions { return nil }
