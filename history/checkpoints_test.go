package history

import (
	"errors"
	"testing"

	"minisched/event"
)

func due(r *Recorder) bool {
	select {
	case <-r.CheckpointDue():
		return r.CheckpointNeeded()
	default:
		return false
	}
}

func observeCycles(r *Recorder, from, to int64) {
	for id := from; id <= to; id++ {
		for _, e := range cycleEvents(id, "p", 10) {
			r.Observe(e)
		}
	}
}

func TestCheckpoints(t *testing.T) {
	// Each cycle weighs 23 (three events); the cap holds four and a bit.
	r := New(Options{MaxWeight: 100})
	if !due(r) {
		t.Fatal("a new history wants a checkpoint")
	}
	if _, _, err := r.Recording(0); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("Recording with no checkpoint: %v", err)
	}
	r.AddCheckpoint(0, []byte("empty"))
	observeCycles(r, 1, 2) // seq 1-6, weight 46 since the checkpoint
	if due(r) {
		t.Error("a checkpoint is due before half the cap was recorded")
	}
	cp, events, err := r.Recording(0)
	if err != nil || cp.Seq != 0 || len(events) != 6 || events[0].Event.Seq != 1 {
		t.Fatalf("Recording = %v, %d events, %v; want the checkpoint at 0 and events 1-6", cp.Seq, len(events), err)
	}
	observeCycles(r, 3, 3) // weight 69 since the checkpoint
	if !due(r) {
		t.Fatal("no checkpoint due after half the cap")
	}
	r.AddCheckpoint(9, []byte("at 9"))
	r.AddCheckpoint(8, []byte("older than the newest")) // ignored
	observeCycles(r, 4, 5)                              // seq 10-15: the history now starts at seq 3
	cp, events, err = r.Recording(0)
	if err != nil || cp.Seq != 9 || string(cp.Data) != "at 9" || len(events) != 6 || events[0].Event.Seq != 10 {
		t.Fatalf("Recording once seq 1 is gone = %v, %d events, %v; want the checkpoint at 9 and events 10-15", cp.Seq, len(events), err)
	}

	r.AddCheckpoint(11, []byte("at 11"))
	tests := []struct {
		name  string
		since uint64
		want  uint64
	}{
		{"the oldest kept, for the whole history", 0, 9},
		{"the newest at or before since", 11, 11},
		{"since between two", 10, 9},
		{"since beyond the newest", 99, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if cp, _, err := r.Recording(tt.since); err != nil || cp.Seq != tt.want {
				t.Errorf("Recording(%d) starts at %d (%v), want %d", tt.since, cp.Seq, err, tt.want)
			}
		})
	}

	observeCycles(r, 6, 10) // every checkpoint left behind, none given
	if _, _, err := r.Recording(0); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("Recording past every checkpoint: %v, want ErrNoCheckpoint", err)
	}
	r.AddCheckpoint(3, []byte("stale")) // from before the history's start: ignored
	if _, _, err := r.Recording(0); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("a stale checkpoint was kept: %v", err)
	}
}

func TestResetDropsCheckpoints(t *testing.T) {
	r := New(Options{})
	due(r)
	r.AddCheckpoint(0, []byte("empty"))
	observeCycles(r, 1, 1)
	r.Observe(event.Event{Kind: event.KindReset})
	if !due(r) {
		t.Fatal("no checkpoint due after a reset")
	}
	if _, _, err := r.Recording(0); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("Recording after a reset with no new checkpoint: %v", err)
	}
	r.AddCheckpoint(4, []byte("after the reset"))
	if cp, events, err := r.Recording(0); err != nil || cp.Seq != 4 || len(events) != 0 {
		t.Errorf("Recording = %d, %d events, %v", cp.Seq, len(events), err)
	}
}
