package minisched

import (
	"context"
	"sync"
)

// Gate lets the scheduling loop run freely, holds it (pause), or lets it take
// exactly one pod at a time (step). It outlives a scheduler restart, so a
// paused scheduler stays paused under a new configuration.
type Gate struct {
	mu     sync.Mutex
	paused bool
	steps  int
	// holds counts the Holds not yet released: the loop waits, whatever
	// the pause, and uses up no step.
	holds int
	// held counts the loops waiting in Acquire.
	held     int
	changed  chan struct{}
	onChange func(paused bool, steps int)
}

// NewGate returns a gate, paused or not. onChange, if set, is called after
// every change, outside the gate's lock.
func NewGate(paused bool, onChange func(paused bool, steps int)) *Gate {
	return &Gate{paused: paused, changed: make(chan struct{}), onChange: onChange}
}

// maxSteps bounds the steps a client can queue up while paused.
const maxSteps = 1000

// Pause stops the loop before its next pod.
func (g *Gate) Pause() { g.update(func() { g.paused, g.steps = true, 0 }) }

// Resume lets the loop run freely.
func (g *Gate) Resume() { g.update(func() { g.paused, g.steps = false, 0 }) }

// Step pauses the loop if it runs, and lets one more pod through.
func (g *Gate) Step() {
	g.update(func() {
		g.paused = true
		if g.steps < maxSteps {
			g.steps++
		}
	})
}

// Hold stops the loop before its next pod until release is called, without
// touching the pause a person chose: a reset holds it while it deletes the
// pods, so that none is tried again on its way out. release may be called
// more than once.
func (g *Gate) Hold() (release func()) {
	g.update(func() { g.holds++ })
	var once sync.Once
	return func() { once.Do(func() { g.update(func() { g.holds-- }) }) }
}

// Held says whether a Hold is in force.
func (g *Gate) Held() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holds > 0
}

// State reports whether the gate is paused and how many steps are granted.
func (g *Gate) State() (paused bool, steps int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paused, g.steps
}

// Holding says whether a loop waits in Acquire: it has a pod to take and
// the gate holds it back.
func (g *Gate) Holding() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held > 0
}

func (g *Gate) update(f func()) {
	g.mu.Lock()
	f()
	close(g.changed)
	g.changed = make(chan struct{})
	paused, steps := g.paused, g.steps
	g.mu.Unlock()
	if g.onChange != nil {
		g.onChange(paused, steps)
	}
}

// Acquire blocks while the gate is paused with no step granted, and uses up
// a step when it passes on one.
func (g *Gate) Acquire(ctx context.Context) error {
	for {
		g.mu.Lock()
		if !g.paused && g.holds == 0 {
			g.mu.Unlock()
			return nil
		}
		if g.steps > 0 && g.holds == 0 {
			g.steps--
			steps := g.steps
			g.mu.Unlock()
			if g.onChange != nil {
				g.onChange(true, steps)
			}
			return nil
		}
		changed := g.changed
		g.held++
		g.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		g.mu.Lock()
		g.held--
		g.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
