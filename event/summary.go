package event

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"minisched/devices"
)

// NodeSummary is what the dashboard shows of a node.
type NodeSummary struct {
	Name          string            `json:"name"`
	UID           string            `json:"uid"`
	Labels        map[string]string `json:"labels,omitempty"`
	Taints        []v1.Taint        `json:"taints,omitempty"`
	Unschedulable bool              `json:"unschedulable,omitempty"`
	// Allocatable holds cpu (millicores), memory (bytes), pods and any other
	// resource the node offers.
	Allocatable map[string]int64 `json:"allocatable"`
	Created     time.Time        `json:"created"`
	// Ready is the status of the node's Ready condition (True, False,
	// Unknown), empty when it has none.
	Ready string `json:"ready,omitempty"`
	// Kubelet is what its simulated kubelet was told to do (NotReady,
	// Stopped; KubeletStateAnnotation), empty for the default, Ready.
	Kubelet string `json:"kubelet,omitempty"`
	// Devices is how many devices the built-in DRA driver publishes for
	// the node (devices.CountAnnotation); 0 for none or a value it refuses.
	Devices int `json:"devices,omitempty"`
}

// KubeletStateAnnotation is the node annotation the simulated kubelets
// read (the kubelet package's StateAnnotation), which summaries report.
const KubeletStateAnnotation = "kubelet.minisched.io/state"

// PodSummary is what the dashboard shows of a pod.
type PodSummary struct {
	Namespace     string            `json:"namespace"`
	Name          string            `json:"name"`
	UID           string            `json:"uid"`
	Labels        map[string]string `json:"labels,omitempty"`
	NodeName      string            `json:"nodeName,omitempty"`
	SchedulerName string            `json:"schedulerName,omitempty"`
	Priority      int32             `json:"priority"`
	Phase         string            `json:"phase,omitempty"`
	// Requests holds the pod's effective requests: cpu in millicores,
	// memory in bytes, others in their units.
	Requests map[string]int64 `json:"requests,omitempty"`
	// Scheduled is the PodScheduled condition's status and message.
	Scheduled         string    `json:"scheduled,omitempty"`
	Message           string    `json:"message,omitempty"`
	NominatedNodeName string    `json:"nominatedNodeName,omitempty"`
	Created           time.Time `json:"created"`
	// RealNode, on a pod of a mirrored copy, is where the real scheduler
	// put it in the source (RealNodeAnnotation).
	RealNode string `json:"realNode,omitempty"`
	// Ready is the pod's Ready condition; Terminating says its deletion
	// waits for its grace period.
	Ready       bool `json:"ready,omitempty"`
	Terminating bool `json:"terminating,omitempty"`
	// Owner is the pod's controller, as Kind/name (ReplicaSet/web-5fc9f4bf66).
	Owner string `json:"owner,omitempty"`
}

// RealNodeAnnotation, on a pod of a mirrored copy, names the node the real
// scheduler bound the pod to in the source cluster.
const RealNodeAnnotation = "minisched.io/real-node"

// CycleSummary is one scheduling attempt in brief: what the cycle index
// keeps, what GET /api/v1/cycles lists, and what the events that change it
// carry (cycleStart, cycleEnd, permitWait, bindingEnd).
type CycleSummary struct {
	ID      int64  `json:"id"`
	Pod     PodRef `json:"pod"`
	Attempt int    `json:"attempt"`
	Nodes   int    `json:"nodes"`
	Profile string `json:"profile"`
	// Group is the pod group's cycle the cycle is part of.
	Group    *GroupCycle `json:"group,omitempty"`
	Start    time.Time   `json:"start"`
	End      *CycleEnd   `json:"end,omitempty"`
	EndTime  *time.Time  `json:"endTime,omitempty"`
	Binding  *BindingEnd `json:"binding,omitempty"`
	BindTime *time.Time  `json:"bindTime,omitempty"`
	// Waiting is true while the pod waits at Permit.
	Waiting bool `json:"waiting"`
	// FirstSeq and LastSeq bound the cycle's events in the history.
	FirstSeq uint64 `json:"firstSeq"`
	LastSeq  uint64 `json:"lastSeq"`
}

// SummarizeNode returns the summary of node.
func SummarizeNode(node *v1.Node) NodeSummary {
	s := NodeSummary{
		Name:          node.Name,
		UID:           string(node.UID),
		Labels:        node.Labels,
		Taints:        node.Spec.Taints,
		Unschedulable: node.Spec.Unschedulable,
		Allocatable:   quantities(node.Status.Allocatable),
		Created:       node.CreationTimestamp.Time,
		Kubelet:       node.Annotations[KubeletStateAnnotation],
	}
	s.Devices, _ = devices.Count(node)
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			s.Ready = string(c.Status)
		}
	}
	return s
}

// SummarizePod returns the summary of pod.
func SummarizePod(pod *v1.Pod) PodSummary {
	s := PodSummary{
		Namespace:         pod.Namespace,
		Name:              pod.Name,
		UID:               string(pod.UID),
		Labels:            pod.Labels,
		NodeName:          pod.Spec.NodeName,
		SchedulerName:     pod.Spec.SchedulerName,
		Phase:             string(pod.Status.Phase),
		Requests:          quantities(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})),
		NominatedNodeName: pod.Status.NominatedNodeName,
		Created:           pod.CreationTimestamp.Time,
		RealNode:          pod.Annotations[RealNodeAnnotation],
		Terminating:       pod.DeletionTimestamp != nil,
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		s.Owner = ref.Kind + "/" + ref.Name
	}
	if pod.Spec.Priority != nil {
		s.Priority = *pod.Spec.Priority
	}
	for _, c := range pod.Status.Conditions {
		switch c.Type {
		case v1.PodScheduled:
			s.Scheduled = string(c.Status)
			s.Message = c.Message
		case v1.PodReady:
			s.Ready = c.Status == v1.ConditionTrue
		}
	}
	return s
}

func quantities(list v1.ResourceList) map[string]int64 {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]int64, len(list))
	for name, q := range list {
		out[string(name)] = value(name, q)
	}
	return out
}

func value(name v1.ResourceName, q resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}
