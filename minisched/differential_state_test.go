package minisched_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"minisched/event"
)

// miniState reads minisched's view; a non-empty reason says why it has not
// settled.
func (d *diff) miniState(ctx context.Context) (map[string]outcome, string) {
	s := d.h.svc.Scheduler()
	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	for _, n := range nodes.Items {
		if !s.Seen("Node", "", n.Name, n.ResourceVersion) {
			return nil, "minisched has not handled node " + n.Name + " at its latest version"
		}
	}
	queued := map[string]int{}
	entries := s.Queue().List()
	for i, e := range entries {
		if e.Queue != event.Unschedulable {
			return nil, fmt.Sprintf("minisched holds %s in %s", e.Pod.Name, e.Queue)
		}
		queued[e.Pod.Name] = i
	}
	out := map[string]outcome{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !s.Seen("Pod", p.Namespace, p.Name, p.ResourceVersion) {
			return nil, "minisched has not handled pod " + p.Name + " at its latest version"
		}
		if p.Spec.NodeName != "" {
			out[p.Name] = outcome{Node: p.Spec.NodeName}
			continue
		}
		i, ok := queued[p.Name]
		if !ok {
			return nil, "minisched's queue does not hold the pending pod " + p.Name
		}
		e := entries[i]
		if e.GatingPlugin == "DefaultPreemption" {
			return nil, "minisched is still preempting for " + p.Name
		}
		// The plugins include the gating plugin, as upstream's
		// UnschedulablePlugins do.
		out[p.Name] = outcome{Plugins: e.Plugins, Gating: e.GatingPlugin, Attempts: e.Attempts, Message: scheduledMessage(p)}
	}
	for _, name := range d.created {
		if _, ok := out[name]; !ok && !s.Seen("Pod", "default", name, "") {
			return nil, "minisched has not handled the deletion of " + name
		}
	}
	return out, ""
}

// upState reads kube-scheduler's view: its cache and its queue.
func (d *diff) upState(ctx context.Context) (map[string]outcome, string) {
	q := d.up.queue
	if n := len(q.PodsInActiveQ()); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler holds %d pods in activeQ", n)
	}
	if n := len(q.PodsInBackoffQ()); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler holds %d pods in backoffQ", n)
	}
	if n := len(q.InFlightPods()); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler has %d pods in flight", n)
	}
	pods, err := d.up.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	nodes, err := d.up.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	dump := d.up.sched.Cache.Dump()
	if n := dump.AssumedPods.Len(); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler has %d assumed pods", n)
	}
	for _, n := range nodes.Items {
		ni := dump.Nodes[n.Name]
		if ni == nil || ni.Node() == nil || ni.Node().ResourceVersion != n.ResourceVersion {
			return nil, "kube-scheduler's cache does not hold node " + n.Name + " at its latest version"
		}
	}
	cached := map[string]*v1.Pod{}
	for _, ni := range dump.Nodes {
		for _, pi := range ni.GetPods() {
			cached[pi.GetPod().Name] = pi.GetPod()
		}
	}
	parked := map[string]*v1.Pod{}
	for _, p := range q.UnschedulablePods() {
		parked[p.Name] = p
	}
	out := map[string]outcome{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" {
			c := cached[p.Name]
			if c == nil || c.ResourceVersion != p.ResourceVersion || c.Spec.NodeName != p.Spec.NodeName {
				return nil, "kube-scheduler's cache does not hold " + p.Name + " at its latest version"
			}
			out[p.Name] = outcome{Node: p.Spec.NodeName}
			continue
		}
		u := parked[p.Name]
		if u == nil || u.ResourceVersion != p.ResourceVersion {
			return nil, "kube-scheduler has not parked " + p.Name + " at its latest version"
		}
		qpi, ok := q.GetPod(p.Name, p.Namespace, nil)
		if !ok {
			return nil, "kube-scheduler's queue lost " + p.Name
		}
		if qpi.GatingPlugin == "DefaultPreemption" {
			return nil, "kube-scheduler is still preempting for " + p.Name
		}
		out[p.Name] = outcome{
			Plugins: sets.List(qpi.UnschedulablePlugins.Union(qpi.PendingPlugins)), Gating: qpi.GatingPlugin,
			Attempts: qpi.Attempts, Message: scheduledMessage(p),
		}
	}
	for name := range cached {
		if _, ok := out[name]; !ok {
			return nil, "kube-scheduler's cache still holds the deleted pod " + name
		}
	}
	for name := range parked {
		if _, ok := out[name]; !ok {
			return nil, "kube-scheduler's queue still holds the deleted pod " + name
		}
	}
	return out, ""
}

