package scenario

// A scenario's waits (a pod scheduled, unschedulable, running,
// succeeded or deleted, by name or by selector) and what they say when
// they time out.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/event"
)

// wait sleeps or polls a condition; it returns what went wrong, or "".
func (u *run) wait(ctx context.Context, w *Wait) string {
	if w.Duration > 0 {
		select {
		case <-time.After(time.Duration(w.Duration)):
		case <-ctx.Done():
		}
		return ""
	}
	timeout := time.Duration(w.Timeout)
	if timeout == 0 {
		timeout = defaultWaitTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		ok, state := u.condition(ctx, w)
		if ok {
			return ""
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Sprintf("waited %v %s; %s", timeout, describeWait(w), state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// condition says whether the wait is over and, if not, how things stand.
func (u *run) condition(ctx context.Context, w *Wait) (bool, string) {
	if w.Selector != "" {
		return u.selected(ctx, w)
	}
	switch w.For {
	case "running", "succeeded":
		ns, name, _ := strings.Cut(podKey(w.Pod), "/")
		p, err := u.r.env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("reading pod %s/%s: %v", ns, name, err)
		}
		if p.DeletionTimestamp == nil && strings.EqualFold(string(p.Status.Phase), w.For) {
			return true, ""
		}
		return false, fmt.Sprintf("the pod is %s", podState(p))
	case "scheduled":
		node, err := u.boundNode(ctx, w.Pod)
		if err != nil {
			return false, err.Error()
		}
		u.tr.catchUp()
		// The apiserver has the binding before the binding cycle reports
		// it: wait for that report too, so that the next steps, the
		// report and a recording all hold it. A pod minisched never tried
		// (its nodeName written by its creator) has none to wait for, nor
		// has one whose events left the history.
		if p := u.tr.pod(podKey(w.Pod)); node != "" && (p == nil || p.attempts == 0 || p.boundTo == node || u.tr.lost()) {
			return true, ""
		}
		return false, u.tr.describePod(podKey(w.Pod))
	case "deleted":
		// Gone from the apiserver, and from the scheduler's informers.
		ns, name, _ := strings.Cut(podKey(w.Pod), "/")
		_, err := u.r.env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		sched := u.r.env.Scheduler.Scheduler()
		if apierrors.IsNotFound(err) && sched != nil && sched.Seen("Pod", ns, name, "") {
			return true, ""
		}
		return false, "the pod still exists"
	case "unschedulable":
		// The attempt ended unschedulable and the pod is back in the
		// queue, so that what the next step checks has settled.
		u.tr.catchUp()
		if u.unschedulable(podKey(w.Pod)) {
			return true, ""
		}
		return false, u.tr.describePod(podKey(w.Pod))
	case "skipped":
		u.tr.catchUp()
		if p := u.tr.pod(podKey(w.Pod)); p != nil && len(p.skips) > 0 {
			return true, ""
		}
		return false, "no QueueingHint has answered QueueSkip for it; " + u.tr.describePod(podKey(w.Pod))
	}
	sched := u.r.env.Scheduler.Scheduler()
	if sched == nil {
		return false, "the scheduler is not running"
	}
	counts := sched.Queue().Counts()
	// A pod leaves the queue after WaitOnPermit, before it is bound: the
	// binding cycles under way count as busy too.
	binding := sched.BindingCycles()
	// Pods that came while their group was in its cycle join it next.
	busy := counts[event.ActiveQ] + counts[event.BackoffQ] + counts[event.ErrorBackoffQ] + counts[event.InFlight] + counts[event.PendingGroup] + binding
	if w.For == "queueEmpty" {
		busy += counts[event.Unschedulable] + counts[event.IncompleteGroup]
	}
	return busy == 0, fmt.Sprintf("the queue holds %d active, %d backoff, %d error backoff, %d unschedulable, %d in flight; %d binding cycle(s) under way",
		counts[event.ActiveQ], counts[event.BackoffQ], counts[event.ErrorBackoffQ], counts[event.Unschedulable], counts[event.InFlight], binding)
}

// selected counts the pods of a wait's selector in its state.
func (u *run) selected(ctx context.Context, w *Wait) (bool, string) {
	pods, err := u.r.env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: w.Selector})
	if err != nil {
		return false, fmt.Sprintf("listing the pods of %s: %v", w.Selector, err)
	}
	if w.For == "deleted" {
		return len(pods.Items) == 0, fmt.Sprintf("%d pods of %s left", len(pods.Items), w.Selector)
	}
	if w.For == "unschedulable" {
		u.tr.catchUp()
	}
	n, states := 0, map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		states[podState(p)]++
		if p.DeletionTimestamp != nil || w.Node != "" && p.Spec.NodeName != w.Node {
			continue
		}
		switch w.For {
		case "scheduled":
			if p.Spec.NodeName != "" {
				n++
			}
		case "unschedulable":
			if u.unschedulable(p.Namespace + "/" + p.Name) {
				n++
			}
		default:
			if strings.EqualFold(string(p.Status.Phase), w.For) {
				n++
			}
		}
	}
	want := max(w.Count, 1)
	on := ""
	if w.Node != "" {
		on = " on " + w.Node
	}
	return n >= want, fmt.Sprintf("%d of %d pods of %s%s %s; they are %s", n, want, w.Selector, on, w.For, describeStates(states))
}

// unschedulable says whether a pod's last attempt ended unschedulable and
// it is back in the queue, so that what the next step checks has settled.
func (u *run) unschedulable(key string) bool {
	p := u.tr.pod(key)
	where := u.queueOf(key)
	return p != nil && p.lastEnd != nil && p.lastEnd.Result == event.ResultUnschedulable && where != "" && where != string(event.InFlight)
}

// podState is a pod's life in a word: pending, bound, Running, Succeeded,
// Failed, or terminating.
func podState(p *v1.Pod) string {
	switch {
	case p.DeletionTimestamp != nil:
		return "terminating"
	case p.Status.Phase == v1.PodRunning || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
		return string(p.Status.Phase)
	case p.Spec.NodeName != "":
		return "bound"
	}
	return "pending"
}

func describeStates(states map[string]int) string {
	if len(states) == 0 {
		return "none yet"
	}
	parts := make([]string, 0, len(states))
	for s, n := range states {
		parts = append(parts, fmt.Sprintf("%d %s", n, s))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func (u *run) boundNode(ctx context.Context, pod string) (string, error) {
	ns, name, _ := strings.Cut(podKey(pod), "/")
	p, err := u.r.env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	return p.Spec.NodeName, nil
}

func describeWait(w *Wait) string {
	switch w.For {
	case "":
		return time.Duration(w.Duration).String()
	case "scheduled", "unschedulable", "deleted", "running", "succeeded":
		if w.Selector != "" {
			if w.For == "deleted" {
				return fmt.Sprintf("for the pods of %s to be deleted", w.Selector)
			}
			on := ""
			if w.Node != "" {
				on = " on " + w.Node
			}
			return fmt.Sprintf("for %d pods of %s%s to be %s", max(w.Count, 1), w.Selector, on, w.For)
		}
		return fmt.Sprintf("for pod %s to be %s", podKey(w.Pod), w.For)
	case "skipped":
		return fmt.Sprintf("for a QueueingHint of pod %s to answer QueueSkip", podKey(w.Pod))
	case "settled":
		return "for the queue to settle"
	}
	return "for the queue to empty"
}
