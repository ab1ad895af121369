package minisched_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// signable is the default profile but for PodTopologySpread's default
// constraints, which refuse to sign every pod: its pods can share a batch.
const signable = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
`

// TestOpportunisticBatching follows pods through upstream's batching: each
// cycle signs its pod (Sign), a placed pod leaves its other nodes to the
// next pod of its signature, which is offered the best of them (the hint)
// after the last chosen node is checked again and rescored; a pod a plugin
// will not sign ends the batch. The pods are held while they are made, so
// that they are popped one right after the other, as a batch needs.
func TestOpportunisticBatching(t *testing.T) {
	h := start(t, signable)
	h.addNodes(node("n4", "4"), node("n5", "5"), node("n6", "6"), node("n7", "7"))
	h.svc.Pause()
	spread := func(p *v1.Pod) {
		p.Labels = map[string]string{"app": "spread"}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}},
		}}
	}
	names := []string{"same-1", "same-2", "same-3", "spread", "same-4", "same-5"}
	for _, name := range names {
		var mutators []func(*v1.Pod)
		if name == "spread" {
			mutators = append(mutators, spread)
		}
		createPod(t, client, pod(name, "1", mutators...))
		h.await(name, name+" in the queue", ofKind(event.KindQueue))
	}
	before := batchAttempts(t)
	h.svc.Resume()
	nodes := map[string]string{}
	for _, name := range names {
		nodes[name] = waitBound(t, client, name)
	}
	end := func(name string) *event.CycleEnd {
		return h.await(name, name+"'s cycle", ofKind(event.KindCycleEnd)).CycleEnd
	}
	passes := func(name string) []string {
		var out []string
		for _, e := range h.log.find(name, func(e event.Event) bool { return e.Filter != nil || e.Score != nil }) {
			switch {
			case e.Filter != nil && e.Filter.Batch != "":
				out = append(out, "filter:"+e.Filter.Batch)
			case e.Filter != nil:
				out = append(out, "filter")
			case e.Score.Batch != "":
				out = append(out, "score:"+e.Score.Batch)
			default:
				out = append(out, "score")
			}
		}
		return out
	}

	// The first pod finds no batch and leaves its three other nodes.
	if b := end("same-1").Batch; b == nil || !b.Signed || b.NoHint != "none" || b.Kept != 3 || b.Used {
		t.Errorf("same-1's batch = %+v, want signed, no hint (none), 3 nodes kept", b)
	}
	// The next ones are offered a node from that batch: the last chosen
	// node is checked and rescored, the hint checked by Filter, and nothing
	// else runs. A used hint leaves the batch as it is.
	for _, name := range []string{"same-2", "same-3"} {
		b := end(name).Batch
		if b == nil || !b.Used || b.Hint != nodes[name] || b.From == nil || b.From.Name != "same-1" {
			t.Errorf("%s's batch = %+v, want the hint %s used, from same-1's batch", name, b, nodes[name])
			continue
		}
		if got, want := strings.Join(passes(name), " "), "filter:recheck score:rescore filter:hint"; got != want {
			t.Errorf("%s's Filter and Score runs = %q, want %q", name, got, want)
		}
	}
	// PodTopologySpread will not sign a pod with constraints: the Sign
	// point names it, the batch is not used, and the cycle leaves none.
	sign := h.await("spread", "spread's Sign", func(e event.Event) bool { return e.Point != nil && e.Point.Point == "Sign" }).Point
	if last := sign.Results[len(sign.Results)-1]; last.Plugin != "PodTopologySpread" || last.Code != int(fwk.Unschedulable) {
		t.Errorf("spread's Sign ends with %+v, want PodTopologySpread refusing", last)
	}
	if b := end("spread").Batch; b == nil || b.Signed || b.NoHint != "pod_incompatible" || b.Dropped != "pod_not_batchable" {
		t.Errorf("spread's batch = %+v, want unsigned, no hint (pod_incompatible), dropped (pod_not_batchable)", b)
	}
	if b := end("same-4").Batch; b == nil || b.NoHint != "none" || b.Kept == 0 {
		t.Errorf("same-4's batch = %+v, want no hint (none) and nodes kept", b)
	}
	if b := end("same-5").Batch; b == nil || !b.Used || b.From == nil || b.From.Name != "same-4" {
		t.Errorf("same-5's batch = %+v, want the hint used, from same-4", b)
	}
	// kube-scheduler's own metric counts them.
	if got := batchAttempts(t) - before; got != 3 {
		t.Errorf("scheduler_batch_attempts_total{result=hint_used} rose by %v, want 3", got)
	}
}

// batchAttempts reads upstream's scheduler_batch_attempts_total of the
// default profile for hints used.
func batchAttempts(t *testing.T) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "scheduler_batch_attempts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["profile"] == "default-scheduler" && labels["result"] == "hint_used" {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}
