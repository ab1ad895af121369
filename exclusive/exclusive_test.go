package exclusive

import (
	"context"
	"errors"
	"strings"
	"testing"
)

var kinds = []Kind{Reset, Import, Scenario, WhatIf, Comparison}

// TestOneAtATime: whatever runs, every other operation is refused with a
// BusyError that names it; once it ends, the next one runs.
func TestOneAtATime(t *testing.T) {
	for _, running := range kinds {
		for _, wanted := range kinds {
			t.Run(string(wanted)+" during "+string(running), func(t *testing.T) {
				o := New(nil)
				_, end, err := o.Begin(context.Background(), running, "first")
				if err != nil {
					t.Fatal(err)
				}
				_, _, err = o.Begin(context.Background(), wanted, "second")
				var busy *BusyError
				if !errors.As(err, &busy) || busy.Running.Kind != running || busy.Running.Name != "first" || busy.Wanted != wanted {
					t.Fatalf("Begin: %v, want busy with %s", err, running)
				}
				if msg := err.Error(); !strings.Contains(msg, string(running)+" (first)") || !strings.Contains(msg, "no "+string(wanted)) {
					t.Errorf("the refusal %q does not say what runs and what was refused", msg)
				}
				end()
				end() // a second end changes nothing
				_, end2, err := o.Begin(context.Background(), wanted, "second")
				if err != nil {
					t.Fatalf("Begin once the first ended: %v", err)
				}
				if op, ok := o.Current(); !ok || op.Kind != wanted {
					t.Errorf("Current: %+v, %v; want the second", op, ok)
				}
				end2()
				if _, ok := o.Current(); ok {
					t.Error("an operation is still under way after both ended")
				}
			})
		}
	}
}

func TestParts(t *testing.T) {
	t.Run("a part begun within its operation runs, and its end leaves the operation on", func(t *testing.T) {
		o := New(nil)
		ctx, end, err := o.Begin(context.Background(), Import, "")
		if err != nil {
			t.Fatal(err)
		}
		_, endPart, err := o.Begin(ctx, Reset, "")
		if err != nil {
			t.Fatalf("the import's reset: %v", err)
		}
		endPart()
		if op, ok := o.Current(); !ok || op.Kind != Import {
			t.Errorf("after its reset, Current is %+v, %v; want the import", op, ok)
		}
		end()
	})
	t.Run("an ended operation's context carries no right", func(t *testing.T) {
		o := New(nil)
		ctx, end, err := o.Begin(context.Background(), Comparison, "")
		if err != nil {
			t.Fatal(err)
		}
		end()
		_, endOther, err := o.Begin(context.Background(), Reset, "")
		if err != nil {
			t.Fatal(err)
		}
		defer endOther()
		if _, _, err := o.Begin(ctx, Scenario, ""); err == nil {
			t.Error("a run within an ended comparison began during a reset")
		}
	})
	t.Run("another owner's operation is no right here", func(t *testing.T) {
		a, b := New(nil), New(nil)
		ctx, end, err := a.Begin(context.Background(), Comparison, "")
		if err != nil {
			t.Fatal(err)
		}
		defer end()
		_, endB, err := b.Begin(context.Background(), Reset, "")
		if err != nil {
			t.Fatal(err)
		}
		defer endB()
		if _, _, err := b.Begin(ctx, Scenario, ""); err == nil {
			t.Error("a's comparison let a run begin during b's reset")
		}
	})
}

// TestPause: the owner is the one that stops the controllers and kubelets;
// with none to stop, Pause and its resume do nothing.
func TestPause(t *testing.T) {
	t.Run("pauses and resumes what it was given", func(t *testing.T) {
		var paused, resumed int
		o := New(func() func() error {
			paused++
			return func() error { resumed++; return nil }
		})
		resume := o.Pause()
		if paused != 1 || resumed != 0 {
			t.Fatalf("after Pause: paused %d, resumed %d; want 1, 0", paused, resumed)
		}
		if err := resume(); err != nil {
			t.Fatal(err)
		}
		if paused != 1 || resumed != 1 {
			t.Errorf("after resume: paused %d, resumed %d; want 1, 1", paused, resumed)
		}
	})
	t.Run("nothing to pause", func(t *testing.T) {
		if err := New(nil).Pause()(); err != nil {
			t.Errorf("resume = %v, want nil", err)
		}
	})
}
