package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrBusy means a scenario runs already: one at a time.
var ErrBusy = errors.New("a scenario is already running")

// ErrNoRun means no run has that id (runs are kept for the last 20).
var ErrNoRun = errors.New("no such scenario run")

// Run is a scenario run the manager started.
type Run struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	State   State     `json:"state"`
	Step    int       `json:"step"`
	Steps   int       `json:"steps"`
	Started time.Time `json:"started"`
	Report  *Report   `json:"report,omitempty"`
	Error   string    `json:"error,omitempty"`
	cancel  context.CancelFunc
	done    chan struct{}
}

// Manager runs scenarios in the background, one at a time, and keeps the
// last few runs and their reports.
type Manager struct {
	runner *Runner
	base   context.Context

	mu      sync.Mutex
	runs    []*Run
	current *Run
	next    int
}

const keptRuns = 20

// NewManager runs scenarios with runner until ctx ends.
func NewManager(ctx context.Context, runner *Runner) *Manager {
	return &Manager{runner: runner, base: ctx}
}

// Start validates sc and runs it in the background. An invalid scenario
// returns its *Error and runs nothing; ErrBusy if one runs already.
func (m *Manager) Start(ctx context.Context, sc *Scenario) (*Run, error) {
	m.mu.Lock()
	if m.current != nil {
		m.mu.Unlock()
		return nil, ErrBusy
	}
	m.next++
	run := &Run{ID: fmt.Sprintf("run-%d", m.next), Name: sc.Metadata.Name, State: StateRunning, Steps: len(sc.Spec.Steps),
		Started: time.Now(), done: make(chan struct{})}
	m.current = run
	m.mu.Unlock()

	if err := m.runner.Validate(ctx, sc); err != nil {
		m.mu.Lock()
		m.current = nil
		m.mu.Unlock()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(m.base)
	run.cancel = cancel
	m.mu.Lock()
	m.runs = append(m.runs, run)
	if len(m.runs) > keptRuns {
		m.runs = m.runs[1:]
	}
	m.mu.Unlock()
	go func() {
		defer close(run.done)
		defer cancel()
		rep := m.runner.execute(runCtx, run.ID, sc, func(step int) {
			m.mu.Lock()
			run.Step = step
			m.mu.Unlock()
		})
		m.mu.Lock()
		defer m.mu.Unlock()
		m.current = nil
		run.State, run.Report = rep.State, rep
	}()
	return m.snapshot(run), nil
}

// Get returns a run by id.
func (m *Manager) Get(id string) (*Run, error) {
	run := m.find(id)
	if run == nil {
		return nil, ErrNoRun
	}
	return m.snapshot(run), nil
}

// find returns the kept run with that id, or nil.
func (m *Manager) find(id string) *Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Wait blocks until the run ends or ctx does, then returns it.
func (m *Manager) Wait(ctx context.Context, id string) (*Run, error) {
	run := m.find(id)
	if run == nil {
		return nil, ErrNoRun
	}
	select {
	case <-run.done:
	case <-ctx.Done():
	}
	return m.Get(id)
}

// Cancel stops a run; its report says cancelled.
func (m *Manager) Cancel(id string) (*Run, error) {
	run := m.find(id)
	if run == nil {
		return nil, ErrNoRun
	}
	run.cancel()
	<-run.done
	return m.Get(id)
}

// List returns the kept runs, newest first.
func (m *Manager) List() []*Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Run, 0, len(m.runs))
	for i := len(m.runs) - 1; i >= 0; i-- {
		out = append(out, m.snapshotLocked(m.runs[i]))
	}
	return out
}

func (m *Manager) snapshot(r *Run) *Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.snapshotLocked(r)
}

// snapshotLocked copies a run for a reader.
func (m *Manager) snapshotLocked(r *Run) *Run {
	c := *r
	c.cancel, c.done = nil, nil
	return &c
}