// queuePath tells how the pod went through minisched's queue, with the
// time of each move from the first.
func (d *diff) queuePath(name string) string {
	var parts []string
	var first time.Time
	for _, e := range d.h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindQueue }) {
		if first.IsZero() {
			first = e.Time
		}
		q := e.Queue
		part := fmt.Sprintf("+%v %s", e.Time.Sub(first).Round(time.Millisecond), q.Action)
		if q.From != "" || q.To != "" {
			part += fmt.Sprintf(" %s->%s", q.From, q.To)
		}
		if q.Event != "" {
			part += " (" + q.Event + ")"
		}
		if q.BackoffUntil != nil {
			part += fmt.Sprintf(" until +%v", q.BackoffUntil.Sub(first).Round(time.Millisecond))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// explain tells what minisched saw of the pod's cycles, and what
// kube-scheduler wrote on it, for a failure message.
func (d *diff) explain(name string) string {
	var b strings.Builder
	ends := d.h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindCycleEnd })
	fmt.Fprintf(&b, "\n  minisched's cycles of %s:", name)
	if p, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		fmt.Fprintf(&b, "\n    labels %v", p.Labels)
	}
	for _, e := range d.h.log.find(name, ofKind(event.KindExtender)) {
		x := e.Extender
		fmt.Fprintf(&b, "\n    cycle %d: extender %s: %d nodes in, %d kept, failed %v, unresolvable %v, weight %d, error %q", e.Cycle, x.Verb, x.Nodes, x.Passed, x.Failed, x.Unresolvable, x.Weight, x.Error)
	}
	for _, e := range ends {
		c := e.CycleEnd
		fmt.Fprintf(&b, "\n    cycle %d: %s node=%q feasible=%d ties=%v plugins=%v %s", e.Cycle, c.Result, c.Node, c.FeasibleNodes, c.Ties, c.Plugins, c.Message)
	}
	if len(ends) > 0 {
		last := ends[len(ends)-1].Cycle
		for _, e := range d.h.log.find(name, func(e event.Event) bool { return e.Cycle == last }) {
			switch e.Kind {
			case event.KindFilter:
				label := "filter, in order"
				if e.Filter.NominatedNode {
					label = "filter on the nominated node"
				}
				fmt.Fprintf(&b, "\n    last cycle's %s:", label)
				for _, r := range e.Filter.Rows() {
					verdict := "fits"
					if r.Reason != "" {
						verdict = r.Reason
					}
					fmt.Fprintf(&b, " %s: %s;", r.Node, verdict)
				}
			case event.KindScore:
				rows := e.Score.Rows()
				slices.SortStableFunc(rows, func(a, b event.NodeScore) int { return cmp.Compare(b.Total, a.Total) })
				fmt.Fprintf(&b, "\n    last cycle's scores:")
				for _, r := range rows {
					var parts []string
					for j, pl := range e.Score.Plugins {
						if j < len(r.Weighted) && r.Weighted[j] != 0 {
							parts = append(parts, fmt.Sprintf("%s=%d", pl.Name, r.Weighted[j]))
						}
					}
					fmt.Fprintf(&b, "\n      %s %d (%s)", r.Node, r.Total, strings.Join(parts, " "))
				}
			}
		}
	}
	p, err := d.up.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintf(&b, "\n  kube-scheduler's cluster: %v", err)
		return b.String()
	}
	fmt.Fprintf(&b, "\n  kube-scheduler: node=%q nominated=%q %s", p.Spec.NodeName, p.Status.NominatedNodeName, scheduledMessage(p))
	if qpi, ok := d.up.queue.GetPod(name, "default", nil); ok {
		fmt.Fprintf(&b, "; in its queue: attempts %d, plugins %v, pending plugins %v, gated by %q",
			qpi.Attempts, sets.List(qpi.UnschedulablePlugins), sets.List(qpi.PendingPlugins), qpi.GatingPlugin)
	}
	return b.String()
}

func scheduledMessage(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return fmt.Sprintf("PodScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "no PodScheduled condition"
}

func describe(o outcome, exists bool) string {
	switch {
	case !exists:
		return "deleted"
	case o.pending():
		return fmt.Sprintf("pending (plugins %v, gated by %q, %d attempts)", o.Plugins, o.Gating, o.Attempts)
	}
	return "on " + o.Node
}

func fingerprint(m map[string]outcome) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(m)) {
		o := m[name]
		fmt.Fprintf(&b, "%s=%s/%v/%s/%d;", name, o.Node, o.Plugins, o.Gating, o.Attempts)
	}
	return b.String()
}
