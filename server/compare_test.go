package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"minisched/compare"
	"minisched/event"
	"minisched/scenario"
)

// compareNow runs POST /compare?wait=true and returns the comparison.
func compareNow(t *testing.T, body string) compare.Comparison {
	t.Helper()
	var c compare.Comparison
	if code := api(t, "POST", "/api/v1/compare?wait=true", "application/json", []byte(body), &c); code != http.StatusOK {
		t.Fatalf("POST /compare: %d %+v", code, c)
	}
	if c.State != "done" || c.Report == nil {
		t.Fatalf("the comparison ended %s: %s", c.State, c.Error)
	}
	return c
}

// fitScore is NodeResourcesFit's weighted score of node in one side of a
// pod's comparison.
func fitScore(t *testing.T, side map[string]any, node string) float64 {
	t.Helper()
	scores, _ := side["scores"].(map[string]any)
	plugins, _ := scores[node].(map[string]any)
	v, ok := plugins["NodeResourcesFit"].(float64)
	if !ok {
		t.Fatalf("no NodeResourcesFit score for %s in %v", node, side)
	}
	return v
}

// TestCompareScenario runs lesson 17 under the running configuration
// (LeastAllocated) and under MostAllocated: web moves from big to small,
// NodeResourcesFit's scores say why, and the lesson's expectation written
// for A is a note under B. Two identical configurations place every pod
// alike.
func TestCompareScenario(t *testing.T) {
	reset(t)
	pack, _ := json.Marshal(packConfig)
	c := compareNow(t, fmt.Sprintf(`{"bundled":"17-spread-or-pack","a":{"name":"spread"},"b":{"name":"pack","config":%s}}`, pack))
	r := c.Report
	if c.Kind != "scenario" || c.Scenario != "17-spread-or-pack" || r.A != "spread" || r.B != "pack" {
		t.Errorf("comparison %+v", c)
	}
	if r.Moved != 1 {
		t.Errorf("%d pods moved, want web alone: %+v", r.Moved, r.Pods)
	}
	for _, p := range r.Pods {
		switch p.Pod {
		case "default/web":
			if p.NodeA != "big" || p.NodeB != "small" {
				t.Errorf("web: %s under A, %s under B; want big, then small", p.NodeA, p.NodeB)
			}
		case "default/pinned":
			if !p.Same || p.NodeA != "small" {
				t.Errorf("pinned: %+v, want small under both", p)
			}
		}
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "under pack") {
		t.Errorf("notes %q: want one, for pack's failed expectation", c.Notes)
	}
	// Its runs say they are parts of it: pack's failure is no lesson's.
	var listing struct{ Runs []scenario.Run }
	api(t, "GET", "/api/v1/scenarios", "", nil, &listing)
	if len(listing.Runs) < 2 || listing.Runs[0].PartOf != "comparison" || listing.Runs[1].PartOf != "comparison" {
		t.Errorf("the comparison's runs: %+v, want both part of the comparison", listing.Runs[:min(2, len(listing.Runs))])
	}

	var web struct{ A, B map[string]any }
	if code := api(t, "GET", "/api/v1/compare/pods/default/web", "", nil, &web); code != http.StatusOK {
		t.Fatalf("GET /compare/pods/default/web: %d %v", code, web)
	}
	if fitScore(t, web.A, "big") <= fitScore(t, web.A, "small") {
		t.Errorf("under A NodeResourcesFit should favour big: %v", web.A["scores"])
	}
	if fitScore(t, web.B, "small") <= fitScore(t, web.B, "big") {
		t.Errorf("under B NodeResourcesFit should favour small: %v", web.B["scores"])
	}
	var e map[string]any
	if code := api(t, "GET", "/api/v1/compare/pods/default/nobody", "", nil, &e); code != http.StatusNotFound {
		t.Errorf("a pod of neither run: %d %v, want 404", code, e)
	}

	same := compareNow(t, `{"bundled":"17-spread-or-pack"}`)
	if same.Report.Differ() || same.Report.Moved != 0 {
		t.Errorf("one configuration twice differs: %+v", same.Report)
	}
}

