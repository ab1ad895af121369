package schedperf

// A createPods in steady state, as upstream's runner runs it
// (createPodsSteadily): Count pods made at once, then, for the op's
// duration, each pod of the namespace deleted as soon as it is seen
// scheduled and one more made, so that the scheduler always has about Count
// pods to place on a cluster that stays as full as it began.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func (e *executor) createPodsSteadily(ctx context.Context, ns string, o *createPodsOp, initial []*v1.Pod) error {
	e.o.Progress(fmt.Sprintf("creating pods in %s for %s, %d pending at a time", ns, o.Duration.Duration, o.Count))
	if e.sampling != nil {
		e.sampling.backlog = o.Count
	}
	ctx, cancel := context.WithTimeout(ctx, o.Duration.Duration)
	defer cancel()
	scheduled := make(chan *v1.Pod, o.Count)
	seen := func(old, pod *v1.Pod) {
		if pod.Namespace != ns || pod.Spec.NodeName == "" || (old != nil && old.Spec.NodeName != "") {
			return
		}
		select {
		case scheduled <- pod:
		case <-ctx.Done():
		}
	}
	handle, err := e.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { seen(nil, obj.(*v1.Pod)) },
		UpdateFunc: func(old, obj any) { seen(old.(*v1.Pod), obj.(*v1.Pod)) },
	})
	if err != nil {
		return fmt.Errorf("watching the pods of %s: %w", ns, err)
	}
	defer func() { _ = e.pods.RemoveEventHandler(handle) }()

	if err := parallel(ctx, len(initial), func(i int) error {
		_, err := e.o.Client.CoreV1().Pods(ns).Create(ctx, initial[i], metav1.CreateOptions{})
		return err
	}); err != nil && !ending(ctx, err) {
		return fmt.Errorf("creating the first %d pods: %w", o.Count, err)
	}
	placed := 0
	for {
		select {
		case <-ctx.Done():
			// Upstream's check: a run that placed nothing measured nothing.
			if placed == 0 {
				return errors.New("no pod got scheduled in the steady state's duration")
			}
			return nil
		case pod := <-scheduled:
			placed++
			if e.sampling != nil {
				e.sampling.gone(pod)
			}
			err := e.o.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{
				GracePeriodSeconds: ptr.To[int64](0), PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
			if ending(ctx, err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("deleting scheduled pod %s: %w", pod.Name, err)
			}
			next, err := e.renderPods(o, 1)
			if err != nil {
				return fmt.Errorf("making the next pod: %w", err)
			}
			_, err = e.o.Client.CoreV1().Pods(ns).Create(ctx, next[0], metav1.CreateOptions{})
			if ending(ctx, err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("creating the next pod: %w", err)
			}
		}
	}
}

// ending says whether a call failed because the op's duration ran out:
// its context ended, or the client's rate limiter declined to wait past
// the end, which it says before the context ends.
func ending(ctx context.Context, err error) bool {
	return ctx.Err() != nil || (err != nil && strings.Contains(err.Error(), "would exceed context deadline"))
}

// The sampler's record of the pods the steady state deleted once they were
// scheduled: they still count as placed, and as made in the window.
func (s *sampler) gone(pod *v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watches(pod) {
		s.deleted[pod.UID] = true
	}
}
