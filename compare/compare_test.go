package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"minisched/event"
)

func i64(v int64) *int64 { return &v }

func TestCompare(t *testing.T) {
	scores := func(n1fit, n1spread, n2fit, n2spread int64) map[string]map[string]int64 {
		return map[string]map[string]int64{
			"node-1": {"NodeResourcesFit": n1fit, "PodTopologySpread": n1spread, "ImageLocality": 0},
			"node-2": {"NodeResourcesFit": n2fit, "PodTopologySpread": n2spread, "ImageLocality": 0},
		}
	}
	a := Side{Config: "a.yaml", Pods: map[string]Pod{
		"default/same":  {Node: "node-1"},
		"default/moved": {Node: "node-1", Scores: scores(80, 10, 40, 30)},
		"default/lost":  {Reason: "0/2 nodes are available: 2 Insufficient cpu."},
		"default/found": {Node: "node-2"},
		"default/narrow": {Node: "node-1", Scores: map[string]map[string]int64{"node-1": {"NodeResourcesFit": 50}},
			Filtered: map[string]string{"node-2": "TaintToleration: untolerated taint"}},
	}, Nodes: map[string]Usage{"node-1": {CPU: 50, Memory: 20, Pods: 3}, "node-2": {CPU: 10, Memory: 5, Pods: 1}}}
	b := Side{Config: "b.yaml", Pods: map[string]Pod{
		"default/same":   {Node: "node-1"},
		"default/moved":  {Node: "node-2", Scores: scores(20, 10, 60, 30)},
		"default/lost":   {Node: "node-2"},
		"default/found":  {Reason: "preempted"},
		"default/narrow": {Node: "node-2", Scores: map[string]map[string]int64{"node-2": {"NodeResourcesFit": 70}}},
	}, Nodes: map[string]Usage{"node-1": {CPU: 30, Pods: 2}, "node-2": {CPU: 30, Pods: 3}}}

	r := Compare(a, b)
	if r.Moved != 2 || !r.Differ() {
		t.Errorf("moved %d, differ %v; want 2, true", r.Moved, r.Differ())
	}
	if strings.Join(r.UnschedulableOnlyA, ",") != "default/lost" || strings.Join(r.UnschedulableOnlyB, ",") != "default/found" {
		t.Errorf("unschedulable only under A %v, only under B %v", r.UnschedulableOnlyA, r.UnschedulableOnlyB)
	}
	byPod := map[string]PodDiff{}
	for _, p := range r.Pods {
		byPod[p.Pod] = p
	}
	tests := []struct {
		name    string
		pod     string
		plugins []PluginMargin
		notes   []string
	}{
		{"the plugin that changed its mind comes first; one that scored alike is left out", "default/moved", []PluginMargin{
			{Plugin: "NodeResourcesFit", UnderA: i64(40), UnderB: i64(-40)},
			{Plugin: "PodTopologySpread", UnderA: i64(-20), UnderB: i64(-20)},
		}, nil},
		{"a node Filter turned away under A and one not scored under B", "default/narrow", nil, []string{
			"under A, node-2 failed Filter: TaintToleration: untolerated taint",
			"under B, node-1 was not scored (Filter stops once enough nodes fit, or only one did)",
		}},
		{"unschedulable under A says why", "default/lost", nil, []string{"unschedulable under A: 0/2 nodes are available: 2 Insufficient cpu."}},
		{"unschedulable under B says why", "default/found", nil, []string{"unschedulable under B: preempted"}},
		{"the same node says nothing", "default/same", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := byPod[tt.pod]
			gotJSON, _ := json.Marshal(got.Plugins)
			wantJSON, _ := json.Marshal(tt.plugins)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("plugins %s, want %s", gotJSON, wantJSON)
			}
			if strings.Join(got.Notes, "|") != strings.Join(tt.notes, "|") {
				t.Errorf("notes %q, want %q", got.Notes, tt.notes)
			}
		})
	}
	if len(r.Nodes) != 2 || r.Nodes[1].B.Pods != 3 || r.Nodes[0].A.CPU != 50 {
		t.Errorf("nodes %+v", r.Nodes)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"pods placed differently: 2 of 5", "default/moved: node-1 under A, node-2 under B",
		"NodeResourcesFit                      +40      -40", "total                                 +20      -60", "the configurations differ"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
}

func TestCompareAlike(t *testing.T) {
	side := Side{Pods: map[string]Pod{"default/a": {Node: "n"}}, Nodes: map[string]Usage{"n": {}}}
	r := Compare(side, side)
	if r.Differ() || r.Moved != 0 {
		t.Errorf("the same side differs: %+v", r)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if !strings.Contains(text.String(), "place every pod alike") {
		t.Errorf("text: %s", text.String())
	}
}

func TestSideFrom(t *testing.T) {
	nodes := []event.NodeSummary{{Name: "n1", Allocatable: map[string]int64{"cpu": 2000, "memory": 1000}}, {Name: "n2", Allocatable: map[string]int64{"cpu": 1000}}}
	pods := []event.PodSummary{
		{Namespace: "default", Name: "a", NodeName: "n1", Requests: map[string]int64{"cpu": 500, "memory": 250}},
		{Namespace: "default", Name: "b", NodeName: "n1", Requests: map[string]int64{"cpu": 500}},
		{Namespace: "default", Name: "c", Message: "0/2 nodes are available"},
	}
	filter := event.NewFilterResults([]string{"NodeName", "NodeResourcesFit"}, 2, 4)
	filter.AddRow("n1", []int8{0, 0}, []int64{1, 1}, "", false)
	filter.AddRow("n2", []int8{0, 2}, []int64{1, 1}, "Insufficient cpu", false)
	events := map[string][]event.Event{"default/a": {
		{Kind: event.KindFilter, Filter: filter},
		{Kind: event.KindScore, Score: &event.ScoreResults{Plugins: []event.ScorePlugin{{Name: "NodeResourcesFit", Weight: 1}, {Name: "ImageLocality", Weight: 1}},
			NodeNames: []string{"n1"}, Raw: []int64{70, 0}, Normalized: []int64{70, 0}, PluginNanos: []int64{1, 1}}},
	}}
	s := SideFrom("a.yaml", nodes, pods, func(pod string) []event.Event { return events[pod] })
	if got := s.Nodes["n1"]; got.CPU != 50 || got.Memory != 25 || got.Pods != 2 {
		t.Errorf("n1 usage %+v, want 50%% cpu, 25%% memory, 2 pods", got)
	}
	if got := s.Nodes["n2"]; got != (Usage{}) {
		t.Errorf("n2 usage %+v, want empty", got)
	}
	a := s.Pods["default/a"]
	if a.Filtered["n2"] != "NodeResourcesFit: Insufficient cpu" || len(a.Filtered) != 1 || a.Scores["n1"]["NodeResourcesFit"] != 70 {
		t.Errorf("pod a: %+v", a)
	}
	if c := s.Pods["default/c"]; c.Node != "" || c.Reason != "0/2 nodes are available" {
		t.Errorf("pod c: %+v", c)
	}
}
