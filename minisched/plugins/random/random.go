// Package random is the first lesson of mini-kube-scheduler: a scorer that
// places pods at random. The "randomness" is a hash of the pod, the node and
// a seed, so that a scenario replays the same way twice.
package random

import (
	"context"
	"fmt"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Name is the plugin's name in the registry and in configurations.
const Name = "Random"

// Args configure the plugin.
type Args struct {
	// Seed changes every score; the same seed gives the same placements.
	Seed int64 `json:"seed"`
}

// Random gives each node a score in [0, 100] drawn from its hash.
type Random struct{ seed int64 }

var _ fwk.ScorePlugin = &Random{}

// New builds the plugin from its optional args.
func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	var args Args
	if obj != nil {
		if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
			return nil, fmt.Errorf("decoding %s args: %w", Name, err)
		}
	}
	return &Random{seed: args.Seed}, nil
}

// Name returns the plugin's name.
func (*Random) Name() string { return Name }

// Score hashes the seed, the pod and the node.
func (r *Random) Score(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s/%s", r.seed, pod.Namespace, pod.Name, nodeInfo.Node().Name)
	return int64(h.Sum64() % uint64(fwk.MaxNodeScore+1)), nil
}

// ScoreExtensions returns nil: the scores are already in [0, 100].
func (*Random) ScoreExtensions() fwk.ScoreExtensions { return nil }
