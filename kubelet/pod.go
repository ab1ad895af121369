package kubelet

import (
	"context"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// syncPod does for one bound pod what its node's kubelet would do next:
// start it, finish its run, or complete its graceful deletion. It returns
// when to look again.
func (k *Kubelets) syncPod(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	pod, err := k.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	node, err := k.nodes.Get(pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		// No kubelet yet, or no more: a node this cache has yet to see
		// brings its pods back when it comes (see the node handler); podgc
		// deletes the pods of a node that is gone.
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if stateOf(node) == StateStopped {
		return 0, nil
	}
	now := time.Now()
	if pod.DeletionTimestamp != nil {
		return k.finishDeletion(ctx, pod, now)
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return 0, nil
	}
	if pod.Status.StartTime == nil {
		if due := k.firstSeen(pod, now).Add(k.cfg.StartDelay); now.Before(due) {
			return due.Sub(now), nil
		}
		started := pod.DeepCopy()
		k.start(started, node, now)
		if _, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, started, metav1.UpdateOptions{}); err != nil {
			return 0, ignoreGone(err)
		}
		if runFor, _, ok := runSpec(pod); ok {
			return runFor, nil
		}
		return 0, nil
	}
	runFor, code, ok := runSpec(pod)
	if !ok {
		return 0, nil
	}
	if due := lastStart(pod).Add(runFor); now.Before(due) {
		return due.Sub(now), nil
	}
	exited := pod.DeepCopy()
	k.exit(exited, code, now)
	if _, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, exited, metav1.UpdateOptions{}); err != nil {
		return 0, ignoreGone(err)
	}
	if exited.Status.Phase == v1.PodRunning {
		return runFor, nil // restarted: it runs again
	}
	return 0, nil
}

// finishDeletion deletes a terminating pod once its grace period, capped
// by MaxGracePeriod, has passed since the deletion was asked for: the
// kubelet's final delete, with grace 0 and the pod's uid as precondition.
func (k *Kubelets) finishDeletion(ctx context.Context, pod *v1.Pod, now time.Time) (time.Duration, error) {
	grace := time.Duration(ptr.Deref(pod.DeletionGracePeriodSeconds, 0)) * time.Second
	asked := pod.DeletionTimestamp.Add(-grace)
	if k.cfg.MaxGracePeriod >= 0 && grace > k.cfg.MaxGracePeriod {
		grace = k.cfg.MaxGracePeriod
	}
	if due := asked.Add(grace); now.Before(due) {
		return due.Sub(now), nil
	}
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if apierrors.IsConflict(err) {
		// The uid precondition failed: a new pod of the same name, which
		// its own event brings here.
		return 0, nil
	}
	return 0, ignoreGone(err)
}

// ignoreGone: a pod deleted meanwhile needs nothing more.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (k *Kubelets) firstSeen(pod *v1.Pod, now time.Time) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.seen[string(pod.UID)]
	if !ok {
		t = now
		k.seen[string(pod.UID)] = t
	}
	return t
}

// runSpec reads RunForAnnotation and ExitCodeAnnotation. A pod without a
// valid run-for runs until it is deleted.
func runSpec(pod *v1.Pod) (time.Duration, int32, bool) {
	d, err := time.ParseDuration(pod.Annotations[RunForAnnotation])
	if err != nil || d < 0 {
		return 0, 0, false
	}
	code, err := strconv.ParseInt(pod.Annotations[ExitCodeAnnotation], 10, 32)
	if err != nil {
		code = 0
	}
	return d, int32(code), true
}

// lastStart is when the pod's containers last started.
func lastStart(pod *v1.Pod) time.Time {
	t := pod.Status.StartTime.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if r := cs.State.Running; r != nil && r.StartedAt.After(t) {
			t = r.StartedAt.Time
		}
	}
	return t
}

