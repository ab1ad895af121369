package schedperf

import (
	"encoding/json"
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
