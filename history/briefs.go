package history

import (
	"encoding/json"

	"minisched/event"
)

// Brief is what a cycle's Filter and Score runs come to once their events
// have left the history: how many nodes passed and what stopped the others,
// counted by plugin and reason; the best nodes with each plugin's score. A
// big cluster's matrices fill the history fast, and an operator asking
// about an old cycle still gets its answer. A brief never changes once
// made: readers share it.
type Brief struct {
	Filter *event.FilterSummary `json:"filter,omitempty"`
	Score  *event.ScoreSummary  `json:"score,omitempty"`
	bytes  int
}

// briefTop is how many of the best nodes a brief keeps: the winner, the
// runner-up that says which plugin decided, and one more.
const briefTop = 3

// keepBrief makes or updates the brief of e's cycle as e leaves the history,
// when e is a Filter or Score run of a cycle still in the index; r.mu is
// held. Of two Filter runs (the nominated node's, then every node's) the
// larger is kept; of two Score runs, the full one, not a batch's rescore.
func (r *Recorder) keepBrief(e *event.Event) {
	if e.Cycle == 0 || e.Filter == nil && e.Score == nil {
		return
	}
	if _, ok := r.cycles[e.Cycle]; !ok {
		return
	}
	old := r.briefs[e.Cycle]
	b := &Brief{}
	if old != nil {
		*b = *old
	}
	switch {
	case e.Filter != nil && (b.Filter == nil || e.Filter.Len() >= b.Filter.Nodes):
		b.Filter = e.Filter.Summary()
	case e.Score != nil && (b.Score == nil || e.Score.Batch == ""):
		s := e.Score.Summary()
		s.Top = s.Top[:min(len(s.Top), briefTop)]
		b.Score = s
	default:
		return
	}
	encoded, err := json.Marshal(b)
	if err != nil {
		return
	}
	b.bytes = len(encoded)
	if old == nil {
		r.briefOrder = append(r.briefOrder, e.Cycle)
	} else {
		r.briefBytes -= old.bytes
	}
	r.briefs[e.Cycle] = b
	r.briefBytes += b.bytes
	for r.briefBytes > r.opts.MaxBriefBytes && len(r.briefOrder) > 1 {
		r.dropBrief(r.briefOrder[0])
		r.briefOrder = r.briefOrder[1:]
	}
	// The ids of briefs dropped with their cycles stay in the order until
	// they are more than half of it.
	if len(r.briefOrder) > 2*len(r.briefs)+64 {
		kept := make([]int64, 0, len(r.briefs))
		for _, id := range r.briefOrder {
			if _, ok := r.briefs[id]; ok {
				kept = append(kept, id)
			}
		}
		r.briefOrder = kept
	}
}

// dropBrief forgets a cycle's brief; its id may stay in briefOrder, which
// then skips it.
func (r *Recorder) dropBrief(id int64) {
	if b, ok := r.briefs[id]; ok {
		r.briefBytes -= b.bytes
		delete(r.briefs, id)
	}
}
