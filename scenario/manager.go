package scenario

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"minisched/exclusive"
)

// ErrNoRun means no run has that id (runs are kept for the last 20).
var ErrNoRun = errors.New("no such scenario run")

// ErrClosed means the manager was closed: it starts no more runs.
var ErrClosed = errors.New("scenarios are closed: minisched is shutting down")

// ErrNotPaced refuses Next for a run that does not wait for it.
var ErrNotPaced = errors.New("the run is not paced, or is over")

// Run is a scenario run the manager started. The manager hands out copies;
// a Report, once set, is not changed any more.
type Run struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	State   State     `json:"state"`
	Step    int       `json:"step"`
	Steps   int       `json:"steps"`
	Started time.Time `json:"started"`
	// Paced says the run waits before each step (StartOptions.Pace);
	// Waiting that it waits now, before step Step, for Next or its pause.
	Paced   bool `json:"paced,omitempty"`
	Waiting bool `json:"waiting,omitempty"`
	// PartOf is StartOptions.PartOf.
	PartOf string  `json:"partOf,omitempty"`
	Report *Report `json:"report,omitempty"`
	Error  string  `json:"error,omitempty"`
	cancel context.CancelFunc
	done   chan struct{}
	// next lets a paced run take its next step; one Next may wait in it.
	next chan struct{}
}

// Manager runs scenarios in the background and keeps the last few runs
// and their reports. A run, and a reset, is an operation of its owner: one
// at a time, with the imports and what-ifs of the same cluster.
type Manager struct {
	runner *Runner
	owner  *exclusive.Owner
	// base is the runs' context; Close cancels it.
	base      context.Context
	cancelAll context.CancelFunc
	// running counts the runs' goroutines, for Close to wait for.
	running sync.WaitGroup

	mu     sync.Mutex
	runs   []*Run
	next   int
	closed bool
	// keep, when set, saves the kept runs whenever one starts, takes a
	// step or ends (Keep).
	keep func([]*Run)
}

// StartOptions say how to start a run.
type StartOptions struct {
	// Reset empties the cluster before the first step, as part of the run:
	// a lesson then runs the same whatever was there before.
	Reset bool
	// PartOf names the operation the run is a part of ("comparison"): its
	// events say so, and the run's list shows it.
	PartOf string
	// Pace, when Paced, makes the run wait before each step, its note
	// shown, until Next is called or, when Pause is set, Pause has passed:
	// a class watches a lesson step by step. The headless runner runs at
	// once.
	Pace Pace
}

// Pace is how a run goes from one step to the next.
type Pace struct {
	Paced bool
	// Pause, for a paced run, takes the next step by itself after this
	// long; zero waits for Next.
	Pause time.Duration
}

// MaxPause bounds a paced run's pause between steps.
const MaxPause = 10 * time.Minute

const keptRuns = 20

// NewManager runs scenarios with runner until ctx ends or Close, as
// operations of owner.
func NewManager(ctx context.Context, runner *Runner, owner *exclusive.Owner) *Manager {
	base, cancel := context.WithCancel(ctx)
	return &Manager{runner: runner, owner: owner, base: base, cancelAll: cancel}
}

// Keep restores the runs an earlier process kept, and saves the kept
// runs with save from now on, so that the list of runs outlives a crash. A
// run that was under way when the process stopped ends in error, at the
// step it had reached. Call it before the first Start.
func (m *Manager) Keep(previous []*Run, save func([]*Run)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range previous {
		if r.State == StateRunning {
			r.State, r.Waiting = StateError, false
			r.Error = fmt.Sprintf("minisched stopped during the run, at step %d of %d", r.Step, r.Steps)
		}
		var n int
		if _, err := fmt.Sscanf(r.ID, "run-%d", &n); err == nil && n > m.next {
			m.next = n
		}
	}
	m.runs = append(previous[max(0, len(previous)-keptRuns):], m.runs...)
	m.keep = save
}

// saveLocked hands the kept runs to Keep's save.
func (m *Manager) saveLocked() {
	if m.keep == nil {
		return
	}
	out := make([]*Run, len(m.runs))
	for i, r := range m.runs {
		out[i] = m.snapshotLocked(r)
	}
	m.keep(out)
}

// Close cancels the run under way, if any, and waits until its goroutine
// is over, the scheduler's configuration put back included: call it before
// stopping the scheduler, or that deferred restart would start the
// scheduler again after Stop. Start returns ErrClosed afterwards. It is safe
// to call more than once.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancelAll()
	m.running.Wait()
}

