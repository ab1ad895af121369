package schedperf

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"minisched/event"
)

// TestRecordMerge: what one process's Plugins recorded, carried as JSON and
// merged into another's, gives the rows both would give had they been one.
func TestRecordMerge(t *testing.T) {
	observe := func(p *Plugins, nanos ...int64) {
		for _, n := range nanos {
			p.Observe(event.Event{Point: &event.PointResults{Point: "Reserve", Results: []event.PluginResult{{Plugin: "VolumeBinding", Nanos: n}}}})
			p.Observe(event.Event{CycleEnd: &event.CycleEnd{Nanos: 10 * n}})
		}
	}
	first, second, both := NewPlugins(), NewPlugins(), NewPlugins()
	observe(first, 100, 2000, 30000)
	observe(second, 400, 5000)
	observe(both, 100, 2000, 30000, 400, 5000)

	data, err := json.Marshal(second.Record())
	if err != nil {
		t.Fatal(err)
	}
	var carried Recorded
	if err := json.Unmarshal(data, &carried); err != nil {
		t.Fatal(err)
	}
	if err := first.Merge(carried); err != nil {
		t.Fatal(err)
	}
	got, gotCycles, gotTime := first.Rows()
	want, wantCycles, wantTime := both.Rows()
	if len(got) != 1 || got[0] != want[0] || gotCycles != wantCycles || gotTime != wantTime {
		t.Errorf("merged: %+v %d %s; want %+v %d %s", got, gotCycles, gotTime, want, wantCycles, wantTime)
	}
	if r := got[0]; r.Calls != 5 || r.Total != 37500*time.Nanosecond || r.P50 < 2000 || r.P50 > 2200 {
		t.Errorf("row %+v: want 5 calls, 37.5µs in all, p50 about 2µs", r)
	}

	if err := first.Merge(Recorded{Calls: []RecordedCall{{Point: "Bind", Plugin: "x", Buckets: map[int]int64{-1: 1}}}}); err == nil {
		t.Error("a bucket out of range was merged")
	}
}

// TestPodGroupCycleTime: the member cycles of one pod group's cycle all
// last until the group's cycle ends; the cycles' time counts that once.
func TestPodGroupCycleTime(t *testing.T) {
	tests := []struct {
		name       string
		cycles     []event.Event
		wantCycles int
		wantTime   time.Duration
	}{
		{
			name: "pods alone",
			cycles: []event.Event{
				{Cycle: 1, CycleStart: &event.CycleStart{}}, {Cycle: 1, CycleEnd: &event.CycleEnd{Nanos: 300}},
				{Cycle: 2, CycleStart: &event.CycleStart{}}, {Cycle: 2, CycleEnd: &event.CycleEnd{Nanos: 200}},
			},
			wantCycles: 2, wantTime: 500,
		},
		{
			name: "a group of three, then a pod alone",
			cycles: []event.Event{
				{Cycle: 1, CycleStart: &event.CycleStart{Group: &event.GroupCycle{Lead: 1, Member: 1, Members: 3}}},
				{Cycle: 2, CycleStart: &event.CycleStart{Group: &event.GroupCycle{Lead: 1, Member: 2, Members: 3}}},
				{Cycle: 3, CycleStart: &event.CycleStart{Group: &event.GroupCycle{Lead: 1, Member: 3, Members: 3}}},
				{Cycle: 1, CycleEnd: &event.CycleEnd{Nanos: 1000}},
				{Cycle: 2, CycleEnd: &event.CycleEnd{Nanos: 990}},
				{Cycle: 3, CycleEnd: &event.CycleEnd{Nanos: 980}},
				{Cycle: 4, CycleStart: &event.CycleStart{}}, {Cycle: 4, CycleEnd: &event.CycleEnd{Nanos: 50}},
			},
			wantCycles: 4, wantTime: 1050,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlugins()
			for _, e := range tc.cycles {
				p.Observe(e)
			}
			if _, cycles, total := p.Rows(); cycles != tc.wantCycles || total != tc.wantTime {
				t.Errorf("%d cycles, %s in all; want %d, %s", cycles, total, tc.wantCycles, tc.wantTime)
			}
			if len(p.members) != 0 {
				t.Errorf("members left behind: %v", p.members)
			}
		})
	}
}

// TestBucketOf: the buckets read off the bits are floor(16 log2 nanos),
// as math.Log2 computes it.
func TestBucketOf(t *testing.T) {
	want := func(n int64) int { return min(int(math.Log2(float64(n))*16), len(histogram{}.buckets)-1) }
	check := func(n int64) {
		if got := bucketOf(n); got != want(n) {
			t.Fatalf("bucketOf(%d) = %d, want %d", n, got, want(n))
		}
	}
	for n := int64(1); n <= 1<<20; n++ {
		check(n)
	}
	for n := int64(1 << 20); n > 0 && n < math.MaxInt64/3; n = n*3/2 + 7 {
		check(n)
		check(n - 1)
	}
	if got := bucketOf(0); got != 0 {
		t.Errorf("bucketOf(0) = %d, want 0", got)
	}
	if got := bucketOf(math.MaxInt64); got != len(histogram{}.buckets)-1 {
		t.Errorf("bucketOf(max) = %d, want the last bucket", got)
	}
}