// start writes the status a kubelet posts once a pod's containers run:
// Running, Ready, with its IPs and start time.
func (k *Kubelets) start(pod *v1.Pod, node *v1.Node, now time.Time) {
	at := metav1.NewTime(now)
	s := &pod.Status
	s.Phase = v1.PodRunning
	s.StartTime = &at
	hostIP := internalIP(node)
	if hostIP == "" {
		hostIP = k.addresses.node(node.Name).String()
	}
	s.HostIP, s.HostIPs = hostIP, []v1.HostIP{{IP: hostIP}}
	podIP := hostIP
	if !pod.Spec.HostNetwork {
		podIP = k.addresses.pod(node.Name).String()
	}
	s.PodIP, s.PodIPs = podIP, []v1.PodIP{{IP: podIP}}
	s.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		cs := containerStatus(pod, c, at)
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			// An init container ran to completion; a sidecar runs on.
			cs.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: at, FinishedAt: at, ContainerID: cs.ContainerID}}
			cs.Ready, cs.Started = false, ptr.To(false)
		}
		s.InitContainerStatuses = append(s.InitContainerStatuses, cs)
	}
	s.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, containerStatus(pod, c, at))
	}
	ready := v1.ConditionTrue
	readyReason := ""
	for _, gate := range pod.Spec.ReadinessGates {
		if conditionStatus(pod, gate.ConditionType) != v1.ConditionTrue {
			ready, readyReason = v1.ConditionFalse, "ReadinessGatesNotReady"
		}
	}
	setCondition(s, v1.PodReadyToStartContainers, v1.ConditionTrue, "", at)
	setCondition(s, v1.PodInitialized, v1.ConditionTrue, "", at)
	setCondition(s, v1.ContainersReady, v1.ConditionTrue, "", at)
	setCondition(s, v1.PodReady, ready, readyReason, at)
}

// exit writes what the kubelet posts when the containers exit with code:
// the pod ends (Succeeded or Failed) unless its restart policy restarts
// them, which then run again at once.
func (k *Kubelets) exit(pod *v1.Pod, code int32, now time.Time) {
	at := metav1.NewTime(now)
	s := &pod.Status
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	restart := pod.Spec.RestartPolicy == v1.RestartPolicyAlways ||
		pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure && code != 0
	for i := range s.ContainerStatuses {
		cs := &s.ContainerStatuses[i]
		started := at
		if r := cs.State.Running; r != nil {
			started = r.StartedAt
		}
		terminated := &v1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: at, ContainerID: cs.ContainerID}
		if restart {
			cs.LastTerminationState = v1.ContainerState{Terminated: terminated}
			cs.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: at}}
			cs.RestartCount++
			continue
		}
		cs.State = v1.ContainerState{Terminated: terminated}
		cs.Ready, cs.Started = false, ptr.To(false)
	}
	if restart {
		return
	}
	s.Phase = v1.PodSucceeded
	if code != 0 {
		s.Phase = v1.PodFailed
	}
	setCondition(s, v1.PodReadyToStartContainers, v1.ConditionFalse, "", at)
	setCondition(s, v1.ContainersReady, v1.ConditionFalse, "PodCompleted", at)
	setCondition(s, v1.PodReady, v1.ConditionFalse, "PodCompleted", at)
}

func containerStatus(pod *v1.Pod, c v1.Container, at metav1.Time) v1.ContainerStatus {
	cs := v1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: c.Image,
		ContainerID: "minisched://" + string(pod.UID) + "/" + c.Name,
		State:       v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: at}},
		Ready:       true, Started: ptr.To(true),
	}
	if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
		cs.AllocatedResources = c.Resources.Requests.DeepCopy()
		cs.Resources = c.Resources.DeepCopy()
	}
	return cs
}

func setCondition(s *v1.PodStatus, t v1.PodConditionType, status v1.ConditionStatus, reason string, at metav1.Time) {
	for i := range s.Conditions {
		if c := &s.Conditions[i]; c.Type == t {
			if c.Status != status {
				c.LastTransitionTime = at
			}
			c.Status, c.Reason = status, reason
			return
		}
	}
	s.Conditions = append(s.Conditions, v1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: at})
}

func conditionStatus(pod *v1.Pod, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return v1.ConditionUnknown
}

func internalIP(node *v1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}
