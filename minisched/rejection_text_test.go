package minisched_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
)

// gatekeeper rejects the pods labelled reject=<point> at that point.
type gatekeeper struct{}

func (gatekeeper) Name() string { return "Gatekeeper" }

func (gatekeeper) verdict(p *v1.Pod, point string) *fwk.Status {
	if p.Labels["reject"] != point {
		return nil
	}
	return fwk.NewStatus(fwk.Unschedulable, "held back at "+point)
}

func (g gatekeeper) Reserve(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ string) *fwk.Status {
	return g.verdict(p, "Reserve")
}

func (gatekeeper) Unreserve(context.Context, fwk.CycleState, *v1.Pod, string) {}

func (g gatekeeper) Permit(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ string) (*fwk.Status, time.Duration) {
	return g.verdict(p, "Permit"), 0
}

// TestRejectionOnTheChosenNodeReadsAsUpstream: a pod rejected at Reserve or
// Permit gets the Event and the condition kube-scheduler writes, a fit
// error for the one chosen node (schedule_one.go), not the plugin's bare
// message; and it waits for that plugin's events.
func TestRejectionOnTheChosenNodeReadsAsUpstream(t *testing.T) {
	for _, point := range []string{"Reserve", "Permit"} {
		t.Run(point, func(t *testing.T) {
			h := start(t, multiPoint("Gatekeeper"), withPlugin(gatekeeper{}))
			h.addNodes(node("node-1", "4"), node("node-2", "4"))
			name := "held-" + strings.ToLower(point)
			createPod(t, client, pod(name, "100m", func(p *v1.Pod) { p.Labels = map[string]string{"reject": point} }))
			want := fmt.Sprintf("0/1 nodes are available: 1 held back at %s.", point)

			end := h.waitUnschedulable(name)
			if end.Message != want || !slices.Equal(end.Plugins, []string{"Gatekeeper"}) {
				t.Errorf("cycle end: message %q plugins %v; want %q and [Gatekeeper]", end.Message, end.Plugins, want)
			}
			h.waitParked(name)
			waitFor(t, 30*time.Second, "the FailedScheduling Event", func() bool {
				events, err := client.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range events.Items {
					if e.Regarding.Name == name && e.Reason == "FailedScheduling" {
						if e.Note != want {
							t.Fatalf("FailedScheduling note %q, want %q", e.Note, want)
						}
						return true
					}
				}
				return false
			})
			waitFor(t, 30*time.Second, "the PodScheduled condition", func() bool {
				p, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range p.Status.Conditions {
					if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
						if c.Reason != v1.PodReasonUnschedulable || c.Message != want {
							t.Fatalf("condition %s %q, want %s %q", c.Reason, c.Message, v1.PodReasonUnschedulable, want)
						}
						return true
					}
				}
				return false
			})
		})
	}
}

// TestNegativeWeightTurnsAPreferenceAround: minisched takes a negative Score
// weight where upstream's framework does. NodeResourcesFit (LeastAllocated)
// prefers the node with more room; weighted -1 it prefers the one with less,
// and its weighted scores and the totals are negative. Upstream's framework
// refuses a negative weight followed by a positive one in its list of Score
// plugins (its overflow check wraps around), and so does minisched, in
// upstream's words.
func TestNegativeWeightTurnsAPreferenceAround(t *testing.T) {
	const cfg = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: '*'
      enabled:
      - name: PrioritySort
      - name: DefaultBinder
      - name: NodeResourcesFit
        weight: -1
`
	h := start(t, cfg)
	h.addNodes(node("big", "8"), node("small", "2"))
	createPod(t, client, pod("contrary", "500m"))
	if got := waitBound(t, client, "contrary"); got != "small" {
		t.Errorf("bound to %s, want small: a weight of -1 prefers the node with less room", got)
	}
	score := h.await("contrary", "the score event", ofKind(event.KindScore)).Score
	if len(score.Plugins) != 1 || score.Plugins[0].Name != "NodeResourcesFit" || score.Plugins[0].Weight != -1 {
		t.Fatalf("score plugins %+v, want NodeResourcesFit weighted -1", score.Plugins)
	}
	for _, row := range score.Rows() {
		if row.Total >= 0 || row.Weighted[0] != -row.Normalized[0] {
			t.Errorf("row %+v: want a negative total, the normalized score times -1", row)
		}
	}

	followed := strings.Replace(cfg, "        weight: -1\n", "        weight: -1\n      - name: ImageLocality\n", 1)
	svc := minisched.NewService(minisched.ServiceOptions{Client: client, RESTConfig: cp.RESTConfig()})
	loaded, err := schedconfig.Load([]byte(followed), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.CheckConfig(loaded); err == nil || !strings.Contains(err.Error(), "total score of Score plugins could overflow") {
		t.Errorf("a negative weight followed by a positive one: %v, want upstream's overflow refusal", err)
	}
}
