package event

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
)

func TestCompactFilter(t *testing.T) {
	plugins := []string{"NodeUnschedulable", "NodeResourcesFit", "TaintToleration"}
	row := func(reason string, codes ...int) NodeFilter {
		return NodeFilter{Codes: codes, Nanos: make([]int64, len(codes)), Reason: reason}
	}
	pass := row("", 0, 0, 0)
	skip := row("", 0, int(fwk.Skip), 0)
	cpu := row("Insufficient cpu", 0, 2)
	taint := row("node(s) had untolerated taint {a: b}", 0, 0, 3)
	cordoned := row("node(s) were unschedulable", 3)
	tests := []struct {
		name  string
		nodes []NodeFilter
		want  FilterSummary
	}{
		{"no nodes", nil, FilterSummary{Failures: []FilterFailure{}}},
		{"every node passes", []NodeFilter{pass, pass, pass}, FilterSummary{Nodes: 3, Passed: 3, Failures: []FilterFailure{}}},
		{"a skipped plugin is no failure", []NodeFilter{skip, pass}, FilterSummary{Nodes: 2, Passed: 2, Failures: []FilterFailure{}}},
		{"failures grouped by plugin and reason, most first",
			[]NodeFilter{cordoned, cpu, pass, taint, cpu, taint, cpu},
			FilterSummary{Nodes: 7, Passed: 1, Failures: []FilterFailure{
				{Plugin: "NodeResourcesFit", Code: 2, Reason: "Insufficient cpu", Nodes: 3},
				{Plugin: "TaintToleration", Code: 3, Reason: "node(s) had untolerated taint {a: b}", Nodes: 2},
				{Plugin: "NodeUnschedulable", Code: 3, Reason: "node(s) were unschedulable", Nodes: 1},
			}}},
		{"one plugin, two reasons",
			[]NodeFilter{cpu, row("Insufficient memory", 0, 2)},
			FilterSummary{Nodes: 2, Failures: []FilterFailure{
				{Plugin: "NodeResourcesFit", Code: 2, Reason: "Insufficient cpu", Nodes: 1},
				{Plugin: "NodeResourcesFit", Code: 2, Reason: "Insufficient memory", Nodes: 1},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Event{Seq: 4, Kind: KindFilter, Cycle: 2, Filter: filterOf(t, plugins, tt.nodes, 77, true)}
			c := e.Compact()
			if c.Filter != nil || c.ScoreSummary != nil || c.Seq != 4 || c.Cycle != 2 {
				t.Fatalf("Compact kept the matrix or lost the header: %+v", c)
			}
			tt.want.Plugins, tt.want.Nanos, tt.want.NominatedNode = plugins, 77, true
			if !reflect.DeepEqual(*c.FilterSummary, tt.want) {
				t.Errorf("summary:\n got %+v\nwant %+v", *c.FilterSummary, tt.want)
			}
			if e.Filter == nil || e.FilterSummary != nil {
				t.Error("Compact changed the event it was given")
			}
		})
	}
}

func TestCompactScore(t *testing.T) {
	row := func(name string, total int64) NodeScore {
		return NodeScore{Node: name, Raw: []int64{total}, Normalized: []int64{total}, Weighted: []int64{total}, Nanos: []int64{1}, Total: total}
	}
	var many []NodeScore
	var manyTop []NodeScore
	for i := range 500 {
		n := row(fmt.Sprintf("node-%03d", i), int64(i%100))
		many = append(many, n)
		if i%100 == 99 && len(manyTop) < TopNodes {
			manyTop = append(manyTop, n)
		}
	}
	tests := []struct {
		name       string
		nodes      []NodeScore
		best       int64
		tied       int
		wantTopIDs []string
	}{
		{"no nodes", nil, 0, 0, nil},
		{"one node", []NodeScore{row("a", 10)}, 10, 1, []string{"a"}},
		{"highest first, ties in matrix order", []NodeScore{row("a", 10), row("b", 30), row("c", 20), row("d", 30)}, 30, 2, []string{"b", "d", "c", "a"}},
		{"negative totals", []NodeScore{row("a", -5), row("b", -1)}, -1, 1, []string{"b", "a"}},
		{"only the best five of many", many, 99, 5, names(manyTop)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugins := []ScorePlugin{{Name: "NodeResourcesFit", Weight: 1}}
			score := columns(t, plugins, tt.nodes)
			score.Nanos = 9
			e := Event{Kind: KindScore, Score: score}
			c := e.Compact()
			s := c.ScoreSummary
			if c.Score != nil || s == nil {
				t.Fatalf("Compact: %+v", c)
			}
			if s.Nodes != len(tt.nodes) || s.Best != tt.best || s.Tied != tt.tied || s.Nanos != 9 || !reflect.DeepEqual(s.Plugins, plugins) {
				t.Errorf("nodes %d best %d tied %d nanos %d, want %d %d %d 9", s.Nodes, s.Best, s.Tied, s.Nanos, len(tt.nodes), tt.best, tt.tied)
			}
			if got := names(s.Top); !reflect.DeepEqual(got, tt.wantTopIDs) {
				t.Errorf("top %v, want %v", got, tt.wantTopIDs)
			}
			if len(tt.nodes) > 0 && !reflect.DeepEqual(s.Top[0], tt.nodes[slices.IndexFunc(tt.nodes, func(n NodeScore) bool { return n.Node == s.Top[0].Node })]) {
				t.Error("a top row is not the matrix's row")
			}
		})
	}
}