// Start validates sc and runs it in the background. An invalid scenario
// returns its *Error and runs nothing; an *exclusive.BusyError while
// another operation is under way (begun within one's context, it is a part
// of it, as a comparison's runs are).
func (m *Manager) Start(ctx context.Context, sc *Scenario, opts StartOptions) (*Run, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	m.next++
	run := &Run{ID: fmt.Sprintf("run-%d", m.next), Name: sc.Metadata.Name, State: StateRunning, Steps: len(sc.Spec.Steps),
		Started: time.Now(), Paced: opts.Pace.Paced, PartOf: opts.PartOf, done: make(chan struct{}), next: make(chan struct{}, 1)}
	m.mu.Unlock()
	_, end, err := m.owner.Begin(ctx, exclusive.Scenario, run.ID+" of "+sc.Metadata.Name)
	if err != nil {
		return nil, err
	}
	if err := m.validate(ctx, sc, opts.Reset); err != nil {
		end()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(m.base)
	run.cancel = cancel
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		cancel()
		end()
		return nil, ErrClosed
	}
	m.runs = append(m.runs, run)
	if len(m.runs) > keptRuns {
		m.runs = m.runs[1:]
	}
	m.running.Add(1)
	m.saveLocked()
	m.mu.Unlock()
	if opts.PartOf != "" {
		m.runner.partOf.Store(run.ID, opts.PartOf)
	}
	go func() {
		defer m.running.Done()
		defer close(run.done)
		defer cancel()
		defer m.runner.partOf.Delete(run.ID)
		rep, step := m.execute(runCtx, run, sc, opts)
		end()
		m.mu.Lock()
		run.State, run.Report = rep.State, rep
		m.saveLocked()
		m.mu.Unlock()
		// Told only now: whoever sees the run end may reset or start
		// another at once, and must not be refused as busy.
		m.notify(run.ID, sc, step, rep)
	}()
	return m.snapshot(run), nil
}

// validate checks sc; a panic on the way (a bug some input reaches) refuses
// the scenario instead of failing the request.
func (m *Manager) validate(ctx context.Context, sc *Scenario, afterReset bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			klog.ErrorS(nil, "Checking a scenario panicked", "scenario", sc.Metadata.Name, "panic", p, "stack", string(debug.Stack()))
			err = &Error{Msg: fmt.Sprintf("the scenario could not be checked: %v", p)}
		}
	}()
	return m.runner.validate(ctx, sc, afterReset)
}

// execute runs sc, and returns its report and the step it ended at. A
// panic in the run (a bug some input reaches: a scenario runs what a user
// wrote) ends the run in error with the panic's message, instead of taking
// the whole process down; the runner's deferred work, the scheduler's
// configuration put back, has run by then.
func (m *Manager) execute(ctx context.Context, run *Run, sc *Scenario, opts StartOptions) (rep *Report, step int) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		m.mu.Lock()
		step = run.Step
		m.mu.Unlock()
		klog.ErrorS(nil, "Scenario run panicked", "run", run.ID, "scenario", sc.Metadata.Name, "step", step, "panic", p, "stack", string(debug.Stack()))
		rep = failedReport(run, sc)
		msg := fmt.Sprintf("the run crashed at step %d: %v", step, p)
		if step == 0 {
			msg = fmt.Sprintf("the run crashed before its first step: %v", p)
		}
		rep.finish(StateError, msg)
	}()
	if opts.Reset {
		m.runner.progress(run.ID, sc, 0, "resetting", "emptying the cluster first (a reset; the scheduler is held meanwhile)")
		if err := m.runner.env.Cluster.Reset(context.WithoutCancel(ctx)); err != nil {
			rep = failedReport(run, sc)
			rep.finish(StateError, "resetting the cluster before the first step: "+err.Error())
			return rep, 0
		}
	}
	return m.runner.execute(ctx, run.ID, sc, func(step int) {
		m.mu.Lock()
		run.Step = step
		m.saveLocked()
		m.mu.Unlock()
		if opts.Pace.Paced {
			m.await(ctx, run, sc, step, opts.Pace.Pause)
		}
	}), len(sc.Spec.Steps)
}

// await holds a paced run before step (counted from 1), its note shown,
// until Next, its pause, or the end of ctx.
func (m *Manager) await(ctx context.Context, run *Run, sc *Scenario, step int, pause time.Duration) {
	m.mu.Lock()
	run.Waiting = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		run.Waiting = false
		m.mu.Unlock()
	}()
	m.runner.progress(run.ID, sc, step, "waiting", "next: "+stepName(&sc.Spec.Steps[step-1]))
	var timer <-chan time.Time
	if pause > 0 {
		t := time.NewTimer(pause)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-run.next:
	case <-timer:
	case <-ctx.Done():
	}
}

// Next lets a paced run take its next step. ErrNotPaced: the run is not
// paced, or is over.
func (m *Manager) Next(id string) (*Run, error) {
	run := m.find(id)
	if run == nil {
		return nil, ErrNoRun
	}
	m.mu.Lock()
	over := run.State != StateRunning
	m.mu.Unlock()
	if !run.Paced || over {
		return nil, ErrNotPaced
	}
	select {
	case run.next <- struct{}{}:
	default: // one Next is waiting already
	}
	return m.Get(id)
}

// failedReport is the report of a run that ended before its steps could
// report anything.
func failedReport(run *Run, sc *Scenario) *Report {
	return &Report{ID: run.ID, Name: sc.Metadata.Name, Title: sc.Metadata.Title, Started: run.Started,
		Steps: []StepReport{}, Expectations: []ExpectationReport{}, Pods: []PodReport{}}
}

// notify tells the observers that a run ended. It is best effort: the
// observer may be what panicked.
func (m *Manager) notify(id string, sc *Scenario, step int, rep *Report) {
	defer func() {
		if p := recover(); p != nil {
			klog.ErrorS(nil, "Reporting the end of a scenario run panicked", "run", id, "panic", p)
		}
	}()
	m.runner.progress(id, sc, step, string(rep.State), rep.Message)
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
