package history

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"minisched/event"
)

func cycleEvents(id int64, pod string, nodes int) []event.Event {
	ref := &event.PodRef{Namespace: "default", Name: pod, UID: "uid-" + pod}
	filter := event.NewFilterResults([]string{"A", "B"}, nodes, 2*nodes)
	for range nodes {
		filter.AddRow("n", []int8{0, 0}, []int64{1, 1}, "", false)
	}
	return []event.Event{
		{Kind: event.KindCycleStart, Pod: ref, Cycle: id, CycleStart: &event.CycleStart{Attempt: 1, Nodes: nodes}},
		{Kind: event.KindFilter, Pod: ref, Cycle: id, Filter: filter},
		{Kind: event.KindCycleEnd, Pod: ref, Cycle: id, CycleEnd: &event.CycleEnd{Result: event.ResultScheduled, Node: "n"}},
	}
}

func TestSequenceAndSince(t *testing.T) {
	r := New(Options{})
	for _, e := range cycleEvents(1, "a", 3) {
		r.Observe(e)
	}
	if r.LastSeq() != 3 {
		t.Fatalf("LastSeq = %d, want 3", r.LastSeq())
	}
	got, _, err := r.Since(1, 10)
	if err != nil || len(got) != 2 || got[0].Event.Seq != 2 || got[1].Event.Seq != 3 {
		t.Fatalf("Since(1) = %v, %v", got, err)
	}
	if got, _, _ := r.Since(0, 1); len(got) != 1 || got[0].Event.Seq != 1 {
		t.Errorf("Since(0, max 1) = %v", got)
	}
	if !isEventJSON(got[0]) {
		t.Errorf("entry JSON is not an event")
	}
	if _, _, err := r.Since(99, 10); !errors.Is(err, ErrTruncated) {
		t.Errorf("Since a future seq: %v, want ErrTruncated", err)
	}
}

func isEventJSON(e *Entry) bool {
	b := e.JSON()
	return len(b) > 10 && b[0] == '{' && string(b[1:7]) == `"seq":`
}

func TestWeightCapEvictsOldest(t *testing.T) {
	// Each cycle weighs 1 + (1 + 10 nodes x 2 results) + 1 = 23.
	r := New(Options{MaxWeight: 100})
	for id := int64(1); id <= 10; id++ {
		for _, e := range cycleEvents(id, "p", 10) {
			r.Observe(e)
		}
	}
	st := r.Stats()
	if st.Weight > 100 || !st.Truncated || st.Dropped == 0 {
		t.Fatalf("stats %+v: want weight within 100 and some events dropped", st)
	}
	if st.FirstSeq != st.LastSeq-uint64(st.Events)+1 {
		t.Errorf("first %d last %d events %d do not add up", st.FirstSeq, st.LastSeq, st.Events)
	}
	if _, _, err := r.Since(0, 10); !errors.Is(err, ErrTruncated) {
		t.Errorf("Since(0) after eviction: %v, want ErrTruncated", err)
	}
	// The newest cycle is whole, an old one is gone or truncated.
	rec, err := r.Cycle(10)
	if err != nil || rec.Truncated || len(rec.Events) != 3 {
		t.Errorf("newest cycle: %+v %v", rec, err)
	}
	if rec, err := r.Cycle(1); err == nil && !rec.Truncated {
		t.Errorf("the oldest cycle should be truncated, got %+v", rec)
	}
}

// The byte cap holds whatever the events carry: a few events with long
// messages evict as surely as many small ones, and the estimate covers
// what the events really take once encoded for readers.
func TestByteCapEvictsOldest(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	r := New(Options{MaxBytes: 100_000})
	encoded := 0
	for i := 0; i < 50; i++ {
		r.Observe(event.Event{Kind: event.KindCycleEnd, Pod: &event.PodRef{Name: "p"}, Cycle: int64(i + 1),
			CycleEnd: &event.CycleEnd{Result: event.ResultUnschedulable, Message: long}})
	}
	st := r.Stats()
	if st.Bytes > 100_000 || st.Dropped == 0 || st.Events == 0 {
		t.Fatalf("stats %+v: want the bytes within 100,000 and the oldest events dropped", st)
	}
	entries, _, err := r.Since(st.FirstSeq-1, st.Events)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		encoded += len(e.JSON())
	}
	if encoded > st.Bytes {
		t.Errorf("the kept events encode to %d bytes, more than the %d estimated", encoded, st.Bytes)
	}
}