func TestCompactLeavesOtherEvents(t *testing.T) {
	e := &Event{Kind: KindQueue, Queue: &QueueMove{To: ActiveQ}}
	if e.Compact() != e {
		t.Error("Compact copied an event that has no matrix")
	}
}

func names(rows []NodeScore) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Node)
	}
	return out
}

func TestCompactLeavesOutTheNamesOfTies(t *testing.T) {
	end := func(ties ...string) *CycleEnd {
		return &CycleEnd{Result: ResultScheduled, Node: "node-1", FeasibleNodes: 3, Ties: ties, TieCount: len(ties), Nanos: 9}
	}
	counted := func(n int) *CycleEnd {
		return &CycleEnd{Result: ResultScheduled, Node: "node-1", FeasibleNodes: 3, TieCount: n, Nanos: 9}
	}
	summary := func(e *CycleEnd) *CycleSummary { return &CycleSummary{ID: 7, Attempt: 1, End: e} }
	tests := []struct {
		name        string
		event       Event
		wantSame    bool // Compact returns the event itself
		wantEnd     *CycleEnd
		wantSummary *CycleEnd
	}{
		{"cycleEnd with ties", Event{Kind: KindCycleEnd, CycleEnd: end("node-2", "node-3"), Summary: summary(end("node-2", "node-3"))},
			false, counted(2), counted(2)},
		{"bindingEnd whose summary has ties", Event{Kind: KindBindingEnd, BindingEnd: &BindingEnd{Node: "node-1", Bound: true}, Summary: summary(end("node-2"))},
			false, nil, counted(1)},
		{"cycleEnd without ties", Event{Kind: KindCycleEnd, CycleEnd: end(), Summary: summary(end())},
			true, counted(0), counted(0)},
		{"cycleStart", Event{Kind: KindCycleStart, CycleStart: &CycleStart{Attempt: 1}, Summary: summary(nil)},
			true, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprintf("%+v %+v %+v", tt.event.CycleEnd, tt.event.Summary, tt.event.Summary.End)
			c := tt.event.Compact()
			if (c == &tt.event) != tt.wantSame {
				t.Fatalf("Compact returned the event itself: %v, want %v", c == &tt.event, tt.wantSame)
			}
			if !reflect.DeepEqual(c.CycleEnd, tt.wantEnd) {
				t.Errorf("cycleEnd: got %+v, want %+v", c.CycleEnd, tt.wantEnd)
			}
			if !reflect.DeepEqual(c.Summary.End, tt.wantSummary) || c.Summary.ID != 7 {
				t.Errorf("summary: got %+v with end %+v, want end %+v", c.Summary, c.Summary.End, tt.wantSummary)
			}
			if after := fmt.Sprintf("%+v %+v %+v", tt.event.CycleEnd, tt.event.Summary, tt.event.Summary.End); after != before {
				t.Errorf("Compact changed the event it was given:\n%s\n%s", before, after)
			}
		})
	}
}
