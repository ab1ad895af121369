// Package exclusive owns the operations that act on the whole cluster: a
// reset, an import, a scenario run, a what-if and a comparison. The rule is
// one: one of them at a time. Two would undo each other (a reset halfway
// through a lesson, a what-if unbinding the pods a scenario waits for), so
// the second is refused with a *BusyError that names the first.
//
// Reads, and the REST API's single-object writes (a node added during a
// lesson), are not operations: they go on at any time.
//
// An operation may run others as its parts: an import with replace resets
// the cluster first, a comparison of a scenario runs it twice. Begin takes a
// context, and a part begun within its operation's context runs.
//
// The controllers and kubelets act on the whole cluster too. An operation
// that empties or fills the cluster stops them while it does (Pause), so
// that they neither recreate what a reset deletes nor act on a copy before
// all of it is there; the owner is the one place that stops them.
package exclusive

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Kind names an operation.
type Kind string

// The operations on the whole cluster.
const (
	Reset      Kind = "reset"
	Import     Kind = "import"
	Scenario   Kind = "scenario run"
	WhatIf     Kind = "what-if"
	Comparison Kind = "comparison"
)

// Op is an operation under way.
type Op struct {
	Kind Kind `json:"kind"`
	// Name says which one, when there can be several: a scenario run's id
	// and name, a comparison's sides.
	Name    string    `json:"name,omitempty"`
	Started time.Time `json:"started"`
}

func (op Op) String() string {
	s := "a " + string(op.Kind)
	if op.Kind == Import {
		s = "an import"
	}
	if op.Name != "" {
		s += " (" + op.Name + ")"
	}
	return s
}

// BusyError refuses an operation while another is under way.
type BusyError struct {
	// Running is the operation under way; Wanted the one refused.
	Running Op
	Wanted  Kind
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is under way since %s: no %s until it ends", e.Running, e.Running.Started.Format(time.TimeOnly), e.Wanted)
}

// Owner lets one operation run at a time.
type Owner struct {
	mu      sync.Mutex
	current *Op
	pause   PauseFunc
}

// PauseFunc stops what acts on the cluster beside the scheduler (the
// controllers, the kubelets) and returns what starts it again.
type PauseFunc func() (resume func() error)

// New returns an owner with nothing under way; pause stops the controllers
// and kubelets (nil: none run).
func New(pause PauseFunc) *Owner { return &Owner{pause: pause} }

// Pause stops the controllers and kubelets for an operation under way that
// rewrites the cluster whole, and returns what starts them again; with none,
// resume does nothing. Pauses do not nest: an operation pauses for each of
// its steps in turn (a reset, then a load), never for two at once.
func (o *Owner) Pause() (resume func() error) {
	if o.pause == nil {
		return func() error { return nil }
	}
	return o.pause()
}

type holding struct{}

// Begin starts op, or returns a *BusyError naming the operation under way.
// The context it returns carries op: an operation begun within it is a part
// of op and runs. end says op is over; call it once. A part's end does
// nothing: its operation ends it.
func (o *Owner) Begin(ctx context.Context, kind Kind, name string) (context.Context, func(), error) {
	if held, ok := ctx.Value(holding{}).(*Op); ok && o.holds(held) {
		return ctx, func() {}, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.current != nil {
		return ctx, nil, &BusyError{Running: *o.current, Wanted: kind}
	}
	op := &Op{Kind: kind, Name: name, Started: time.Now()}
	o.current = op
	var once sync.Once
	end := func() {
		once.Do(func() {
			o.mu.Lock()
			if o.current == op {
				o.current = nil
			}
			o.mu.Unlock()
		})
	}
	return context.WithValue(ctx, holding{}, op), end, nil
}

func (o *Owner) holds(op *Op) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.current == op
}

// Current returns the operation under way, if any.
func (o *Owner) Current() (Op, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.current == nil {
		return Op{}, false
	}
	return *o.current, true
}