// A node's summary is counted by its encoded size: a node of 60,000 labels
// patched ten times fills the cap and evicts, rather than passing for 1 KB
// an event (issue 38, 2).
func TestByteCapCountsWhatNodesCarry(t *testing.T) {
	labels := map[string]string{}
	for i := range 60_000 {
		labels[fmt.Sprintf("example.com/label-%05d", i)] = "value"
	}
	const maxBytes = 4 << 20
	r := New(Options{MaxBytes: maxBytes})
	for range 11 {
		r.Observe(event.Event{Kind: event.KindNode, Node: &event.NodeChange{Action: event.Updated, Node: event.NodeSummary{Name: "huge", Labels: labels}}})
	}
	st := r.Stats()
	entries, _, err := r.Since(st.FirstSeq-1, st.Events)
	if err != nil {
		t.Fatal(err)
	}
	encoded := 0
	for _, e := range entries {
		encoded += len(e.JSON())
	}
	if st.Bytes > maxBytes || st.Dropped == 0 || encoded > st.Bytes {
		t.Errorf("stats %+v: the kept events encode to %d bytes; want the cap held, the oldest dropped, and the estimate above the encoding", st, encoded)
	}
}

func TestCycleIndex(t *testing.T) {
	r := New(Options{MaxCycles: 3})
	for id := int64(1); id <= 5; id++ {
		pod := "a"
		if id%2 == 0 {
			pod = "b"
		}
		for _, e := range cycleEvents(id, pod, 1) {
			r.Observe(e)
		}
	}
	all := r.Cycles("", 10)
	if len(all) != 3 || all[0].ID != 5 || all[2].ID != 3 {
		t.Fatalf("Cycles = %+v, want the newest three, newest first", all)
	}
	if b := r.Cycles("default/b", 10); len(b) != 1 || b[0].ID != 4 || b[0].End == nil || b[0].End.Node != "n" {
		t.Errorf("cycles of b = %+v", b)
	}
	if _, err := r.Cycle(1); !errors.Is(err, ErrNoCycle) {
		t.Errorf("a cycle beyond the index: %v", err)
	}
}

func TestResetMakesOldReadersResync(t *testing.T) {
	r := New(Options{})
	for _, e := range cycleEvents(1, "a", 1) {
		r.Observe(e)
	}
	r.Observe(event.Event{Kind: event.KindReset})
	if _, _, err := r.Since(1, 10); !errors.Is(err, ErrTruncated) {
		t.Errorf("a reader from before the reset: %v, want ErrTruncated", err)
	}
	if got, _, err := r.Since(3, 10); err != nil || len(got) != 1 || got[0].Event.Seq != 4 || got[0].Event.Kind != event.KindReset {
		t.Errorf("after a reset, the history starts with it and seq keeps counting: %v %v", got, err)
	}
	if len(r.Cycles("", 10)) != 0 {
		t.Errorf("cycles survive a reset")
	}
}

// TestConcurrentWritersAndReaders: readers following with Since see every
// event once, in order, while writers observe concurrently.
func TestConcurrentWritersAndReaders(t *testing.T) {
	r := New(Options{})
	const writers, each = 4, 2000
	var wg sync.WaitGroup
	done := make(chan struct{})
	seen := make([]int, 3)
	for i := range seen {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var cursor uint64
			for cursor < writers*each {
				entries, wake, err := r.Since(cursor, 100)
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range entries {
					if e.Event.Seq != cursor+1 {
						t.Errorf("reader %d: seq %d after %d", i, e.Event.Seq, cursor)
						return
					}
					cursor = e.Event.Seq
					seen[i]++
				}
				if len(entries) == 0 {
					select {
					case <-wake:
					case <-done:
					}
				}
			}
		}(i)
	}
	var writersWG sync.WaitGroup
	for w := 0; w < writers; w++ {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			for i := 0; i < each; i++ {
				r.Observe(event.Event{Kind: event.KindQueue, Queue: &event.QueueMove{Action: event.ActionAdd}})
			}
		}()
	}
	writersWG.Wait()
	wg.Wait()
	close(done)
	for i, n := range seen {
		if n != writers*each {
			t.Errorf("reader %d saw %d events, want %d", i, n, writers*each)
		}
	}
}

// Each pod's cycles are found through its own index, which follows the
// cycle cap.
func TestCyclesOfOnePodAfterEviction(t *testing.T) {
	r := New(Options{MaxCycles: 4})
	for id := int64(1); id <= 8; id++ {
		pod := "a"
		if id%2 == 0 {
			pod = "b"
		}
		for _, e := range cycleEvents(id, pod, 1) {
			r.Observe(e)
		}
	}
	var ids []int64
	for _, c := range r.Cycles("default/a", 10) {
		ids = append(ids, c.ID)
	}
	if len(ids) != 2 || ids[0] != 7 || ids[1] != 5 {
		t.Errorf("cycles of a: %v, want [7 5] (newest first, the evicted ones gone)", ids)
	}
	if got := len(r.Cycles("", 10)); got != 4 {
		t.Errorf("%d cycles kept, want 4", got)
	}
	if got := r.Cycles("default/c", 10); len(got) != 0 {
		t.Errorf("cycles of a pod never seen: %v", got)
	}
}

