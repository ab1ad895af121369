package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"minisched/app"
	"minisched/compare"
)

func runDiff(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCommand(t, append([]string{"scenario", "diff"}, args...)...)
}

// runCommand runs minisched with args and returns its exit status and output.
func runCommand(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	err := app.Run(context.Background(), args, &out, &errs)
	var exit *app.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.Code
	default:
		t.Fatalf("minisched %v: %v (stderr: %s)", args, err, errs.String())
	}
	return code, out.String(), errs.String()
}

// TestScenarioDiff runs a scenario under LeastAllocated and MostAllocated,
// each on its own embedded control plane: the pod that is free to choose
// goes to the big node under one and to the small node under the other,
// and NodeResourcesFit's weighted score is what changed its mind.
func TestScenarioDiff(t *testing.T) {
	code, out, errs := runDiff(t, "--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml", "--output", "json", "../examples/scenarios/17-spread-or-pack.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (they differ); stderr: %s", code, errs)
	}
	var r compare.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, out)
	}
	pods := map[string]compare.PodDiff{}
	for _, p := range r.Pods {
		pods[p.Pod] = p
	}
	if p := pods["default/pinned"]; !p.Same || p.NodeA != "small" {
		t.Errorf("pinned: %+v, want small under both", p)
	}
	web := pods["default/web"]
	if web.NodeA != "big" || web.NodeB != "small" || r.Moved != 1 {
		t.Fatalf("web: %+v (moved %d), want big under A (spread) and small under B (pack)", web, r.Moved)
	}
	if len(web.Plugins) == 0 || web.Plugins[0].Plugin != "NodeResourcesFit" || web.Plugins[0].UnderA == nil || web.Plugins[0].UnderB == nil ||
		*web.Plugins[0].UnderA <= 0 || *web.Plugins[0].UnderB >= 0 {
		t.Errorf("web's plugins %+v: want NodeResourcesFit first, for big under A and for small under B", web.Plugins)
	}
	if n := r.Nodes; len(n) != 2 || n[0].Node != "big" || n[0].A.Pods != 1 || n[0].B.Pods != 0 || n[1].B.Pods != 2 || n[1].B.CPU != 50 {
		t.Errorf("nodes %+v: want big with web under A only, small with both pods (50%% cpu) under B", n)
	}

	code, out, errs = runDiff(t, "--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/least-allocated.yaml", "../examples/scenarios/17-spread-or-pack.yaml")
	if code != 0 || !strings.Contains(out, "pods placed differently: 0 of 2") || !strings.Contains(out, "place every pod alike") {
		t.Errorf("the same configuration twice: exit %d, want 0; stdout:\n%s\nstderr: %s", code, out, errs)
	}
	// A gate the scheduler alone reads, off for A and on for B: these pods
	// are not signed (PodTopologySpread's default constraints), so they
	// land alike.
	code, out, errs = runDiff(t, "--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/least-allocated.yaml",
		"--feature-gates", "OpportunisticBatching=false", "--feature-gates", "OpportunisticBatching=true", "../examples/scenarios/17-spread-or-pack.yaml")
	if code != 0 || !strings.Contains(out, "place every pod alike") {
		t.Errorf("batching off against on: exit %d, want 0; stdout:\n%s\nstderr: %s", code, out, errs)
	}
}

// TestScenarioDiffWeights: a weight change alone moves a pod. web prefers
// the small node a little (NodeAffinity); with NodeResourcesFit weighing 20
// the big node's room wins, with a weight of 1 the preference does.
func TestScenarioDiffWeights(t *testing.T) {
	code, out, errs := runDiff(t, "--config", "testdata/fit-heavy.yaml", "--config", "testdata/fit-light.yaml", "--output", "json", "testdata/prefer-small.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, errs)
	}
	var r compare.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Pods) != 1 || r.Pods[0].NodeA != "big" || r.Pods[0].NodeB != "small" {
		t.Fatalf("pods %+v, want web on big under the heavy weight and on small under the light one", r.Pods)
	}
	margins := map[string]compare.PluginMargin{}
	for _, m := range r.Pods[0].Plugins {
		margins[m.Plugin] = m
	}
	fit, affinity := margins["NodeResourcesFit"], margins["NodeAffinity"]
	if fit.UnderA == nil || fit.UnderB == nil || *fit.UnderA != 20**fit.UnderB || affinity.UnderA == nil || *affinity.UnderA != *affinity.UnderB {
		t.Errorf("margins %+v: want NodeResourcesFit's twenty times as large under A, NodeAffinity's the same under both", r.Pods[0].Plugins)
	}
}

// TestScenarioDiffRefuses: bad input exits 2, with a message, before any
// control plane starts.
func TestScenarioDiffRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one configuration", []string{"--config", "../examples/configs/least-allocated.yaml", "../examples/scenarios/17-spread-or-pack.yaml"}, "exactly two --config files"},
		{"no scenario", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml"}, "name one scenario file"},
		{"a file and a bundled one", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml", "--bundled", "03-score", "../examples/scenarios/17-spread-or-pack.yaml"}, "name one scenario file"},
		{"no such bundled scenario", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml", "--bundled", "99-nothing"}, `no such bundled scenario`},
		{"a missing configuration", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "testdata/nothing.yaml", "../examples/scenarios/17-spread-or-pack.yaml"}, "reading configuration testdata/nothing.yaml"},
		{"a configuration that is not one", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/scenarios/17-spread-or-pack.yaml", "../examples/scenarios/17-spread-or-pack.yaml"}, "configuration ../examples/scenarios/17-spread-or-pack.yaml"},
		{"a scenario that is not one", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml", "../examples/configs/most-allocated.yaml"}, "../examples/configs/most-allocated.yaml"},
		{"one --feature-gates", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml", "--feature-gates", "OpportunisticBatching=false", "../examples/scenarios/17-spread-or-pack.yaml"}, "give --feature-gates twice"},
		{"a gate of the whole run", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml", "--feature-gates", "", "--feature-gates", "GenericWorkload=true", "../examples/scenarios/17-spread-or-pack.yaml"}, "--feature-gates for B"},
		{"an unknown output", []string{"--config", "../examples/configs/least-allocated.yaml", "--config", "../examples/configs/most-allocated.yaml", "--output", "xml", "../examples/scenarios/17-spread-or-pack.yaml"}, `--output "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runDiff(t, tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) || out != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and a message with %q", code, errs, out, tt.want)
			}
		})
	}
}
