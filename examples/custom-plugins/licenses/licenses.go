// Package licenses is an example Filter and Reserve plugin. Some pods need a
// software licence, and each node has a few. Filter keeps such pods off nodes
// with none left. Reserve claims one on the chosen node when the pod is
// assumed there, before binding; Unreserve gives it back if the binding cycle
// fails. Claims held in the plugin cover the gap between Reserve and the
// moment the bound pod counts in the snapshot.
package licenses

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in configurations.
const Name = "Licenses"

const (
	// NodeAnnotation says how many licences a node has (none without it).
	NodeAnnotation = "minisched.example/licenses"
	// PodAnnotation, set to "true", says a pod needs a licence.
	PodAnnotation = "minisched.example/needs-license"
)

// Licenses counts licences per node.
type Licenses struct {
	handle fwk.Handle
	mu     sync.Mutex
	// claims maps each reserved pod to its node until the pod is bound.
	claims map[types.UID]string
}

var (
	_ fwk.FilterPlugin   = &Licenses{}
	_ fwk.ReservePlugin  = &Licenses{}
	_ fwk.PostBindPlugin = &Licenses{}
)

// New builds the plugin; it takes no arguments.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &Licenses{handle: h, claims: map[types.UID]string{}}, nil
}

// Name returns the plugin's name.
func (*Licenses) Name() string { return Name }

func needs(pod *v1.Pod) bool { return pod.Annotations[PodAnnotation] == "true" }

// Filter keeps a pod that needs a licence off nodes with none left.
func (l *Licenses) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	if !needs(pod) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked(pod, nodeInfo)
}

// Reserve claims a licence on the node, or rejects the pod when none is left
// (another pod took the last one since Filter).
func (l *Licenses) Reserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	if !needs(pod) {
		return nil
	}
	nodeInfo, err := l.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("reading node %s: %w", nodeName, err))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if status := l.checkLocked(pod, nodeInfo); !status.IsSuccess() {
		return status
	}
	l.claims[pod.UID] = nodeName
	return nil
}

// checkLocked counts the licences in use on the node: bound pods that need
// one, and claims not yet bound.
func (l *Licenses) checkLocked(pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	node := nodeInfo.Node()
	have, _ := strconv.Atoi(node.Annotations[NodeAnnotation])
	used := 0
	for _, p := range nodeInfo.GetPods() {
		if needs(p.GetPod()) && p.GetPod().UID != pod.UID {
			if _, claimed := l.claims[p.GetPod().UID]; !claimed {
				used++
			}
		}
	}
	for uid, claimedOn := range l.claims {
		if claimedOn == node.Name && uid != pod.UID {
			used++
		}
	}
	if used >= have {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("no licence left (%d of %d in use)", used, have))
	}
	return nil
}

// Unreserve gives the licence back.
func (l *Licenses) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.claims, pod.UID)
}

// PostBind drops the claim: the bound pod now counts through the snapshot.
func (l *Licenses) PostBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	l.Unreserve(context.Background(), nil, pod, "")
}
