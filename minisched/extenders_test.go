package minisched_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/event"
	"minisched/examples/extender"
)

// extenderConfig calls the example extender at url with every verb but
// bind (and bind too when bind is set).
func extenderConfig(url string, bind bool) string {
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: %s
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 5
  preemptVerb: preempt
`, url)
	if bind {
		cfg += "  bindVerb: bind\n"
	}
	return cfg
}

func labelled(kv ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func nodeLabelled(kv ...string) func(*v1.Node) {
	return func(n *v1.Node) {
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

// TestExtenders runs upstream's HTTPExtender against a real extender (the
// example's) where kube-scheduler calls it: filter after the plugins, its
// scores beside theirs with its weight, bind instead of the Bind plugins;
// every call is reported, and a pod it turns away everywhere waits with
// "Extender" among its rejectors, as upstream's.
func TestExtenders(t *testing.T) {
	ext := &extender.Server{Client: client}
	srv := httptest.NewServer(ext)
	defer srv.Close()
	h := start(t, extenderConfig(srv.URL, true))
	h.addNodes(
		node("closed", "4", nodeLabelled(extender.ClosedLabel, "true")),
		node("east", "4", nodeLabelled(extender.ZoneLabel, "east")),
		node("west", "4", nodeLabelled(extender.ZoneLabel, "west")),
	)

	t.Run("filter, prioritize and bind", func(t *testing.T) {
		createPod(t, client, pod("westward", "100m", labelled(extender.PreferLabel, "west")))
		if got := waitBound(t, client, "westward"); got != "west" {
			t.Errorf("bound to %s, want west: the extender prefers it", got)
		}
		// The binding is visible before the scheduler reports the call
		// that made it.
		h.await("westward", "the bind call", func(e event.Event) bool {
			return e.Kind == event.KindExtender && e.Extender.Verb == "bind"
		})
		calls := map[string]*event.ExtenderCall{}
		for _, e := range h.log.find("westward", ofKind(event.KindExtender)) {
			calls[e.Extender.Verb] = e.Extender
		}
		f := calls["filter"]
		if f == nil || f.Nodes != 3 || f.Passed != 2 || f.UnresolvableCount != 1 || !strings.Contains(f.Unresolvable["closed"], "closed") || f.Extender != srv.URL {
			t.Errorf("the filter call: %+v; want 3 nodes in, 2 kept, closed turned away for good", f)
		}
		if p := calls["prioritize"]; p == nil || p.Weight != 5 || p.Passed != 1 {
			t.Errorf("the prioritize call: %+v; want weight 5 and one node scored", p)
		}
		if b := calls["bind"]; b == nil || b.Node != "west" || b.Error != "" {
			t.Errorf("the bind call: %+v; want west", b)
		}
		score := h.await("westward", "the score event", ofKind(event.KindScore)).Score
		col := slices.IndexFunc(score.Plugins, func(p event.ScorePlugin) bool { return p.Extender })
		if col < 0 || score.Plugins[col].Name != srv.URL || score.Plugins[col].Weight != 5 {
			t.Fatalf("score columns %+v: want the extender's, weight 5", score.Plugins)
		}
		for _, row := range score.Rows() {
			want := int64(0)
			if row.Node == "west" {
				want = 10 * 10 * 5 // upstream's score * (MaxNodeScore / MaxExtenderPriority) * weight
			}
			if row.Weighted[col] != want {
				t.Errorf("%s: the extender's weighted score %d, want %d", row.Node, row.Weighted[col], want)
			}
		}
		if points := h.log.find("westward", func(e event.Event) bool { return e.Kind == event.KindPoint && e.Point.Point == "Bind" }); len(points) != 0 {
			t.Errorf("the Bind plugins ran too: %+v", points)
		}
	})

	t.Run("turned away everywhere", func(t *testing.T) {
		createPod(t, client, pod("nowhere", "100m", labelled(extender.AvoidLabel, "east"), func(p *v1.Pod) {
			p.Spec.NodeSelector = map[string]string{extender.ZoneLabel: "east"}
		}))
		end := h.waitUnschedulable("nowhere")
		if !slices.Contains(end.Plugins, "Extender") || !strings.Contains(end.Message, "keeps the pod out of zone east") {
			t.Errorf("cycle end: plugins %v message %q; want Extender and the extender's reason", end.Plugins, end.Message)
		}
		h.waitParked("nowhere")
	})
	t.Run("preemption asks it (ProcessPreemption)", func(t *testing.T) {
		class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "extender-high"}, Value: 1000}
		if _, err := client.SchedulingV1().PriorityClasses().Create(t.Context(), class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		onWest := func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{extender.ZoneLabel: "west"} }
		createPod(t, client, diffPod("squatter", "3800m", onWest))
		if got := waitBound(t, client, "squatter"); got != "west" {
			t.Fatalf("squatter on %s, want west", got)
		}
		createPod(t, client, diffPod("urgent", "1", onWest, func(p *v1.Pod) { p.Spec.PriorityClassName = "extender-high" }))
		preempt := h.await("urgent", "the extender's preempt call", func(e event.Event) bool {
			return e.Kind == event.KindExtender && e.Extender.Verb == "preempt"
		}).Extender
		if preempt.Nodes != 1 || preempt.Passed != 1 || preempt.Error != "" {
			t.Errorf("the preempt call: %+v; want west in and back", preempt)
		}
		if got := waitBound(t, client, "urgent"); got != "west" {
			t.Errorf("urgent on %s, want west, in squatter's place", got)
		}
	})
	if n := ext.Calls()["filter"]; n < 2 {
		t.Errorf("the extender's filter was called %d times", n)
	}
}
