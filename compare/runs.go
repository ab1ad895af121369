package compare

// Comparisons as jobs: the last one, under way or over, for GET /compare,
// the dashboard's Compare view and a pod's two cycles. The operations'
// owner (package exclusive) lets one run at a time; Runs only keeps it.

import (
	"context"
	"sync"
	"time"
)

// Comparison is a comparison, under way or over.
type Comparison struct {
	ID int `json:"id"`
	// Kind is scenario (a scenario run under A, then under B), configs
	// (this cluster's workload scheduled again under A, then under B) or
	// reschedule (under the running configuration: before against after).
	Kind     string `json:"kind"`
	Scenario string `json:"scenario,omitempty"`
	A        string `json:"a"`
	B        string `json:"b"`
	// FeatureGates are the gates each side's scheduler set of its own
	// (minisched.SchedulerGates), when any.
	FeatureGates [2]string `json:"featureGates,omitzero"`
	// State is running, done or error.
	State    string     `json:"state"`
	Progress string     `json:"progress,omitempty"`
	Error    string     `json:"error,omitempty"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Report   *Report    `json:"report,omitempty"`
	Notes    []string   `json:"notes,omitempty"`

	sides [2]Side
	done  chan struct{}
}

// Done is closed once the comparison is over.
func (c *Comparison) Done() <-chan struct{} { return c.done }

// Sides are what each configuration left behind, once it is done.
func (c *Comparison) Sides() [2]Side { return c.sides }

// Outcome is what a comparison's run found.
type Outcome struct {
	Report Report
	Sides  [2]Side
	// Notes say what the report cannot: a scenario's expectations that did
	// not hold under one configuration.
	Notes []string
}

// Runs keeps the last comparison.
type Runs struct {
	mu   sync.Mutex
	last *Comparison
	next int
}

// Last returns a copy of the last comparison, nil when none has run.
func (r *Runs) Last() *Comparison {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	c := *r.last
	return &c
}

// Start numbers cmp, keeps it as the last comparison and runs run on a
// goroutine of its own, which calls end once it is over. It returns a copy
// of cmp as it started: the run changes cmp from here on.
func (r *Runs) Start(ctx context.Context, cmp *Comparison, run func(ctx context.Context, progress func(string)) (*Outcome, error), end func()) *Comparison {
	r.mu.Lock()
	r.next++
	cmp.ID, cmp.State, cmp.Started, cmp.done = r.next, "running", time.Now(), make(chan struct{})
	r.last = cmp
	started := *cmp
	r.mu.Unlock()
	progress := func(msg string) {
		r.mu.Lock()
		cmp.Progress = msg
		r.mu.Unlock()
	}
	go func() {
		defer end()
		out, err := run(ctx, progress)
		r.mu.Lock()
		defer r.mu.Unlock()
		now := time.Now()
		cmp.Finished = &now
		if err != nil {
			cmp.State, cmp.Error = "error", err.Error()
		} else {
			out.Report.A, out.Report.B = cmp.A, cmp.B
			cmp.State, cmp.Report, cmp.Notes, cmp.sides = "done", &out.Report, out.Notes, out.Sides
		}
		close(cmp.done)
	}()
	return &started
}
