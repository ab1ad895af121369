package queue

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

// nominator remembers which node preemption nominated for which pod, so that
// Filter keeps the room free for it, as upstream's nominator does. The Queue
// keeps one and is itself the framework's PodNominator: it records a pod's
// nomination when the pod is added, carries it across updates, forgets it on
// delete, and answers with the pods as it holds them.
type nominator struct {
	mu sync.RWMutex
	// lister, when set, is asked whether a pod still exists and is not
	// bound before its nomination is recorded.
	lister corelisters.PodLister
	// byNode holds each node's nominated pods in the order they came.
	byNode map[string][]*v1.Pod
	node   map[types.UID]string
}

func newNominator(lister corelisters.PodLister) *nominator {
	return &nominator{lister: lister, byNode: map[string][]*v1.Pod{}, node: map[types.UID]string{}}
}

// add records the pod's nominated node: ni's when its mode overrides (an
// empty name clears the nomination), else the pod's status.nominatedNodeName.
func (n *nominator) add(logger klog.Logger, pod *v1.Pod, ni *fwk.NominatingInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.addLocked(logger, pod, ni)
}

func (n *nominator) addLocked(logger klog.Logger, pod *v1.Pod, ni *fwk.NominatingInfo) {
	n.deleteLocked(pod)
	node := pod.Status.NominatedNodeName
	if ni.Mode() == fwk.ModeOverride {
		node = ni.NominatedNodeName
	}
	if node == "" {
		return
	}
	if n.lister != nil {
		current, err := n.lister.Pods(pod.Namespace).Get(pod.Name)
		if err != nil {
			logger.V(4).Info("Pod is gone; not nominated", "pod", klog.KObj(pod))
			return
		}
		if current.Spec.NodeName != "" {
			logger.V(4).Info("Pod is bound; not nominated", "pod", klog.KObj(pod), "node", current.Spec.NodeName)
			return
		}
	}
	n.node[pod.UID] = node
	n.byNode[node] = append(n.byNode[node], pod)
}

// update replaces the pod's object. A nomination the nominator holds
// survives only an update in which neither the old nor the new object names
// a node: the nominator may know of a nomination before the pod's status
// says it, but once the status names a node, or stops naming one, the status
// wins.
func (n *nominator) update(logger klog.Logger, oldPod, newPod *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ni *fwk.NominatingInfo
	if oldPod.Status.NominatedNodeName == "" && newPod.Status.NominatedNodeName == "" {
		if node, ok := n.node[oldPod.UID]; ok {
			ni = &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: node}
		}
	}
	n.deleteLocked(oldPod)
	n.addLocked(logger, newPod, ni)
}

// delete forgets the pod's nomination.
func (n *nominator) delete(pod *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod)
}

func (n *nominator) deleteLocked(pod *v1.Pod) {
	node, ok := n.node[pod.UID]
	if !ok {
		return
	}
	delete(n.node, pod.UID)
	pods := n.byNode[node]
	for i, p := range pods {
		if p.UID == pod.UID {
			n.byNode[node] = append(pods[:i:i], pods[i+1:]...)
			break
		}
	}
	if len(n.byNode[node]) == 0 {
		delete(n.byNode, node)
	}
}

// podsFor returns the pods nominated to node, as last given.
func (n *nominator) podsFor(node string) []*v1.Pod {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return append([]*v1.Pod(nil), n.byNode[node]...)
}

// AddNominatedPod records the pod's nominated node (fwk.PodNominator): ni's
// when its mode overrides (an empty name clears the nomination), else the
// pod's status.nominatedNodeName. A pod gone or bound is not nominated.
func (q *Queue) AddNominatedPod(logger klog.Logger, pi fwk.PodInfo, ni *fwk.NominatingInfo) {
	q.nominator.add(logger, pi.GetPod(), ni)
}

// UpdateNominatedPod carries a nomination across an update of the pod: a
// nomination the queue holds survives only when neither object names a node.
func (q *Queue) UpdateNominatedPod(logger klog.Logger, oldPod *v1.Pod, pi fwk.PodInfo) {
	q.nominator.update(logger, oldPod, pi.GetPod())
}

// DeleteNominatedPodIfExists forgets the pod's nomination.
func (q *Queue) DeleteNominatedPodIfExists(pod *v1.Pod) {
	q.nominator.delete(pod)
}

// NominatedPodsForNode returns the pods nominated to node as the queue holds
// them now, copied. A pod the queue does not hold, such as one in flight,
// comes back as its name alone, with no spec, as upstream's does.
func (q *Queue) NominatedPodsForNode(node string) []fwk.PodInfo {
	q.mu.RLock()
	defer q.mu.RUnlock()
	nominated := q.nominator.podsFor(node)
	out := make([]fwk.PodInfo, 0, len(nominated))
	for _, pod := range nominated {
		if pi := q.findLocked(pod); pi != nil && pi.where != event.InFlight {
			out = append(out, podInfoOf(pi.Pod.DeepCopy()))
			continue
		}
		out = append(out, &framework.PodInfo{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		}}})
	}
	return out
}

// podInfoOf is the framework's view of a pod. Malformed affinity terms only
// leave some terms out, as upstream tolerates.
func podInfoOf(pod *v1.Pod) fwk.PodInfo {
	pi, _ := framework.NewPodInfo(pod)
	return pi
}
