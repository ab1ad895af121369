package minisched_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"minisched/minisched"
)

// passes counts the pods the gate lets through before it holds, trying at
// most limit: an Acquire that would block returns at once on a cancelled
// context.
func passes(g *minisched.Gate, limit int) int {
	held, cancel := context.WithCancel(context.Background())
	cancel()
	for n := range limit {
		if err := g.Acquire(held); err != nil {
			return n
		}
	}
	return limit
}

func TestGate(t *testing.T) {
	const free = 5 // a gate that lets this many through does not hold
	var (
		pause  = (*minisched.Gate).Pause
		resume = (*minisched.Gate).Resume
		step   = (*minisched.Gate).Step
	)
	tests := []struct {
		name       string
		paused     bool
		ops        []func(*minisched.Gate)
		wantPaused bool
		wantSteps  int
		wantPasses int
		// wantChanges is what onChange heard, as "paused/steps", the
		// Acquires that used a step included.
		wantChanges []string
	}{
		{name: "a running gate lets every pod through", wantPasses: free},
		{name: "a paused gate holds", paused: true, wantPaused: true, wantPasses: 0},
		{name: "Pause holds a running gate", ops: []func(*minisched.Gate){pause},
			wantPaused: true, wantPasses: 0, wantChanges: []string{"true/0"}},
		{name: "Resume lets a paused gate run", paused: true, ops: []func(*minisched.Gate){resume},
			wantPasses: free, wantChanges: []string{"false/0"}},
		{name: "a step lets one pod through", paused: true, ops: []func(*minisched.Gate){step},
			wantPaused: true, wantSteps: 1, wantPasses: 1, wantChanges: []string{"true/1", "true/0"}},
		{name: "steps add up", paused: true, ops: []func(*minisched.Gate){step, step, step},
			wantPaused: true, wantSteps: 3, wantPasses: 3, wantChanges: []string{"true/1", "true/2", "true/3", "true/2", "true/1", "true/0"}},
		{name: "Step pauses a running gate", ops: []func(*minisched.Gate){step},
			wantPaused: true, wantSteps: 1, wantPasses: 1, wantChanges: []string{"true/1", "true/0"}},
		{name: "Pause drops the steps granted", paused: true, ops: []func(*minisched.Gate){step, step, pause},
			wantPaused: true, wantPasses: 0, wantChanges: []string{"true/1", "true/2", "true/0"}},
		{name: "Resume drops the steps granted", paused: true, ops: []func(*minisched.Gate){step, resume},
			wantPasses: free, wantChanges: []string{"true/1", "false/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var changes []string
			g := minisched.NewGate(tt.paused, func(paused bool, steps int) {
				changes = append(changes, fmt.Sprintf("%v/%d", paused, steps))
			})
			for _, op := range tt.ops {
				op(g)
			}
			if paused, steps := g.State(); paused != tt.wantPaused || steps != tt.wantSteps {
				t.Errorf("State = paused %v, %d steps; want paused %v, %d steps", paused, steps, tt.wantPaused, tt.wantSteps)
			}
			if got := passes(g, free); got != tt.wantPasses {
				t.Errorf("%d pods passed, want %d", got, tt.wantPasses)
			}
			if !slices.Equal(changes, tt.wantChanges) {
				t.Errorf("onChange heard %v, want %v", changes, tt.wantChanges)
			}
		})
	}
}

// Steps queued while paused are capped, so that a client cannot queue up
// an unbounded run.
func TestGateCapsSteps(t *testing.T) {
	g := minisched.NewGate(true, nil)
	for range 2000 {
		g.Step()
	}
	if _, steps := g.State(); steps != 1000 {
		t.Errorf("%d steps granted after 2000 Steps, want the cap of 1000", steps)
	}
}

// A paused Acquire returns on the change that lets it through, whether the
// change comes before or while it waits, and gives up when its context ends.
func TestGateWakesAcquire(t *testing.T) {
	tests := []struct {
		name    string
		release func(*minisched.Gate, context.CancelFunc)
		wantErr error
	}{
		{name: "Step wakes it", release: func(g *minisched.Gate, _ context.CancelFunc) { g.Step() }},
		{name: "Resume wakes it", release: func(g *minisched.Gate, _ context.CancelFunc) { g.Resume() }},
		{name: "its context ends", release: func(_ *minisched.Gate, cancel context.CancelFunc) { cancel() }, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := minisched.NewGate(true, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- g.Acquire(ctx) }()
			holding := func(context.Context) (bool, error) { return g.Holding(), nil }
			if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, time.Minute, true, holding); err != nil {
				t.Fatalf("the gate never said it holds a waiting Acquire: %v", err)
			}
			tt.release(g, cancel)
			select {
			case err := <-done:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Acquire = %v, want %v", err, tt.wantErr)
				}
				if g.Holding() {
					t.Error("the gate still says it holds after Acquire returned")
				}
			case <-time.After(time.Minute): // a guard: the release wakes it at once
				t.Fatal("Acquire did not return")
			}
		})
	}
}

// A hold stops the loop whatever the pause, keeps the steps granted, and
// leaves the pause a person chose as it was.
func TestGateHold(t *testing.T) {
	tests := []struct {
		name       string
		paused     bool
		steps      int
		release    bool
		wantPasses int
		wantPaused bool
	}{
		{name: "a hold stops a running gate, which stays running", wantPasses: 0},
		{name: "released, the gate runs again", release: true, wantPasses: 5},
		{name: "a hold keeps a paused gate's steps", paused: true, steps: 2, wantPasses: 0, wantPaused: true},
		{name: "released, the steps granted go through", paused: true, steps: 2, release: true, wantPasses: 2, wantPaused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := minisched.NewGate(tt.paused, nil)
			for range tt.steps {
				g.Step()
			}
			release := g.Hold()
			if !g.Held() {
				t.Fatal("Held = false after Hold")
			}
			if tt.release {
				release()
				release() // a second release does nothing
			}
			if got := passes(g, 5); got != tt.wantPasses {
				t.Errorf("%d pods passed, want %d", got, tt.wantPasses)
			}
			if paused, _ := g.State(); paused != tt.wantPaused {
				t.Errorf("paused %v, want %v: a hold is not a pause", paused, tt.wantPaused)
			}
			if g.Held() == tt.release {
				t.Errorf("Held = %v after release %v", g.Held(), tt.release)
			}
		})
	}
}
