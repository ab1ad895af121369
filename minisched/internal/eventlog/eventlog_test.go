package eventlog

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"minisched/event"
)

func kind(k event.Kind) func(event.Event) bool {
	return func(e event.Event) bool { return e.Kind == k }
}

func TestLog(t *testing.T) {
	var l Log
	l.Observe(event.Event{Kind: event.KindCycleStart, Cycle: 1})
	l.Observe(event.Event{Kind: event.KindCycleEnd, Cycle: 1})
	l.Observe(event.Event{Kind: event.KindCycleStart, Cycle: 2})
	tests := []struct {
		name      string
		match     func(event.Event) bool
		wantFound []int64
		wantLast  int64
	}{
		{name: "two cycles start", match: kind(event.KindCycleStart), wantFound: []int64{1, 2}, wantLast: 2},
		{name: "one cycle ends", match: kind(event.KindCycleEnd), wantFound: []int64{1}, wantLast: 1},
		{name: "no binding ends", match: kind(event.KindBindingEnd)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found []int64
			for _, e := range l.Find(tt.match) {
				found = append(found, e.Cycle)
			}
			if !slices.Equal(found, tt.wantFound) {
				t.Errorf("Find: cycles %v, want %v", found, tt.wantFound)
			}
			last, ok := l.Last(tt.match)
			if ok != (tt.wantLast != 0) || last.Cycle != tt.wantLast {
				t.Errorf("Last: cycle %d (found %v), want %d", last.Cycle, ok, tt.wantLast)
			}
		})
	}
}

func TestAwait(t *testing.T) {
	t.Run("an event kept already", func(t *testing.T) {
		var l Log
		l.Observe(event.Event{Kind: event.KindCycleEnd, Cycle: 7})
		if e, err := l.Await(context.Background(), kind(event.KindCycleEnd)); err != nil || e.Cycle != 7 {
			t.Errorf("Await = cycle %d, %v; want cycle 7", e.Cycle, err)
		}
	})
	t.Run("an event still to come", func(t *testing.T) {
		var l Log
		got := make(chan event.Event)
		go func() {
			e, _ := l.Await(context.Background(), kind(event.KindCycleEnd))
			got <- e
		}()
		l.Observe(event.Event{Kind: event.KindCycleStart, Cycle: 8})
		l.Observe(event.Event{Kind: event.KindCycleEnd, Cycle: 8})
		if e := <-got; e.Cycle != 8 {
			t.Errorf("Await = cycle %d, want 8", e.Cycle)
		}
	})
	t.Run("an event that never comes", func(t *testing.T) {
		var l Log
		l.Observe(event.Event{Kind: event.KindCycleStart})
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if _, err := l.Await(ctx, kind(event.KindCycleEnd)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Await = %v, want the context's deadline", err)
		}
	})
}
