package minisched

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"minisched/minisched/event"
	"minisched/minisched/queue"
)

// failure is what a failed attempt knows beyond its status.
type failure struct {
	// diagnosis names the plugins that rejected the pod on each node.
	diagnosis *framework.Diagnosis
	// nominating is preemption's nomination, if it made one.
	nominating *fwk.NominatingInfo
}

// fail ends a scheduling cycle that chose no node and requeues the pod.
func (s *Scheduler) fail(ctx context.Context, c *cycle, pi *queue.PodInfo, status *fwk.Status, f *failure) {
	result := event.ResultError
	if status.IsRejected() {
		result = event.ResultUnschedulable
	}
	var plugins []string
	if f != nil {
		plugins = rejectors(f.diagnosis)
	}
	if len(plugins) == 0 && status.Plugin() != "" {
		plugins = []string{status.Plugin()}
	}
	c.end(result, "", status.Message(), plugins, 0, nil)
	s.requeue(ctx, pi, status, f)
}

// requeue hands a pod whose attempt failed back to the queue (unless it was
// deleted or bound meanwhile), records a nomination, and writes the
// PodScheduled=False condition that `kubectl describe pod` shows.
func (s *Scheduler) requeue(ctx context.Context, pi *queue.PodInfo, status *fwk.Status, f *failure) {
	pod := pi.Pod
	current, err := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	if err != nil || current.UID != pod.UID || current.Spec.NodeName != "" {
		s.queue.Done(pod.UID)
		return
	}
	pi.Pod = current
	qf := queue.Failure{Error: !status.IsRejected(), Message: status.Message()}
	if f != nil && f.diagnosis != nil {
		qf.Plugins, qf.Pending = f.diagnosis.UnschedulablePlugins, f.diagnosis.PendingPlugins
	}
	if status.IsRejected() && qf.Plugins.Len() == 0 && status.Plugin() != "" {
		qf.Plugins = sets.New(status.Plugin())
	}
	s.queue.AddUnschedulableIfNotPresent(pi, qf)

	var nominating *fwk.NominatingInfo
	if f != nil {
		nominating = f.nominating
	}
	if nominating.Mode() == fwk.ModeOverride {
		s.nominator.AddNominatedPod(klog.FromContext(ctx), podInfo(current), nominating)
	}
	reason := v1.PodReasonUnschedulable
	if !status.IsRejected() {
		reason = v1.PodReasonSchedulerError
	}
	condition := &v1.PodCondition{
		Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason,
		Message: truncate(status.Message()),
	}
	if err := s.updateStatus(ctx, current, condition, nominating); err != nil {
		klog.FromContext(ctx).V(2).Info("Could not write the pod's scheduling condition", "pod", klog.KObj(current), "err", err)
	}
}

// updateStatus patches the pod's PodScheduled condition and nominated node
// when they change.
func (s *Scheduler) updateStatus(ctx context.Context, pod *v1.Pod, condition *v1.PodCondition, nominating *fwk.NominatingInfo) error {
	status := pod.Status.DeepCopy()
	nominate := nominating.Mode() == fwk.ModeOverride && pod.Status.NominatedNodeName != nominating.NominatedNodeName
	if nominate {
		status.NominatedNodeName = nominating.NominatedNodeName
	}
	if !podutil.UpdatePodCondition(status, condition) && !nominate {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return util.PatchPodStatus(ctx, s.client, pod.Name, pod.Namespace, &pod.Status, status)
}

// truncate keeps a condition message within what the apiserver accepts.
func truncate(msg string) string {
	const max = 32 * 1024
	if len(msg) <= max {
		return msg
	}
	return msg[:max-len(" ...")] + " ..."
}

func podInfo(pod *v1.Pod) fwk.PodInfo {
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		// Only malformed affinity fails here; the pod is still worth naming.
		return &framework.PodInfo{Pod: pod}
	}
	return pi
}