// TestEventsCarryTheSummary: the events that change a cycle carry its
// summary as it stands after them, the same one Cycles lists.
func TestEventsCarryTheSummary(t *testing.T) {
	r := New(Options{})
	ref := &event.PodRef{Namespace: "default", Name: "p", UID: "uid-p"}
	for _, e := range []event.Event{
		{Kind: event.KindCycleStart, Pod: ref, Cycle: 7, CycleStart: &event.CycleStart{Attempt: 2, Nodes: 3, Profile: "default-scheduler"}},
		{Kind: event.KindPoint, Pod: ref, Cycle: 7, Point: &event.PointResults{Point: "PreFilter"}},
		{Kind: event.KindCycleEnd, Pod: ref, Cycle: 7, CycleEnd: &event.CycleEnd{Result: event.ResultScheduled, Node: "n2"}},
		{Kind: event.KindPermitWait, Pod: ref, Cycle: 7, PermitWait: &event.PermitWait{Node: "n2"}},
		{Kind: event.KindBindingEnd, Pod: ref, Cycle: 7, BindingEnd: &event.BindingEnd{Node: "n2", Bound: true}},
	} {
		r.Observe(e)
	}
	entries, _, err := r.Since(0, 10)
	if err != nil || len(entries) != 5 {
		t.Fatalf("Since: %d entries, %v", len(entries), err)
	}
	tests := []struct {
		name                  string
		summary               *event.CycleSummary
		ended, bound, waiting bool
	}{
		{"cycleStart", entries[0].Event.Summary, false, false, false},
		{"point", entries[1].Event.Summary, false, false, false},
		{"cycleEnd", entries[2].Event.Summary, true, false, false},
		{"permitWait", entries[3].Event.Summary, true, false, true},
		{"bindingEnd", entries[4].Event.Summary, true, true, false},
	}
	for _, tt := range tests {
		s := tt.summary
		if tt.name == "point" {
			if s != nil {
				t.Errorf("a point event carries a summary: %+v", s)
			}
			continue
		}
		if s == nil {
			t.Errorf("%s: no summary", tt.name)
			continue
		}
		if s.ID != 7 || s.Attempt != 2 || s.Nodes != 3 || s.Profile != "default-scheduler" || s.Pod != *ref {
			t.Errorf("%s: summary %+v", tt.name, s)
		}
		if (s.End != nil) != tt.ended || (s.EndTime != nil) != tt.ended || (s.Binding != nil) != tt.bound || s.Waiting != tt.waiting {
			t.Errorf("%s: ended %v, bound %v, waiting %v; want %v, %v, %v", tt.name, s.End != nil, s.Binding != nil, s.Waiting, tt.ended, tt.bound, tt.waiting)
		}
	}
	listed := r.Cycles("default/p", 1)
	if len(listed) != 1 || listed[0].LastSeq != entries[4].Event.Seq || listed[0].Binding == nil || *listed[0].BindTime != entries[4].Event.Time {
		t.Errorf("Cycles lists %+v, want the bindingEnd's summary", listed)
	}
}

func TestLastFiltered(t *testing.T) {
	r := New(Options{})
	for _, e := range cycleEvents(1, "a", 2) {
		r.Observe(e)
	}
	for _, e := range cycleEvents(2, "a", 3) {
		r.Observe(e)
	}
	// A third attempt that ended before Filter (PreFilter rejected it).
	ref := &event.PodRef{Namespace: "default", Name: "a", UID: "uid-a"}
	r.Observe(event.Event{Kind: event.KindCycleStart, Pod: ref, Cycle: 3, CycleStart: &event.CycleStart{Attempt: 3}})
	r.Observe(event.Event{Kind: event.KindCycleEnd, Pod: ref, Cycle: 3, CycleEnd: &event.CycleEnd{Result: event.ResultUnschedulable}})
	got := r.LastFiltered("default/a")
	if len(got) != 3 || got[0].Cycle != 2 || got[1].Filter == nil || got[1].Filter.Len() != 3 {
		t.Errorf("LastFiltered = %+v, want cycle 2's three events", got)
	}
	if got := r.LastFiltered("default/nobody"); got != nil {
		t.Errorf("LastFiltered of a pod with no cycle = %v", got)
	}
}
