package minisched

// Reserve, Unreserve, Permit, PreBind, Bind and PostBind.

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
	"minisched/minisched/queue"
)

// reserve runs Reserve in order until one fails.
func (c *cycle) reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	return inOrder(ctx, c, state, "Reserve", node, slices.All(c.p.reserve), (*fwk.Status).IsSuccess,
		func(ctx context.Context, state fwk.CycleState, pl fwk.ReservePlugin) *fwk.Status {
			return pl.Reserve(ctx, state, pod, node)
		})
}

// unreserve runs Unreserve of every Reserve plugin, in reverse order.
func (c *cycle) unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	inOrder(ctx, c, state, "Unreserve", node, slices.Backward(c.p.reserve), always,
		func(ctx context.Context, state fwk.CycleState, pl fwk.ReservePlugin) *fwk.Status {
			pl.Unreserve(ctx, state, pod, node)
			return nil
		})
}

// maxPermitWait caps what a Permit plugin may ask for, as upstream does.
const maxPermitWait = 15 * time.Minute

// permit runs Permit; any rejection ends it, any Wait makes the pod wait.
func (c *cycle) permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) (*fwk.Status, map[string]time.Duration) {
	var status *fwk.Status
	waits := map[string]time.Duration{}
	if timeout := runPoint(ctx, c, state, "Permit", node, slices.All(c.p.permit),
		func(ctx context.Context, state fwk.CycleState, pl fwk.PermitPlugin) (time.Duration, *fwk.Status) {
			s, wait := pl.Permit(ctx, state, pod, node)
			return wait, s
		},
		func(pl fwk.PermitPlugin, wait time.Duration, s *fwk.Status, r *event.PluginResult) bool {
			switch {
			case s.IsSuccess():
			case s.IsWait():
				wait = min(wait, maxPermitWait)
				r.TimeoutNanos = wait.Nanoseconds()
				waits[pl.Name()] = wait
				status = s
			default:
				status = rejectedOrError("Permit", pl.Name(), s)
				return true
			}
			return false
		}); timeout != nil {
		return timeout, nil
	}
	return status, waits
}

// preBindPreFlight asks each PreBind plugin whether it has work to do for
// the pod: Success if one has, Skip if none has. Plugins that Skip are not
// called at PreBind.
func (c *cycle) preBindPreFlight(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	skip, parallel := sets.New[string](), sets.New[string]()
	result := fwk.NewStatus(fwk.Skip)
	status := inOrder(ctx, c, state, "PreBindPreFlight", node, slices.All(c.p.preBind), func(s *fwk.Status) bool { return s.IsSuccess() || s.IsSkip() },
		func(ctx context.Context, state fwk.CycleState, pl fwk.PreBindPlugin) *fwk.Status {
			r, s := pl.PreBindPreFlight(ctx, state, pod, node)
			if r != nil && r.AllowParallel {
				parallel.Insert(pl.Name())
			}
			switch {
			case s.IsSuccess():
				result = nil
			case s.IsSkip():
				skip.Insert(pl.Name())
			case s.Code() != fwk.Error:
				return fwk.AsStatus(fmt.Errorf("PreBindPreFlight %s returned %q, which is unsupported. It is supposed to return Success, Skip, or Error status", pl.Name(), s.Code()))
			}
			return s
		})
	if status != nil {
		return status
	}
	state.SetSkipPreBindPlugins(skip)
	state.SetParallelPreBindPlugins(parallel)
	return result
}

// preBind runs PreBind in order until one fails, leaving out the plugins
// that skipped at PreBindPreFlight.
func (c *cycle) preBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	skip := state.GetSkipPreBindPlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.preBind), func(pl fwk.PreBindPlugin) bool { return skip.Has(pl.Name()) })
	return inOrder(ctx, c, state, "PreBind", node, slices.All(plugins), (*fwk.Status).IsSuccess,
		func(ctx context.Context, state fwk.CycleState, pl fwk.PreBindPlugin) *fwk.Status {
			return pl.PreBind(ctx, state, pod, node)
		})
}

// bind runs Bind plugins until one does not Skip.
func (c *cycle) bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	// Unless a plugin takes the pod, this is the point's status.
	status := fwk.NewStatus(fwk.Error, "every Bind plugin skipped the pod")
	if timeout := runPoint(ctx, c, state, "Bind", node, slices.All(c.p.bind),
		statusOnly(func(ctx context.Context, state fwk.CycleState, pl fwk.BindPlugin) *fwk.Status {
			return pl.Bind(ctx, state, pod, node)
		}),
		func(pl fwk.BindPlugin, _ struct{}, s *fwk.Status, _ *event.PluginResult) bool {
			switch {
			case s.IsSkip():
				return false
			case s.IsSuccess():
				status = nil
			default:
				status = rejectedOrError("Bind", pl.Name(), s)
			}
			return true
		}); timeout != nil {
		return timeout
	}
	return status
}

// postBind tells every PostBind plugin that the pod is bound.
func (c *cycle) postBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	inOrder(ctx, c, state, "PostBind", node, slices.All(c.p.postBind), always,
		func(ctx context.Context, state fwk.CycleState, pl fwk.PostBindPlugin) *fwk.Status {
			pl.PostBind(ctx, state, pod, node)
			return nil
		})
}

// unreserveAndForget undoes Reserve and Assume: in a pod group's cycle, in
// the snapshot, where the pod gets back the nomination the assume took.
func (s *Scheduler) unreserveAndForget(ctx context.Context, c *cycle, state fwk.CycleState, assumed *v1.Pod, host string) error {
	c.unreserve(ctx, state, assumed, host)
	if state.IsPodGroupSchedulingCycle() {
		if err := s.snapshot.ForgetPod(c.logger, assumed); err != nil {
			c.logger.Error(err, "Forgetting the pod assumed in the snapshot", "pod", klog.KObj(assumed))
			return err
		}
		if node := assumed.Status.NominatedNodeName; node != "" {
			s.queue.AddNominatedPod(c.logger, podInfo(assumed), &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: node})
		}
		return nil
	}
	if err := s.cache.ForgetPod(c.logger, assumed); err != nil {
		c.logger.Error(err, "Forgetting the assumed pod", "pod", klog.KObj(assumed))
		return err
	}
	return nil
}

// bindingFailed undoes the cycle's reservation and sends the pod back to the
// queue. The room it held is free again, so pods waiting for room may retry;
// after a rejection the pod itself is left out of that, and the move waits
// until the pod is back in the queue with its own reasons.
func (s *Scheduler) bindingFailed(ctx context.Context, c *cycle, pi *queue.PodInfo, state fwk.CycleState, assumed *v1.Pod, host string, status *fwk.Status, start time.Time, permitNanos int64) {
	if err := s.unreserveAndForget(ctx, c, state, assumed, host); err == nil {
		if status.IsRejected() {
			defer s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodDelete, assumed, nil, func(p *v1.Pod) bool { return p.UID != assumed.UID })
		} else {
			s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodDelete, assumed, nil, nil)
		}
	}
	c.bindingEnd(event.BindingEnd{Node: host, Message: status.Message(), Plugin: status.Plugin(),
		PermitNanos: permitNanos, Nanos: time.Since(start).Nanoseconds()})
	f := &failure{nominating: clearNomination}
	if fitErr, ok := status.AsError().(*framework.FitError); ok {
		f.diagnosis = &fitErr.Diagnosis
	}
	s.requeue(ctx, c.p, pi, status, f)
}
