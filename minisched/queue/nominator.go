package queue

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Nominator remembers which node preemption nominated for which pod, so that
// Filter can keep the room free for it (fwk.PodNominator).
type Nominator struct {
	mu     sync.RWMutex
	byNode map[string][]fwk.PodInfo
	node   map[types.UID]string
}

var _ fwk.PodNominator = &Nominator{}

// NewNominator returns an empty nominator.
func NewNominator() *Nominator {
	return &Nominator{byNode: map[string][]fwk.PodInfo{}, node: map[types.UID]string{}}
}

// AddNominatedPod records that pi's pod may run on the nominated node: the
// node in ni when its mode overrides, else the pod's status field.
func (n *Nominator) AddNominatedPod(_ klog.Logger, pi fwk.PodInfo, ni *fwk.NominatingInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.addLocked(pi, ni)
}

func (n *Nominator) addLocked(pi fwk.PodInfo, ni *fwk.NominatingInfo) {
	pod := pi.GetPod()
	n.deleteLocked(pod)
	node := pod.Status.NominatedNodeName
	if ni.Mode() == fwk.ModeOverride {
		node = ni.NominatedNodeName
	}
	if node == "" || pod.Spec.NodeName != "" {
		return
	}
	n.node[pod.UID] = node
	n.byNode[node] = append(n.byNode[node], pi)
}

// DeleteNominatedPodIfExists forgets pod's nomination.
func (n *Nominator) DeleteNominatedPodIfExists(pod *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod)
}

func (n *Nominator) deleteLocked(pod *v1.Pod) {
	node, ok := n.node[pod.UID]
	if !ok {
		return
	}
	delete(n.node, pod.UID)
	pods := n.byNode[node]
	for i, p := range pods {
		if p.GetPod().UID == pod.UID {
			n.byNode[node] = append(pods[:i:i], pods[i+1:]...)
			break
		}
	}
	if len(n.byNode[node]) == 0 {
		delete(n.byNode, node)
	}
}

// UpdateNominatedPod keeps a nomination across an update of the pod, unless
// the update names another node.
func (n *Nominator) UpdateNominatedPod(_ klog.Logger, oldPod *v1.Pod, pi fwk.PodInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ni *fwk.NominatingInfo
	if node, ok := n.node[oldPod.UID]; ok && pi.GetPod().Status.NominatedNodeName == "" {
		ni = &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: node}
	}
	n.addLocked(pi, ni)
}

// NominatedPodsForNode returns the pods nominated to node.
func (n *Nominator) NominatedPodsForNode(node string) []fwk.PodInfo {
	n.mu.RLock()
	defer n.mu.RUnlock()
	pods := n.byNode[node]
	if len(pods) == 0 {
		return nil
	}
	return append([]fwk.PodInfo(nil), pods...)
}
