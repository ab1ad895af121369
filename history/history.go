// Package history keeps a bounded history of minisched's events: it numbers
// them, keeps the newest within a cap, indexes scheduling cycles, and lets
// readers (the websocket stream, the REST API) follow along without ever
// making the scheduler wait for them.
package history

import (
	"encoding/json"
	"errors"
	"sync"
	"time"

	"minisched/event"
)

// ErrTruncated means the history no longer reaches back to the asked-for
// sequence number: the reader must start again from a snapshot.
var ErrTruncated = errors.New("history truncated: the requested events are gone")

// Options bound the history.
type Options struct {
	// MaxWeight caps what the history keeps, counted in events plus plugin
	// results (an event of Filter over 100 nodes with 8 plugins weighs 801).
	// The oldest events go first. Default 500,000.
	MaxWeight int
	// MaxBytes caps the history's memory, as estimated by event.Bytes
	// (structs, strings and the cached JSON). The oldest events go first.
	// Default 256 MiB.
	MaxBytes int
	// MaxCycles caps the cycle index. Default 20,000.
	MaxCycles int
	// MaxBriefBytes caps the briefs kept of cycles whose Filter and Score
	// events have left the history (Brief), counted by their encoded size.
	// The oldest go first. Default MaxBytes/16.
	MaxBriefBytes int
}

// Entry is one recorded event. Its JSON form is computed once and shared by
// every reader.
type Entry struct {
	Event  event.Event
	weight int
	bytes  int
	once   sync.Once
	json   []byte
	// compact is the encoding of Event.Compact(), made for the first reader
	// that asks; nil when that is the event itself. It is a few hundred
	// bytes to a few KB, and smaller than json: well within the margin
	// Event.Bytes counts.
	compactOnce sync.Once
	compact     []byte
}

// JSON returns the event's stream encoding.
func (e *Entry) JSON() []byte {
	e.once.Do(func() { e.json = encode(&e.Event) })
	return e.json
}

// CompactJSON returns the encoding of e.Event.Compact(): the same bytes as
// JSON but for the events Compact changes.
func (e *Entry) CompactJSON() []byte {
	e.compactOnce.Do(func() {
		if c := e.Event.Compact(); c != &e.Event {
			e.compact = encode(c)
		}
	})
	if e.compact == nil {
		return e.JSON()
	}
	return e.compact
}

func encode(ev *event.Event) []byte {
	// Straight to the event's own encoder: json.Marshal would scan its
	// output once more, and Filter and Score events are large.
	b, err := ev.MarshalJSON()
	if err != nil {
		// Every field is a plain value; this cannot happen, but a reader
		// must still get a well-formed message.
		b, _ = json.Marshal(map[string]any{"seq": ev.Seq, "kind": "error", "error": err.Error()})
	}
	return b
}

// Recorder is the history. It is an event.Observer.
type Recorder struct {
	opts Options

	mu      sync.Mutex
	entries []*Entry // oldest first; entries[0].Event.Seq == first
	weight  int
	bytes   int
	seq     uint64
	// dropped counts events evicted since the start (or the last reset).
	dropped uint64
	// lastReset is the sequence number of the last reset event.
	lastReset uint64
	wake      chan struct{}
	waiting   bool

	// checkpoints are states to start a recording from (checkpoints.go);
	// grownWeight and grownBytes count what was recorded since the newest.
	checkpoints             []Checkpoint
	grownWeight, grownBytes int
	due                     chan struct{}

	cycles     map[int64]*event.CycleSummary
	cycleOrder []int64
	// podCycles lists each pod's cycles (namespace/name), oldest first.
	podCycles map[string][]int64
	// briefs are the briefs of cycles whose Filter or Score events have
	// left (briefs.go); briefOrder the order they were made in.
	briefs     map[int64]*Brief
	briefOrder []int64
	briefBytes int
}

// New returns an empty history.
func New(opts Options) *Recorder {
	if opts.MaxWeight <= 0 {
		opts.MaxWeight = 500_000
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 256 << 20
	}
	if opts.MaxCycles <= 0 {
		opts.MaxCycles = 20_000
	}
	if opts.MaxBriefBytes <= 0 {
		opts.MaxBriefBytes = max(opts.MaxBytes/16, 1<<20)
	}
	r := &Recorder{opts: opts, wake: make(chan struct{}), due: make(chan struct{}, 1), cycles: map[int64]*event.CycleSummary{}, podCycles: map[string][]int64{},
		briefs: map[int64]*Brief{}}
	r.signalCheckpoint()
	return r
}

