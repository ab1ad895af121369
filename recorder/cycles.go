package recorder

import (
	"errors"
	"time"

	"minisched/minisched/event"
)

// ErrNoCycle means the cycle was never recorded or has left the history.
var ErrNoCycle = errors.New("no such cycle in the history")

// CycleSummary is what the cycle index keeps of one scheduling attempt.
type CycleSummary struct {
	ID      int64             `json:"id"`
	Pod     event.PodRef      `json:"pod"`
	Attempt int               `json:"attempt"`
	Start   time.Time         `json:"start"`
	Nodes   int               `json:"nodes"`
	End     *event.CycleEnd   `json:"end,omitempty"`
	Binding *event.BindingEnd `json:"binding,omitempty"`
	// FirstSeq and LastSeq bound the cycle's events in the history.
	FirstSeq uint64 `json:"firstSeq"`
	LastSeq  uint64 `json:"lastSeq"`
}

// CycleRecord is a cycle with every event it emitted.
type CycleRecord struct {
	CycleSummary
	Events []event.Event `json:"events"`
	// Truncated is true when some of the cycle's events have left the
	// history.
	Truncated bool `json:"truncated"`
}

// index keeps the cycle index up to date; r.mu is held.
func (r *Recorder) index(e *event.Event) {
	if e.Cycle == 0 {
		return
	}
	c, ok := r.cycles[e.Cycle]
	if !ok {
		if e.Kind != event.KindCycleStart {
			return // the start has left the index already
		}
		c = &CycleSummary{ID: e.Cycle, Pod: *e.Pod, Attempt: e.CycleStart.Attempt, Start: e.Time,
			Nodes: e.CycleStart.Nodes, FirstSeq: e.Seq}
		r.cycles[e.Cycle] = c
		r.cycleOrder = append(r.cycleOrder, e.Cycle)
		if len(r.cycleOrder) > r.opts.MaxCycles {
			delete(r.cycles, r.cycleOrder[0])
			r.cycleOrder = r.cycleOrder[1:]
		}
	}
	c.LastSeq = e.Seq
	switch {
	case e.CycleEnd != nil:
		c.End = e.CycleEnd
	case e.BindingEnd != nil:
		c.Binding = e.BindingEnd
	}
}

// Cycles returns up to limit cycle summaries, newest first, of the pod
// namespace/name (all pods when empty).
func (r *Recorder) Cycles(pod string, limit int) []CycleSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []CycleSummary{}
	for i := len(r.cycleOrder) - 1; i >= 0 && len(out) < limit; i-- {
		c := r.cycles[r.cycleOrder[i]]
		if pod == "" || c.Pod.Key() == pod {
			out = append(out, *c)
		}
	}
	return out
}

// Cycle returns one cycle with its events.
func (r *Recorder) Cycle(id int64) (*CycleRecord, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cycles[id]
	if !ok {
		return nil, ErrNoCycle
	}
	rec := &CycleRecord{CycleSummary: *c, Events: []event.Event{}}
	first := r.seq - uint64(len(r.entries)) + 1
	if c.FirstSeq < first {
		rec.Truncated = true
	}
	from := max(c.FirstSeq, first)
	for seq := from; seq <= c.LastSeq && seq <= r.seq; seq++ {
		if e := &r.entries[seq-first].Event; e.Cycle == id {
			rec.Events = append(rec.Events, *e)
		}
	}
	return rec, nil
}
