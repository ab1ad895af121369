package event

import (
	"cmp"
	"slices"
)

// TopNodes is how many of the best-scored nodes a ScoreSummary keeps.
const TopNodes = 5

// FilterSummary is a Filter run in a few hundred bytes, whatever the
// cluster's size: how many nodes passed, and the failures counted by the
// plugin and reason that stopped them, as kube-scheduler's own "0/5000 nodes
// are available" message counts them. The stream sends it instead of the
// matrix to clients that ask for compact matrices; GET /cycles/{cycle} has
// the matrix.
type FilterSummary struct {
	Plugins       []string `json:"plugins"`
	Nanos         int64    `json:"nanos"`
	NominatedNode bool     `json:"nominatedNode,omitempty"`
	Batch         string   `json:"batch,omitempty"`
	// Nodes is how many nodes Filter checked, Passed how many passed every
	// plugin.
	Nodes  int `json:"nodes"`
	Passed int `json:"passed"`
	// Failures are the other nodes, grouped by what stopped them, most
	// nodes first.
	Failures []FilterFailure `json:"failures"`
}

// FilterFailure counts the nodes one plugin stopped with one code and reason.
type FilterFailure struct {
	Plugin string `json:"plugin"`
	Code   int    `json:"code"`
	Reason string `json:"reason,omitempty"`
	Nodes  int    `json:"nodes"`
}

// ScoreSummary is a Score run cut to its best nodes: the plugins, how many
// nodes were scored, the best total and how many nodes share it (the
// scheduler chooses among those; cycleEnd's ties names them), and the rows of
// the TopNodes best nodes, highest total first.
type ScoreSummary struct {
	Plugins []ScorePlugin `json:"plugins"`
	Nanos   int64         `json:"nanos"`
	Nodes   int           `json:"nodes"`
	Best    int64         `json:"best"`
	Tied    int           `json:"tied"`
	Top     []NodeScore   `json:"top"`
	Batch   string        `json:"batch,omitempty"`
}

// Compact returns e as a compact stream sends it: a Filter or Score matrix
// replaced by a FilterSummary or ScoreSummary, and the names of a cycle's
// ties (in cycleEnd, and in the summary the cycle's events carry) left out,
// their count kept; an event with none of these is returned as it is. The
// result shares e's slices: neither may be changed afterwards.
func (e *Event) Compact() *Event {
	tied := func(end *CycleEnd) bool { return end != nil && len(end.Ties) > 0 }
	if e.Filter == nil && e.Score == nil && !tied(e.CycleEnd) && (e.Summary == nil || !tied(e.Summary.End)) {
		return e
	}
	c := *e
	if f := e.Filter; f != nil {
		c.Filter, c.FilterSummary = nil, f.Summary()
	}
	if s := e.Score; s != nil {
		c.Score, c.ScoreSummary = nil, s.Summary()
	}
	if tied(e.CycleEnd) {
		c.CycleEnd = withoutTies(e.CycleEnd)
	}
	if e.Summary != nil && tied(e.Summary.End) {
		sum := *e.Summary
		sum.End = withoutTies(sum.End)
		c.Summary = &sum
	}
	return &c
}

func withoutTies(end *CycleEnd) *CycleEnd {
	c := *end
	c.Ties = nil
	return &c
}

// Summary is the run in brief (FilterSummary).
func (f *FilterResults) Summary() *FilterSummary {
	sum := &FilterSummary{Plugins: f.Plugins, Nanos: f.Nanos, NominatedNode: f.NominatedNode, Batch: f.Batch, Nodes: f.Len(), Failures: []FilterFailure{}}
	index := map[FilterFailure]int{}
	for i := range f.NodeNames {
		codes, _ := f.Calls(i)
		at := f.FailedAt(i)
		if at < 0 {
			if len(codes) == len(f.Plugins) {
				sum.Passed++
			}
			continue
		}
		key := FilterFailure{Code: int(codes[at]), Reason: f.Reasons[i]}
		if at < len(f.Plugins) {
			key.Plugin = f.Plugins[at]
		}
		if j, ok := index[key]; ok {
			sum.Failures[j].Nodes++
			continue
		}
		index[key] = len(sum.Failures)
		key.Nodes = 1
		sum.Failures = append(sum.Failures, key)
	}
	slices.SortStableFunc(sum.Failures, func(a, b FilterFailure) int { return cmp.Compare(b.Nodes, a.Nodes) })
	return sum
}

// Summary is the run cut to its TopNodes best nodes (ScoreSummary).
func (s *ScoreResults) Summary() *ScoreSummary {
	sum := &ScoreSummary{Plugins: s.Plugins, Nanos: s.Nanos, Nodes: s.Len(), Top: []NodeScore{}, Batch: s.Batch}
	// The best TopNodes by total, ties in the matrix's order: one pass,
	// inserting into a short sorted list of row indexes.
	top := make([]int, 0, TopNodes+1)
	totals := make([]int64, 0, TopNodes+1)
	for i := range s.NodeNames {
		total := s.Total(i)
		switch {
		case i == 0 || total > sum.Best:
			sum.Best, sum.Tied = total, 1
		case total == sum.Best:
			sum.Tied++
		}
		at := len(top)
		for at > 0 && totals[at-1] < total {
			at--
		}
		if at < TopNodes {
			top, totals = slices.Insert(top, at, i), slices.Insert(totals, at, total)
			if len(top) > TopNodes {
				top, totals = top[:TopNodes], totals[:TopNodes]
			}
		}
	}
	for _, i := range top {
		sum.Top = append(sum.Top, s.Row(i))
	}
	return sum
}
