package minisched

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"minisched/event"
	"minisched/minisched/queue"
)

// clearNomination is what every failure but a PostFilter run says of the
// pod's nominated node: forget it.
var clearNomination = &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: ""}

// failure is what a failed attempt knows beyond its status.
type failure struct {
	// diagnosis names the plugins that rejected the pod on each node; only
	// a fit error (a rejection by plugins) has one.
	diagnosis *framework.Diagnosis
	// nominating is what becomes of the pod's nominated node: cleared,
	// unless PostFilter ran, which may set one (preemption) or say nothing
	// (nil: the pod keeps what its status says).
	nominating *fwk.NominatingInfo
	// withGroup: its pod group was turned away, and the pod with it,
	// though no plugin rejected the pod itself; placed is where the
	// group's simulation had placed it, if it had.
	withGroup bool
	placed    placement
}

// fail ends a scheduling cycle that chose no node and requeues the pod.
// A failure without a diagnosis is an error to the queue, whatever its
// status code: no plugin's event can cure it, so it retries after an
// error backoff.
func (s *Scheduler) fail(ctx context.Context, c *cycle, pi *queue.PodInfo, status *fwk.Status, f *failure) {
	if f == nil {
		f = &failure{nominating: clearNomination}
	}
	end := event.CycleEnd{Result: event.ResultError, Message: status.Message()}
	switch {
	case f.diagnosis != nil:
		end.Result, end.Plugins = event.ResultUnschedulable, rejectors(f.diagnosis)
	case f.withGroup:
		end.Result, end.SimulatedNode, end.FeasibleNodes = event.ResultUnschedulable, f.placed.host, f.placed.feasible
	}
	c.end(end)
	s.requeue(ctx, c.p, pi, status, f)
}

// requeue does what kube-scheduler's handleSchedulingFailure does: hands
// the pod back to the queue (unless it was deleted, bound or recreated
// meanwhile), records or clears its nomination, writes a FailedScheduling
// Event and the PodScheduled=False condition that `kubectl describe pod`
// shows.
func (s *Scheduler) requeue(ctx context.Context, p *profile, pi *queue.PodInfo, status *fwk.Status, f *failure) {
	logger := klog.FromContext(ctx)
	pod := pi.Pod
	reason := v1.PodReasonSchedulerError
	if status.IsRejected() {
		reason = v1.PodReasonUnschedulable
	}
	qf := queue.Failure{Message: status.Message()}
	if f.diagnosis != nil {
		qf.Plugins, qf.Pending = f.diagnosis.UnschedulablePlugins, f.diagnosis.PendingPlugins
	}
	current, err := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	switch {
	case err != nil:
		logger.V(2).Info("The pod is gone from the informer's cache", "err", err)
		s.queue.Done(pod.UID)
	case current.Spec.NodeName != "":
		logger.V(2).Info("The pod was assigned meanwhile; not requeued", "node", current.Spec.NodeName)
		s.queue.Done(pod.UID)
	case current.UID != pod.UID:
		logger.V(2).Info("The pod was recreated meanwhile; not requeued")
		s.queue.Done(pod.UID)
		return
	default:
		pod = current.DeepCopy()
		qf.Pod = pod
		s.queue.AddUnschedulableIfNotPresent(pi, qf)
	}
	s.queue.AddNominatedPod(logger, podInfo(pod), f.nominating)

	p.fw.EventRecorder().Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", truncate(status.Message()))
	condition := &v1.PodCondition{
		Type:               v1.PodScheduled,
		ObservedGeneration: podutil.CalculatePodConditionObservedGeneration(&pod.Status, pod.Generation, v1.PodScheduled),
		Status:             v1.ConditionFalse,
		Reason:             reason,
		Message:            status.Message(),
	}
	if err := s.updateStatus(ctx, pod, condition, f.nominating); err != nil {
		logger.V(2).Info("Could not write the pod's scheduling condition", "err", err)
	}
}

// updateStatus patches the pod's PodScheduled condition and nominated node
// when they change.
// With SchedulerAsyncAPICalls on, the dispatcher sends the patch later,
// and itself skips one with no effect.
func (s *Scheduler) updateStatus(ctx context.Context, pod *v1.Pod, condition *v1.PodCondition, nominating *fwk.NominatingInfo) error {
	if s.apiCacher != nil {
		var conditions []*v1.PodCondition
		if condition != nil {
			conditions = []*v1.PodCondition{condition}
		}
		_, err := s.apiCacher.PatchPodStatus(pod, conditions, nominating)
		return err
	}
	status := pod.Status.DeepCopy()
	nominate := nominating.Mode() == fwk.ModeOverride && pod.Status.NominatedNodeName != nominating.NominatedNodeName
	changed := condition != nil && podutil.UpdatePodCondition(status, condition)
	if !changed && !nominate {
		return nil
	}
	if nominate {
		status.NominatedNodeName = nominating.NominatedNodeName
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return util.PatchPodStatus(ctx, s.client, pod.Name, pod.Namespace, &pod.Status, status)
}

// truncate keeps an Event's message within what the apiserver accepts.
func truncate(msg string) string {
	limit := validation.NoteLengthLimit
	if len(msg) <= limit {
		return msg
	}
	return msg[:limit-len(" ...")] + " ..."
}

func podInfo(pod *v1.Pod) *framework.PodInfo {
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		// Only malformed affinity fails here; the pod is still worth naming.
		return &framework.PodInfo{Pod: pod}
	}
	return pi
}

// rejectedAt turns a rejection by a plugin on the chosen node (Reserve,
// Permit) into upstream's fit error for one node, so that the Event and the
// condition read "0/1 nodes are available: ..." as kube-scheduler's do, and
// the pod waits in the unschedulable set for that plugin's events. Any
// other failure is an error, returned as it is.
func rejectedAt(pod *v1.Pod, host string, status *fwk.Status) (*fwk.Status, *failure) {
	f := &failure{nominating: clearNomination}
	if !status.IsRejected() {
		return status, f
	}
	fitErr := &framework.FitError{NumAllNodes: 1, Pod: pod, Diagnosis: framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}}
	fitErr.Diagnosis.NodeToStatus.Set(host, status)
	fitErr.Diagnosis.AddPluginStatus(status)
	f.diagnosis = &fitErr.Diagnosis
	return fwk.NewStatus(status.Code()).WithError(fitErr), f
}

// rejectedByPlugin turns a rejection at WaitOnPermit into a fit error that
// blames the plugin, as upstream's binding cycle does.
func rejectedByPlugin(pod *v1.Pod, host string, status *fwk.Status) *fwk.Status {
	fitErr := &framework.FitError{NumAllNodes: 1, Pod: pod, Diagnosis: framework.Diagnosis{
		NodeToStatus:         framework.NewDefaultNodeToStatus(),
		UnschedulablePlugins: sets.New(status.Plugin()),
	}}
	fitErr.Diagnosis.NodeToStatus.Set(host, status)
	return fwk.NewStatus(status.Code()).WithError(fitErr).WithPlugin(status.Plugin())
}
