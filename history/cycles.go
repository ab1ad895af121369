package history

import (
	"errors"
	"slices"
	"time"

	"minisched/event"
)

// ErrNoCycle means the cycle was never recorded or has left the history.
var ErrNoCycle = errors.New("no such cycle in the history")

// CycleRecord is a cycle with every event it emitted.
type CycleRecord struct {
	event.CycleSummary
	Events []event.Event `json:"events"`
	// Truncated is true when some of the cycle's events have left the
	// history. Brief is then what its Filter and Score runs came to, when
	// they are among the events that left.
	Truncated bool   `json:"truncated"`
	Brief     *Brief `json:"brief,omitempty"`
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
		c = &event.CycleSummary{ID: e.Cycle, Pod: *e.Pod, Attempt: e.CycleStart.Attempt, Start: e.Time,
			Nodes: e.CycleStart.Nodes, Profile: e.CycleStart.Profile, Group: e.CycleStart.Group, FirstSeq: e.Seq}
		r.cycles[e.Cycle] = c
		r.cycleOrder = append(r.cycleOrder, e.Cycle)
		key := e.Pod.Key()
		r.podCycles[key] = append(r.podCycles[key], e.Cycle)
		if len(r.cycleOrder) > r.opts.MaxCycles {
			// The oldest cycle overall is the oldest of its pod too.
			old := r.cycles[r.cycleOrder[0]]
			oldKey := old.Pod.Key()
			if ids := r.podCycles[oldKey][1:]; len(ids) > 0 {
				r.podCycles[oldKey] = ids
			} else {
				delete(r.podCycles, oldKey)
			}
			delete(r.cycles, r.cycleOrder[0])
			r.dropBrief(r.cycleOrder[0])
			r.cycleOrder = r.cycleOrder[1:]
		}
	}
	c.LastSeq = e.Seq
	switch {
	case e.CycleEnd != nil:
		c.End, c.EndTime = e.CycleEnd, timePtr(e.Time)
	case e.PermitWait != nil:
		c.Waiting = true
	case e.BindingEnd != nil:
		c.Binding, c.BindTime, c.Waiting = e.BindingEnd, timePtr(e.Time), false
	default:
		if e.CycleStart == nil {
			return
		}
	}
	// The events that change the summary carry it, so that viewers take
	// it as it is rather than build their own.
	summary := *c
	e.Summary = &summary
}

func timePtr(t time.Time) *time.Time { return &t }

// Cycles returns up to limit cycle summaries, newest first, of the pod
// namespace/name (all pods when empty).
// The scheduler records through the same lock, so this takes only what it
// returns: the pod's own index, never a scan of every cycle.
func (r *Recorder) Cycles(pod string, limit int) []event.CycleSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := r.cycleOrder
	if pod != "" {
		ids = r.podCycles[pod]
	}
	out := make([]event.CycleSummary, 0, min(limit, len(ids)))
	for i := len(ids) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, *r.cycles[ids[i]])
	}
	return out
}

// Cycle returns one cycle with its events. Under the lock it only copies
// the span of entries the cycle covers (entries never change once
// recorded); it picks the cycle's own events after letting go.
func (r *Recorder) Cycle(id int64) (*CycleRecord, error) {
	r.mu.Lock()
	c, ok := r.cycles[id]
	if !ok {
		r.mu.Unlock()
		return nil, ErrNoCycle
	}
	rec := &CycleRecord{CycleSummary: *c, Events: []event.Event{}}
	first := r.seq - uint64(len(r.entries)) + 1
	rec.Truncated = c.FirstSeq < first
	if b := r.briefs[id]; rec.Truncated && b != nil {
		rec.Brief = b
	}
	from := max(c.FirstSeq, first)
	last := min(c.LastSeq, r.seq)
	var span []*Entry
	if from <= last {
		span = slices.Clone(r.entries[from-first : last-first+1])
	}
	r.mu.Unlock()
	for _, e := range span {
		if e.Event.Cycle == id {
			rec.Events = append(rec.Events, e.Event)
		}
	}
	return rec, nil
}

// LastFiltered returns the events of pod's newest cycle that reached Filter
// (namespace/name), nil when none is held: the numbers that explain where
// the pod is, or why it is nowhere.
func (r *Recorder) LastFiltered(pod string) []event.Event {
	for _, c := range r.Cycles(pod, r.opts.MaxCycles) { // newest first
		rec, err := r.Cycle(c.ID)
		if err != nil {
			continue
		}
		for _, e := range rec.Events {
			if e.Filter != nil || e.Score != nil {
				return rec.Events
			}
		}
	}
	return nil
}
