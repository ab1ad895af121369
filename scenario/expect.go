package scenario

// A scenario's expectations checked against the cluster and
// the queue, each with what was found.

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/event"
)

// expect checks each field of e that is set.
func (u *run) expect(ctx context.Context, step int, e *Expect) []ExpectationReport {
	var out []ExpectationReport
	add := func(want string, ok bool, saw string) {
		out = append(out, ExpectationReport{Step: step, Expectation: want, Passed: ok, Saw: saw})
	}
	key := podKey(e.Pod)
	p := u.tr.pod(key)
	if e.Node != "" {
		node, err := u.boundNode(ctx, e.Pod)
		saw := "bound to " + node
		if err != nil {
			saw = err.Error()
		} else if node == "" {
			saw = "not bound; " + u.tr.describePod(key)
		}
		add(fmt.Sprintf("pod %s on node %s", key, e.Node), node == e.Node, saw)
	}
	if e.Queue != "" {
		where := u.queueOf(key)
		saw := "in " + where
		if where == "" {
			saw = "in no queue"
		}
		add(fmt.Sprintf("pod %s in the %s queue", key, e.Queue), where == e.Queue, saw)
	}
	if e.RejectedBy != "" {
		saw, ok := "no attempt ended unschedulable", false
		if p != nil && p.lastEnd != nil {
			saw = fmt.Sprintf("last attempt %s, plugins %v: %s", p.lastEnd.Result, p.lastEnd.Plugins, p.lastEnd.Message)
			ok = p.lastEnd.Result == event.ResultUnschedulable && contains(p.lastEnd.Plugins, e.RejectedBy)
		}
		add(fmt.Sprintf("pod %s unschedulable because of %s", key, e.RejectedBy), ok, saw)
	}
	if e.MovedBy != "" {
		var moved []string
		if p != nil {
			moved = p.movedBy
		}
		add(fmt.Sprintf("pod %s moved by %s", key, e.MovedBy), contains(moved, e.MovedBy), fmt.Sprintf("moved by %v", moved))
	}
	if e.SkippedBy != "" {
		saw, ok := "no QueueSkip", false
		if p != nil && len(p.skips) > 0 {
			words := make([]string, len(p.skips))
			for i, s := range p.skips {
				words[i] = s.String()
				ok = ok || contains(s.plugins, e.SkippedBy)
			}
			saw = "QueueSkip to " + strings.Join(words, "; ")
		}
		add(fmt.Sprintf("pod %s skipped by %s's QueueingHint", key, e.SkippedBy), ok, saw)
	}
	if e.GatedBy != "" {
		var gated []string
		if p != nil {
			gated = p.gatedBy
		}
		add(fmt.Sprintf("pod %s gated by %s", key, e.GatedBy), contains(gated, e.GatedBy), fmt.Sprintf("gated by %v", gated))
	}
	if e.MinAttempts > 0 {
		attempts := 0
		if p != nil {
			attempts = p.attempts
		}
		add(fmt.Sprintf("pod %s tried at least %d times", key, e.MinAttempts), attempts >= e.MinAttempts, fmt.Sprintf("%d attempts", attempts))
	}
	if e.Explains != "" {
		ok, saw := u.explains(ctx, key, e.Explains)
		add(fmt.Sprintf("pod %s explained with %q", key, e.Explains), ok, saw)
	}
	if np := e.NodePods; np != nil {
		pods, err := u.r.env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + np.Node, LabelSelector: e.Selector})
		saw, n := "", 0
		if err != nil {
			saw = err.Error()
		} else {
			terminating := 0
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					terminating++
				}
			}
			n = len(pods.Items) - terminating
			saw = fmt.Sprintf("%d pods", n)
			if terminating > 0 {
				saw += fmt.Sprintf(", and %d being deleted", terminating)
			}
		}
		add(fmt.Sprintf("%d pods%s on node %s", np.Count, of(e.Selector), np.Node), err == nil && n == np.Count, saw)
	}
	if e.ScheduledPods != nil || e.UnscheduledPods != nil {
		bound, pending, err := u.countPods(ctx, e.Selector)
		if err != nil {
			add("pod counts", false, err.Error())
			return out
		}
		if e.ScheduledPods != nil {
			add(fmt.Sprintf("%d scheduled pods%s", *e.ScheduledPods, of(e.Selector)), bound == *e.ScheduledPods, fmt.Sprintf("%d scheduled", bound))
		}
		if e.UnscheduledPods != nil {
			add(fmt.Sprintf("%d unscheduled pods%s", *e.UnscheduledPods, of(e.Selector)), pending == *e.UnscheduledPods, fmt.Sprintf("%d unscheduled", pending))
		}
	}
	return out
}

// explains asks for the pod's explanation and whether its sentence says
// want; what it saw instead.
func (u *run) explains(ctx context.Context, key, want string) (bool, string) {
	sched := u.r.env.Scheduler.Scheduler()
	if sched == nil {
		return false, "no scheduler runs"
	}
	ns, name, _ := strings.Cut(key, "/")
	e, err := sched.Explain(ctx, ns, name)
	if err != nil {
		return false, err.Error()
	}
	return strings.Contains(e.Sentence, want), e.Sentence
}

func (u *run) queueOf(key string) string {
	sched := u.r.env.Scheduler.Scheduler()
	if sched == nil {
		return ""
	}
	for _, e := range sched.Queue().List() {
		if e.Pod.Namespace+"/"+e.Pod.Name == key {
			return string(e.Queue)
		}
	}
	return ""
}

// of names a selector the counts keep to.
func of(selector string) string {
	if selector == "" {
		return ""
	}
	return " of " + selector
}

// countPods counts the pods of selector (all of them for ""), leaving out
// those being deleted.
func (u *run) countPods(ctx context.Context, selector string) (bound, pending int, err error) {
	pods, err := u.r.env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0, 0, err
	}
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName != "":
			bound++
		default:
			pending++
		}
	}
	return bound, pending, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