// Observe numbers and keeps e. It takes a short lock and never waits for a
// reader. A reset event (the cluster was emptied) forgets every earlier
// event and cycle and starts the history; sequence numbers keep growing, so
// a reader that resumes from before it is told to resynchronise.
func (r *Recorder) Observe(e event.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	entry := &Entry{Event: e}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Kind == event.KindReset {
		r.entries, r.weight, r.bytes, r.dropped = nil, 0, 0, 0
		r.cycles, r.cycleOrder, r.podCycles = map[int64]*event.CycleSummary{}, nil, map[string][]int64{}
		r.briefs, r.briefOrder, r.briefBytes = map[int64]*Brief{}, nil, 0
		r.checkpoints = nil
	}
	r.seq++
	entry.Event.Seq = r.seq
	if e.Kind == event.KindReset {
		r.lastReset = r.seq
	}
	r.index(&entry.Event)
	entry.weight, entry.bytes = entry.Event.Weight(), entry.Event.Bytes()
	if e.Node != nil || e.PodChange != nil {
		// What an object's owner wrote is bounded by no estimate: count
		// the encoding every reader will share, made once, now.
		entry.bytes = max(entry.bytes, 2*len(entry.JSON()))
	}
	r.entries = append(r.entries, entry)
	r.weight += entry.weight
	r.bytes += entry.bytes
	r.grownWeight += entry.weight
	r.grownBytes += entry.bytes
	for (r.weight > r.opts.MaxWeight || r.bytes > r.opts.MaxBytes) && len(r.entries) > 1 {
		r.weight -= r.entries[0].weight
		r.bytes -= r.entries[0].bytes
		r.keepBrief(&r.entries[0].Event)
		r.entries[0] = nil
		r.entries = r.entries[1:]
		r.dropped++
	}
	// Reclaim the space of evicted entries now and then.
	if cap(r.entries) > 1024 && len(r.entries) < cap(r.entries)/4 {
		r.entries = append(make([]*Entry, 0, len(r.entries)*2), r.entries...)
	}
	r.signalCheckpoint()
	if r.waiting {
		close(r.wake)
		r.wake = make(chan struct{})
		r.waiting = false
	}
}

// ResetAfter says whether the cluster was reset after the event numbered
// seq: the history then forgot what came before the reset.
func (r *Recorder) ResetAfter(seq uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastReset > seq
}

// LastSeq is the sequence number of the newest event, 0 if none.
func (r *Recorder) LastSeq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Since returns up to max events newer than seq, oldest first, and a channel
// that is closed when more arrive. ErrTruncated says the events right after
// seq are gone.
func (r *Recorder) Since(seq uint64, max int) ([]*Entry, <-chan struct{}, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq > r.seq {
		// A sequence number from the future: a reader from before a reset.
		return nil, nil, ErrTruncated
	}
	first := r.seq - uint64(len(r.entries)) + 1
	if seq+1 < first {
		return nil, nil, ErrTruncated
	}
	from := int(seq + 1 - first)
	to := min(len(r.entries), from+max)
	out := make([]*Entry, to-from)
	copy(out, r.entries[from:to])
	if len(out) == 0 {
		r.waiting = true
	}
	return out, r.wake, nil
}

// Stats describe the history.
type Stats struct {
	Events    int    `json:"events"`
	Weight    int    `json:"weight"`
	MaxWeight int    `json:"maxWeight"`
	Bytes     int    `json:"bytes"`
	MaxBytes  int    `json:"maxBytes"`
	FirstSeq  uint64 `json:"firstSeq"`
	LastSeq   uint64 `json:"lastSeq"`
	// Truncated is true once events have been dropped to stay within the cap.
	Truncated bool   `json:"truncated"`
	Dropped   uint64 `json:"dropped"`
	Cycles    int    `json:"cycles"`
	// Briefs counts the cycles kept in brief (Brief) after their Filter or
	// Score events left; BriefBytes is their encoded size.
	Briefs        int `json:"briefs"`
	BriefBytes    int `json:"briefBytes"`
	MaxBriefBytes int `json:"maxBriefBytes"`
}

// Stats returns the history's size and reach.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{
		Events: len(r.entries), Weight: r.weight, MaxWeight: r.opts.MaxWeight, Bytes: r.bytes, MaxBytes: r.opts.MaxBytes,
		FirstSeq: r.seq - uint64(len(r.entries)) + 1, LastSeq: r.seq,
		Truncated: r.dropped > 0, Dropped: r.dropped, Cycles: len(r.cycles),
		Briefs: len(r.briefs), BriefBytes: r.briefBytes, MaxBriefBytes: r.opts.MaxBriefBytes,
	}
}
