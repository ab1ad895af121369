package history

import (
	"fmt"
	"testing"

	"minisched/event"
)

// scoredCycle is a cycle with Filter (half the nodes fail A) and Score
// (node-i scores i under a plugin of weight 2).
func scoredCycle(id int64, nodes int) []event.Event {
	ref := &event.PodRef{Namespace: "default", Name: fmt.Sprintf("p%d", id), UID: "u"}
	filter := event.NewFilterResults([]string{"A", "B"}, nodes, 2*nodes)
	for i := range nodes {
		if i%2 == 0 {
			filter.AddRow(fmt.Sprintf("node-%d", i), []int8{2}, []int64{1}, "too small", false)
		} else {
			filter.AddRow(fmt.Sprintf("node-%d", i), []int8{0, 0}, []int64{1, 1}, "", false)
		}
	}
	score := event.NewScoreResults([]event.ScorePlugin{{Name: "S", Weight: 2}}, nodes/2)
	for i := range score.NodeNames {
		score.NodeNames[i] = fmt.Sprintf("node-%d", 2*i+1)
		score.Normalized[i] = int64(i)
	}
	return []event.Event{
		{Kind: event.KindCycleStart, Pod: ref, Cycle: id, CycleStart: &event.CycleStart{Attempt: 1, Nodes: nodes}},
		{Kind: event.KindFilter, Pod: ref, Cycle: id, Filter: filter},
		{Kind: event.KindScore, Pod: ref, Cycle: id, Score: score},
		{Kind: event.KindCycleEnd, Pod: ref, Cycle: id, CycleEnd: &event.CycleEnd{Result: event.ResultScheduled, Node: fmt.Sprintf("node-%d", nodes-1)}},
	}
}

// gone says which of a cycle's matrices have left the history.
func gone(rec *CycleRecord) (filter, score bool) {
	filter, score = true, true
	for _, e := range rec.Events {
		filter = filter && e.Filter == nil
		score = score && e.Score == nil
	}
	return filter, score
}

func TestBriefOutlivesTheEvents(t *testing.T) {
	// A cycle of 20 nodes weighs 44: a weight cap of 100 keeps about two.
	tests := []struct {
		name string
		opts Options
		// all: every cycle in the index whose matrices left has a brief;
		// otherwise the newest of them do, within the byte cap.
		all bool
	}{
		{"a cycle whose matrices left is kept in brief", Options{MaxWeight: 100}, true},
		{"the briefs stay within their byte cap, the oldest going first", Options{MaxWeight: 100, MaxBriefBytes: 900}, false},
		{"a brief goes with its cycle's summary", Options{MaxWeight: 100, MaxCycles: 3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(tt.opts)
			const cycles = 8
			for id := int64(1); id <= cycles; id++ {
				for _, e := range scoredCycle(id, 20) {
					r.Observe(e)
				}
			}
			var left, briefed []int64
			for id := int64(1); id <= cycles; id++ {
				rec, err := r.Cycle(id)
				if err != nil {
					if brief := r.briefs[id]; brief != nil {
						t.Errorf("cycle %d left the index but its brief stayed", id)
					}
					continue
				}
				filterGone, scoreGone := gone(rec)
				if !filterGone && !scoreGone {
					if rec.Brief != nil {
						t.Errorf("cycle %d: a brief while its matrices are kept", id)
					}
					continue
				}
				left = append(left, id)
				if rec.Brief == nil {
					continue
				}
				briefed = append(briefed, id)
				if f := rec.Brief.Filter; filterGone && (f == nil || f.Nodes != 20 || f.Passed != 10 || len(f.Failures) != 1 || f.Failures[0].Nodes != 10 || f.Failures[0].Plugin != "A") {
					t.Errorf("cycle %d: filter brief %+v", id, f)
				}
				if s := rec.Brief.Score; scoreGone && (s == nil || s.Nodes != 10 || len(s.Top) != briefTop || s.Top[0].Node != "node-19" || s.Top[0].Total != 18 || s.Top[1].Total != 16) {
					t.Errorf("cycle %d: score brief %+v", id, s)
				}
			}
			if len(left) == 0 || len(briefed) == 0 {
				t.Fatalf("cycles whose matrices left %v, in brief %v: the test needs both", left, briefed)
			}
			if tt.all && len(briefed) != len(left) {
				t.Errorf("in brief %v, want every cycle whose matrices left: %v", briefed, left)
			}
			if !tt.all && (len(briefed) == len(left) || fmt.Sprint(briefed) != fmt.Sprint(left[len(left)-len(briefed):])) {
				t.Errorf("in brief %v, want the newest few of %v", briefed, left)
			}
			if st := r.Stats(); st.BriefBytes > st.MaxBriefBytes || st.Briefs != len(briefed) {
				t.Errorf("stats %+v: the briefs (%d) must be kept within their cap", st, len(briefed))
			}
		})
	}
	t.Run("a reset forgets them", func(t *testing.T) {
		r := New(Options{MaxWeight: 100})
		for id := int64(1); id <= 4; id++ {
			for _, e := range scoredCycle(id, 20) {
				r.Observe(e)
			}
		}
		r.Observe(event.Event{Kind: event.KindReset})
		if st := r.Stats(); st.Briefs != 0 || st.BriefBytes != 0 {
			t.Errorf("after a reset: %+v", st)
		}
	})
}
