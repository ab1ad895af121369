// Package eventlog is the event observer that the tests of minisched's
// packages share: it keeps every event, and a test reads them or waits for
// the one it expects.
package eventlog

import (
	"context"
	"sync"

	"minisched/event"
)

// Log is an event.Observer that keeps every event it observes, in order.
// The zero Log is ready to use.
type Log struct {
	mu     sync.Mutex
	events []event.Event
	// changed is closed at the next event, when some Await waits for it.
	changed chan struct{}
}

// Observe keeps e and wakes the Awaits.
func (l *Log) Observe(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Find returns the events that match, in the order they came.
func (l *Log) Find(match func(event.Event) bool) []event.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []event.Event
	for _, e := range l.events {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// Last returns the latest event that matches; false when none does.
func (l *Log) Last(match func(event.Event) bool) (event.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.events) - 1; i >= 0; i-- {
		if match(l.events[i]) {
			return l.events[i], true
		}
	}
	return event.Event{}, false
}

// Await returns the first event that matches, kept already or still to
// come; it gives up when ctx ends.
func (l *Log) Await(ctx context.Context, match func(event.Event) bool) (event.Event, error) {
	seen := 0
	for {
		l.mu.Lock()
		for ; seen < len(l.events); seen++ {
			if e := l.events[seen]; match(e) {
				l.mu.Unlock()
				return e, nil
			}
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return event.Event{}, context.Cause(ctx)
		}
	}
}
