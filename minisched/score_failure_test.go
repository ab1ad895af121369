package minisched_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// failingScorer fails Score on one node, or NormalizeScore, as its pod's
// label fail=<score|normalize> says.
type failingScorer struct{}

func (failingScorer) Name() string { return "FailingScorer" }

func (failingScorer) Score(_ context.Context, _ fwk.CycleState, p *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	if p.Labels["fail"] == "score" && ni.Node().Name == "node-2" {
		return 0, fwk.AsStatus(errors.New("score boom"))
	}
	return 10, nil
}

func (f failingScorer) ScoreExtensions() fwk.ScoreExtensions { return f }

func (failingScorer) NormalizeScore(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ fwk.NodeScoreList) *fwk.Status {
	if p.Labels["fail"] == "normalize" {
		return fwk.AsStatus(errors.New("normalize boom"))
	}
	return nil
}

// A Score run that fails still shows what ran: the plugin that failed
// carries its code and reason, and normalized scores only when Score itself
// did not fail.
func TestFailedScoreShowsWhatRan(t *testing.T) {
	tests := []struct {
		fail       string
		reason     string
		normalized bool
	}{
		{fail: "score", reason: "score boom", normalized: false},
		{fail: "normalize", reason: "normalize boom", normalized: true},
	}
	for _, tt := range tests {
		t.Run(tt.fail, func(t *testing.T) {
			h := start(t, multiPoint("FailingScorer"), withPlugin(failingScorer{}))
			h.addNodes(node("node-1", "4"), node("node-2", "4"), node("node-3", "4"))
			name := "fail-" + tt.fail
			createPod(t, client, pod(name, "100m", func(p *v1.Pod) { p.Labels = map[string]string{"fail": tt.fail} }))

			score := h.await(name, name+"'s score", ofKind(event.KindScore)).Score
			at := -1
			for j, p := range score.Plugins {
				if p.Name == "FailingScorer" {
					at = j
				}
			}
			if at < 0 || score.Plugins[at].Code != int(fwk.Error) || !strings.Contains(score.Plugins[at].Reason, tt.reason) {
				t.Fatalf("score plugins %+v, want FailingScorer with an error saying %q", score.Plugins, tt.reason)
			}
			if got := score.Normalized != nil; got != tt.normalized {
				t.Errorf("normalized scores shown: %v, want %v", got, tt.normalized)
			}
			for i, row := range score.Rows() {
				if score.Reached(i) && len(row.Raw) != len(score.Plugins) {
					t.Errorf("row %s: %d raw scores for %d plugins", row.Node, len(row.Raw), len(score.Plugins))
				}
			}
			end := h.await(name, name+"'s cycle end", ofKind(event.KindCycleEnd)).CycleEnd
			if end.Result != event.ResultError || !strings.Contains(end.Message, tt.reason) {
				t.Errorf("cycle end %+v, want an error saying %q", end, tt.reason)
			}
		})
	}
}
