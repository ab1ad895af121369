package minisched

// SchedulerAsyncAPICalls (beta, off by default in 1.37): with the gate on,
// as under kube-scheduler, a pod's status patches and its binding go
// through upstream's API dispatcher. It sends them from goroutines of its
// own, so a cycle that writes a pod's condition does not wait for the
// apiserver; a newer patch of the same pod merges into one still waiting;
// and an informer's update that already shows a waiting patch's effect
// drops it (SyncObject). DefaultBinder and preemption reach the dispatcher
// through the framework's APICacher, minisched's status patches through
// updateStatus.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	apidispatcher "k8s.io/kubernetes/pkg/scheduler/backend/api_dispatcher"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	apicalls "k8s.io/kubernetes/pkg/scheduler/framework/api_calls"
)

// apiCacher hands the framework's API calls to the dispatcher: status
// patches directly, bindings through the cache, as upstream's APICache
// does (its own needs upstream's queue).
type apiCacher struct {
	dispatcher *apidispatcher.APIDispatcher
	cache      internalcache.Cache
}

var _ fwk.APICacher = apiCacher{}

func (c apiCacher) PatchPodStatus(pod *v1.Pod, conditions []*v1.PodCondition, nominating *fwk.NominatingInfo) (<-chan error, error) {
	onFinish := make(chan error, 1)
	err := c.dispatcher.Add(apicalls.Implementations.PodStatusPatch(pod, conditions, nominating), fwk.APICallOptions{OnFinish: onFinish})
	// A call merged into or overwritten by another is no error.
	if fwk.IsUnexpectedError(err) {
		return onFinish, err
	}
	return onFinish, nil
}

func (c apiCacher) BindPod(binding *v1.Binding) (<-chan error, error) {
	return c.cache.BindPod(binding)
}

// WaitOnFinish waits for the call's outcome; a call skipped or overwritten
// has done its work.
func (c apiCacher) WaitOnFinish(ctx context.Context, onFinish <-chan error) error {
	select {
	case err := <-onFinish:
		if fwk.IsUnexpectedError(err) {
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// syncWithDispatcher shows an informer's update of a pod to the dispatcher,
// which drops a waiting patch the update shows has no effect left.
func (s *Scheduler) syncWithDispatcher(pod *v1.Pod) {
	if s.dispatcher == nil {
		return
	}
	if _, err := s.dispatcher.SyncObject(pod); err != nil {
		s.logger.Error(err, "Syncing a pod with the API dispatcher", "pod", pod.Namespace+"/"+pod.Name)
	}
}