// TestCompareConfigs compares two configurations on this cluster's own
// workload: under MostAllocated every pod packs onto the small node, under
// the running LeastAllocated every pod goes to the big one; afterwards the
// scheduler runs the configuration it had.
func TestCompareConfigs(t *testing.T) {
	reset(t)
	packable(t, "cc")
	var before map[string]any
	api(t, "GET", "/api/v1/scheduler/config", "", nil, &before)

	// B is YAML text, as the dashboard sends what a person typed.
	pack, _ := json.Marshal(packConfig)
	c := compareNow(t, fmt.Sprintf(`{"b":{"name":"pack","config":%s}}`, pack))
	if c.Kind != "configs" || c.Report.Moved != 3 {
		t.Fatalf("comparison %+v, report %+v: want all three moved", c, c.Report)
	}
	for _, p := range c.Report.Pods {
		if p.NodeA != "cc-big" || p.NodeB != "cc-small" {
			t.Errorf("%s: %s under A, %s under B; want cc-big, then cc-small", p.Pod, p.NodeA, p.NodeB)
		}
		if len(p.Plugins) == 0 || p.Plugins[0].Plugin != "NodeResourcesFit" {
			t.Errorf("%s: the plugins that made the difference: %+v", p.Pod, p.Plugins)
		}
	}
	var after map[string]any
	api(t, "GET", "/api/v1/scheduler/config", "", nil, &after)
	if b, _ := json.Marshal(before); string(b) != mustJSON(t, after) {
		t.Errorf("the configuration after the comparison differs from before:\n%s\n%s", b, mustJSON(t, after))
	}
	var last compare.Comparison
	if code := api(t, "GET", "/api/v1/compare", "", nil, &last); code != http.StatusOK || last.ID != c.ID || last.State != "done" {
		t.Errorf("GET /compare: %d %+v, want comparison %d", code, last, c.ID)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCompareRefusesBadInput: each refusal is a 4xx in JSON, and nothing
// starts: the last comparison stays the one it was.
func TestCompareRefusesBadInput(t *testing.T) {
	var before compare.Comparison
	api(t, "GET", "/api/v1/compare", "", nil, &before)
	for _, tc := range []struct {
		name, contentType, body string
		code                    int
		says                    string
	}{
		{"not JSON or YAML", "application/json", `{"a":`, http.StatusBadRequest, "not YAML or JSON"},
		{"an unknown field", "application/json", `{"c":{}}`, http.StatusBadRequest, "unknown field"},
		{"a wrong content type", "text/plain", `{}`, http.StatusUnsupportedMediaType, "application/json"},
		{"both bundled and scenario", "application/json", `{"bundled":"01-random","scenario":{"kind":"Scenario"}}`, http.StatusBadRequest, "not both"},
		{"an unknown bundled scenario", "application/json", `{"bundled":"no-such"}`, http.StatusNotFound, "no bundled scenario"},
		{"an invalid configuration", "application/json", `{"a":{"config":{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"default-scheduler","plugins":{"score":{"enabled":[{"name":"NoSuchPlugin"}]}}}]}}}`, http.StatusUnprocessableEntity, "configuration A"},
		{"a configuration that is not YAML", "application/json", `{"b":{"config":"a: [b"}}`, http.StatusBadRequest, "configuration B"},
		{"an invalid scenario", "application/yaml", "scenario: {kind: Nope}\n", http.StatusBadRequest, "invalid scenario"},
		{"a gate of the whole run", "application/json", `{"b":{"featureGates":"GenericWorkload=true"}}`, http.StatusUnprocessableEntity, "only for the whole run"},
		{"a gate that is not Gate=bool", "application/json", `{"a":{"featureGates":"OpportunisticBatching"}}`, http.StatusUnprocessableEntity, "configuration A"},
		{"gates for a reschedule", "application/json", `{"reschedule":true,"a":{"featureGates":"OpportunisticBatching=false"}}`, http.StatusBadRequest, "no feature gates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e map[string]any
			code := api(t, "POST", "/api/v1/compare", tc.contentType, []byte(tc.body), &e)
			if code != tc.code || !strings.Contains(fmt.Sprint(e["error"]), tc.says) {
				t.Errorf("%d %v, want %d saying %q", code, e, tc.code, tc.says)
			}
		})
	}
	var after compare.Comparison
	api(t, "GET", "/api/v1/compare", "", nil, &after)
	if after.ID != before.ID {
		t.Errorf("a refused request started comparison %d", after.ID)
	}
}

// TestCompareFeatureGates: A with OpportunisticBatching=false against B
// with it on, on this cluster's workload: the cycles of A's run carry no
// batching record and B's do, each side is named for its gates, and the
// scheduler's tuning is as before afterwards.
func TestCompareFeatureGates(t *testing.T) {
	reset(t)
	packable(t, "fg")
	before := inst.Scheduler.Tuning()
	var hist struct{ LastSeq uint64 }
	api(t, "GET", "/api/v1/history", "", nil, &hist)
	c := compareNow(t, `{"a":{"featureGates":"OpportunisticBatching=false"},"b":{"featureGates":" OpportunisticBatching=true"}}`)
	if c.A != "A (OpportunisticBatching=false)" || c.B != "B (OpportunisticBatching=true)" {
		t.Errorf("the sides are named %q and %q", c.A, c.B)
	}
	if c.FeatureGates != [2]string{"OpportunisticBatching=false", "OpportunisticBatching=true"} {
		t.Errorf("the comparison's gates %q", c.FeatureGates)
	}
	var page struct{ Events []event.Event }
	if code := api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&limit=10000", hist.LastSeq), "", nil, &page); code != http.StatusOK {
		t.Fatalf("events: %d", code)
	}
	side := ""
	cycles, batched := map[string]int{}, map[string]int{}
	for _, e := range page.Events {
		switch {
		case e.Kind == event.KindScheduler && strings.Contains(e.Scheduler.Message, "own feature gates OpportunisticBatching=false"):
			side = "A"
		case e.Kind == event.KindScheduler && strings.Contains(e.Scheduler.Message, "own feature gates OpportunisticBatching=true"):
			side = "B"
		case e.Kind == event.KindScheduler && strings.HasPrefix(e.Scheduler.Message, "started"):
			side = "" // the configuration put back
		case e.Kind == event.KindCycleEnd && side != "":
			cycles[side]++
			if e.CycleEnd.Batch != nil {
				batched[side]++
			}
		}
	}
	if cycles["A"] == 0 || cycles["B"] == 0 {
		t.Fatalf("cycles seen under A %d, under B %d: want some under each", cycles["A"], cycles["B"])
	}
	if batched["A"] != 0 || batched["B"] != cycles["B"] {
		t.Errorf("cycles with a batching record: %d of %d under A (want none), %d of %d under B (want all)",
			batched["A"], cycles["A"], batched["B"], cycles["B"])
	}
	if after := inst.Scheduler.Tuning(); after != before {
		t.Errorf("the tuning after the comparison %+v, before %+v", after, before)
	}
}
