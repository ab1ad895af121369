package scenario

// The scenario manager: runs, their reports, cancels and the one-at-a-time
// rule, on a real control plane. Over 400 lines: the cases share it.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"minisched/event"
	"minisched/exclusive"
	"minisched/history"
	"minisched/minisched"
)

// progress collects the scenario events a run reports. With hold set, a
// step that starts waits in Observe until the test lets it go, so that the
// test sees the run between its steps.
type progress struct {
	hold chan struct{}

	mu      sync.Mutex
	steps   []event.ScenarioStep
	changed chan struct{}
}

func newProgress(hold bool) *progress {
	p := &progress{changed: make(chan struct{})}
	if hold {
		p.hold = make(chan struct{})
	}
	return p
}

func (p *progress) Observe(e event.Event) {
	if e.Scenario == nil {
		return
	}
	p.mu.Lock()
	p.steps = append(p.steps, *e.Scenario)
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	if p.hold != nil && e.Scenario.Phase == "running" {
		<-p.hold
	}
}

// waitFor waits until a reported step matches.
func (p *progress) waitFor(t *testing.T, what string, match func(event.ScenarioStep) bool) {
	t.Helper()
	guard := time.After(30 * time.Second) // a guard: the events come at once
	for {
		p.mu.Lock()
		changed := p.changed
		for _, s := range p.steps {
			if match(s) {
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
		select {
		case <-changed:
		case <-guard:
			t.Fatalf("no scenario event for %s", what)
		}
	}
}

func (p *progress) saw(phase string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.steps {
		if s.Phase == phase {
			return true
		}
	}
	return false
}

// sawNote says whether a reported run of step had a note.
func (p *progress) sawNote(step int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.steps {
		if s.Step == step && s.Note != "" {
			return true
		}
	}
	return false
}

// testManager returns a manager over a fake cluster and a scheduler that is
// not running: enough for steps that do not wait for scheduling.
func testManager(t *testing.T, env Env) *Manager {
	t.Helper()
	return testManagerOf(t, env, exclusive.New(nil))
}

// testManagerOf is testManager with its operations' owner.
func testManagerOf(t *testing.T, env Env, owner *exclusive.Owner) *Manager {
	t.Helper()
	if env.Client == nil {
		env.Client = fake.NewClientset()
	}
	env.Scheduler = minisched.NewService(minisched.ServiceOptions{Client: env.Client})
	env.Recorder = history.New(history.Options{})
	m := NewManager(context.Background(), NewRunner(env), owner)
	t.Cleanup(m.Close)
	return m
}

func parse(t *testing.T, doc string) *Scenario {
	t.Helper()
	sc, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sc
}

const (
	createsANode = `apiVersion: minisched/v1
kind: Scenario
metadata: {name: creates-a-node}
spec:
  steps:
  - scheduler: pause
  - create: {manifest: {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {}}}}
`
	pausesAndResumes = `apiVersion: minisched/v1
kind: Scenario
metadata: {name: pauses-and-resumes}
spec:
  steps:
  - scheduler: pause
  - scheduler: resume
  - scheduler: pause
`
	waitsLong = `apiVersion: minisched/v1
kind: Scenario
metadata: {name: waits-long}
spec:
  steps:
  - scheduler: pause
  - wait: {duration: 20m}
`
)

// panickyCluster panics on CreateNode, as a node with allocatable but no
// capacity once made the real one do.
type panickyCluster struct{ Cluster }

func (panickyCluster) CheckWrite(metav1.Object) error { return nil }

func (panickyCluster) Seen(string, string, string, string) bool { return true }

func (panickyCluster) CreateNode(context.Context, *v1.Node) (*v1.Node, error) {
	var capacity map[string]int
	capacity["cpu"] = 1
	return nil, nil
}

func TestPanicInAScenarioFailsOnlyThatRun(t *testing.T) {
	tests := []struct {
		name string
		env  func() Env
		// refused says the panic comes while checking the scenario: Start
		// refuses it as invalid. Otherwise the run ends in error.
		refused bool
		want    string
	}{
		{
			name: "a step's CreateNode panics",
			env: func() Env {
				return Env{Cluster: panickyCluster{}}
			},
			want: "the run crashed at step 2: assignment to entry in nil map",
		},
		{
			name: "checking the scenario panics",
			env: func() Env {
				client := fake.NewClientset()
				var once sync.Once
				client.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
					once.Do(func() { panic("listing nodes went wrong") })
					return false, nil, nil
				})
				return Env{Client: client}
			},
			refused: true,
			want:    "the scenario could not be checked: listing nodes went wrong",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManager(t, tt.env())
			ctx := context.Background()
			run, err := m.Start(ctx, parse(t, createsANode), StartOptions{})
			if tt.refused {
				var se *Error
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Start: %v, want an *Error saying %q", err, tt.want)
				}
			} else {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				if run, err = m.Wait(ctx, run.ID); err != nil {
					t.Fatal(err)
				}
				if run.State != StateError || run.Report == nil || run.Report.State != StateError || !strings.Contains(run.Report.Message, tt.want) {
					t.Errorf("run %+v (report %+v), want state error saying %q", run, run.Report, tt.want)
				}
			}

			// The manager goes on: the next scenario runs and passes.
			next, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{})
			if err != nil {
				t.Fatalf("Start after the panic: %v", err)
			}
			if next, err = m.Wait(ctx, next.ID); err != nil || next.State != StatePassed {
				t.Errorf("the next run: %+v, %v; want passed", next, err)
			}
		})
	}
}

func TestRunsReadBackAreCopies(t *testing.T) {
	steps := newProgress(true)
	m := testManager(t, Env{Observer: steps})
	ctx := context.Background()
	run, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps.waitFor(t, "step 1", func(s event.ScenarioStep) bool { return s.Step == 1 && s.Phase == "running" })
	got, err := m.Get(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	listed := m.List()
	if got.Step != 1 || got.State != StateRunning || len(listed) != 1 || listed[0].Step != 1 {
		t.Fatalf("at step 1: Get %+v, List %+v", got, listed)
	}
	want := *got

	// The run goes on to its end; what was read before stays as it was.
	for range 3 {
		steps.hold <- struct{}{}
	}
	final, err := m.Wait(ctx, run.ID)
	if err != nil || final.State != StatePassed || final.Report == nil {
		t.Fatalf("the run: %+v, %v; want passed with a report", final, err)
	}
	if got.Step != want.Step || got.State != want.State || got.Report != want.Report || listed[0].Step != 1 || listed[0].State != StateRunning || listed[0].Report != nil || run.State != StateRunning {
		t.Errorf("runs read earlier changed as the run went on: Get %+v, List %+v, Start %+v", got, listed[0], run)
	}
}

// A pod's story that a step read does not change under it while the
// tracker follows the history.
func TestTrackerHandsOutCopies(t *testing.T) {
	rec := history.New(history.Options{})
	tr := newTracker(rec)
	pod := &event.PodRef{Namespace: "default", Name: "p"}
	at := time.Now()
	observe := func(e event.Event) {
		at = at.Add(time.Second)
		e.Time, e.Pod = at, pod
		rec.Observe(e)
	}
	observe(event.Event{Kind: event.KindQueue, Queue: &event.QueueMove{Action: event.ActionAdd, To: event.ActiveQ}})
	observe(event.Event{Kind: event.KindCycleStart, CycleStart: &event.CycleStart{Attempt: 1}})
	tr.catchUp()
	got := tr.pod("default/p")
	if got == nil || got.attempts != 1 {
		t.Fatalf("story after one attempt: %+v", got)
	}

	observe(event.Event{Kind: event.KindQueue, Queue: &event.QueueMove{Action: event.ActionMove, From: event.Unschedulable, To: event.ActiveQ, Event: "NodeAdd"}})
	observe(event.Event{Kind: event.KindCycleStart, CycleStart: &event.CycleStart{Attempt: 2}})
	tr.catchUp()
	if got.attempts != 1 || len(got.movedBy) != 0 || got.seconds[string(event.ActiveQ)] != 0 {
		t.Errorf("a story read earlier changed: attempts %d, moved by %v, seconds %v", got.attempts, got.movedBy, got.seconds)
	}
	if now := tr.pod("default/p"); now.attempts != 2 || len(now.movedBy) != 1 {
		t.Errorf("story now: attempts %d, moved by %v; want 2 and NodeAdd", now.attempts, now.movedBy)
	}
}

func TestCloseWaitsForTheRun(t *testing.T) {
	steps := newProgress(false)
	m := testManager(t, Env{Observer: steps})
	ctx := context.Background()
	run, err := m.Start(ctx, parse(t, waitsLong), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps.waitFor(t, "the long wait", func(s event.ScenarioStep) bool { return s.Step == 2 && s.Phase == "running" })

	m.Close()
	// The run's goroutine is over: it reported its end before Close
	// returned, and its report says cancelled.
	if !steps.saw(string(StateCancelled)) {
		t.Error("Close returned before the run reported its end")
	}
	if got, err := m.Get(run.ID); err != nil || got.State != StateCancelled || got.Report == nil {
		t.Errorf("after Close: %+v, %v; want cancelled with a report", got, err)
	}
	if _, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	m.Close() // a second Close is fine
}

// blockingReset is a cluster whose Reset waits until the test lets it
// finish.
type blockingReset struct {
	Cluster
	started, release chan struct{}
}

func newBlockingReset() *blockingReset {
	return &blockingReset{started: make(chan struct{}, 1), release: make(chan struct{})}
}

func (b *blockingReset) Reset(ctx context.Context) error {
	b.started <- struct{}{}
	<-b.release
	return nil
}

// busyWith says err refuses an operation for one of kind under way.
func busyWith(err error, kind exclusive.Kind) bool {
	var busy *exclusive.BusyError
	return errors.As(err, &busy) && busy.Running.Kind == kind
}

func TestResetExcludesRuns(t *testing.T) {
	t.Run("no run starts during a reset", func(t *testing.T) {
		owner := exclusive.New(nil)
		m := testManagerOf(t, Env{Cluster: newBlockingReset()}, owner)
		_, end, err := owner.Begin(context.Background(), exclusive.Reset, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Start(context.Background(), parse(t, pausesAndResumes), StartOptions{}); !busyWith(err, exclusive.Reset) {
			t.Errorf("Start during a reset: %v, want busy with the reset", err)
		}
		end()
		run, err := m.Start(context.Background(), parse(t, pausesAndResumes), StartOptions{})
		if err != nil {
			t.Fatalf("Start after the reset: %v", err)
		}
		if run, err = m.Wait(context.Background(), run.ID); err != nil || run.State != StatePassed {
			t.Errorf("the run after the reset: %+v, %v", run, err)
		}
	})
	t.Run("no reset during a run, and one once it is over", func(t *testing.T) {
		owner := exclusive.New(nil)
		steps := newProgress(false)
		m := testManagerOf(t, Env{Cluster: newBlockingReset(), Observer: steps}, owner)
		run, err := m.Start(context.Background(), parse(t, waitsLong), StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		steps.waitFor(t, "the long wait", func(s event.ScenarioStep) bool { return s.Step == 2 && s.Phase == "running" })
		if _, _, err := owner.Begin(context.Background(), exclusive.Reset, ""); !busyWith(err, exclusive.Scenario) {
			t.Errorf("a reset during a run: %v, want busy with the run", err)
		}
		if _, err := m.Cancel(run.ID); err != nil {
			t.Fatal(err)
		}
		_, end, err := owner.Begin(context.Background(), exclusive.Reset, "")
		if err != nil {
			t.Errorf("a reset after the run: %v", err)
		} else {
			end()
		}
	})
	t.Run("a run begun within another operation is a part of it", func(t *testing.T) {
		owner := exclusive.New(nil)
		m := testManagerOf(t, Env{Cluster: newBlockingReset()}, owner)
		ctx, end, err := owner.Begin(context.Background(), exclusive.Comparison, "A against B")
		if err != nil {
			t.Fatal(err)
		}
		defer end()
		run, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{})
		if err != nil {
			t.Fatalf("a comparison's run: %v", err)
		}
		if run, err = m.Wait(context.Background(), run.ID); err != nil || run.State != StatePassed {
			t.Errorf("the comparison's run: %+v, %v", run, err)
		}
		if op, ok := owner.Current(); !ok || op.Kind != exclusive.Comparison {
			t.Errorf("after its run, the comparison is %+v, %v; want it still under way", op, ok)
		}
	})
	t.Run("a run that asks for it resets first, then runs its steps", func(t *testing.T) {
		cl := newBlockingReset()
		steps := newProgress(false)
		m := testManager(t, Env{Cluster: cl, Observer: steps})
		run, err := m.Start(context.Background(), parse(t, pausesAndResumes), StartOptions{Reset: true})
		if err != nil {
			t.Fatal(err)
		}
		<-cl.started
		if steps.saw("running") {
			t.Error("a step ran before the reset was over")
		}
		close(cl.release)
		if run, err = m.Wait(context.Background(), run.ID); err != nil || run.State != StatePassed {
			t.Errorf("the run: %+v, %v", run, err)
		}
	})
}

// resetOnEnd resets the cluster as soon as it is told a run ended, as a
// person does who sees "passed" and clicks Reset.
type resetOnEnd struct {
	owner *exclusive.Owner
	err   chan error
}

func (r *resetOnEnd) Observe(e event.Event) {
	if e.Scenario != nil && e.Scenario.Phase != "running" {
		_, end, err := r.owner.Begin(context.Background(), exclusive.Reset, "")
		if err == nil {
			end()
		}
		r.err <- err
	}
}

// A run's end is told once the manager is free, so that a reset is not
// refused as busy: CI once saw a lesson's "passed" followed by a 409 on
// import.
func TestEndIsToldOnceTheNextMayStart(t *testing.T) {
	cl := newBlockingReset()
	close(cl.release)
	ends := &resetOnEnd{owner: exclusive.New(nil), err: make(chan error, 1)}
	m := testManagerOf(t, Env{Cluster: cl, Observer: ends}, ends.owner)
	if _, err := m.Start(context.Background(), parse(t, pausesAndResumes), StartOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-ends.err; err != nil {
		t.Errorf("a reset as soon as the run was told to end: %v", err)
	}
}

// The banner shows the running step's note: its progress carries it.
func TestProgressCarriesTheNote(t *testing.T) {
	steps := newProgress(false)
	m := testManager(t, Env{Observer: steps})
	sc := parse(t, strings.Replace(waitsLong, "  - wait: {duration: 20m}", "  - wait: {duration: 20m}\n    note: Watch the queue board.", 1))
	if _, err := m.Start(context.Background(), sc, StartOptions{}); err != nil {
		t.Fatal(err)
	}
	steps.waitFor(t, "the note of step 2", func(s event.ScenarioStep) bool {
		return s.Step == 2 && s.Phase == "running" && s.Note == "Watch the queue board."
	})
	if steps.sawNote(1) {
		t.Error("step 1, which has no note, reported one")
	}
}

// A paced run waits before each step, the step's note shown, until Next;
// with a pause it goes on by itself (issue 37, 1).
func TestPacedRun(t *testing.T) {
	ctx := context.Background()
	waiting := func(step int) func(event.ScenarioStep) bool {
		return func(s event.ScenarioStep) bool { return s.Step == step && s.Phase == "waiting" }
	}
	t.Run("one step per Next, the cluster as the steps before left it", func(t *testing.T) {
		steps := newProgress(false)
		m := testManager(t, Env{Observer: steps})
		run, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{Pace: Pace{Paced: true}})
		if err != nil {
			t.Fatal(err)
		}
		ran := func(step int) bool {
			steps.mu.Lock()
			defer steps.mu.Unlock()
			for _, s := range steps.steps {
				if s.Step == step && s.Phase == "running" {
					return true
				}
			}
			return false
		}
		steps.waitFor(t, "waiting before step 1", waiting(1))
		if got, _ := m.Get(run.ID); !got.Paced || !got.Waiting || got.Step != 1 || ran(1) {
			t.Fatalf("before step 1: %+v, ran %v; want waiting, step 1 not run", got, ran(1))
		}
		if _, err := m.Next(run.ID); err != nil {
			t.Fatal(err)
		}
		steps.waitFor(t, "waiting before step 2", waiting(2))
		if !ran(1) || ran(2) {
			t.Errorf("before step 2: step 1 ran %v, step 2 ran %v; want step 1 only", ran(1), ran(2))
		}
		if _, err := m.Next(run.ID); err != nil {
			t.Fatal(err)
		}
		steps.waitFor(t, "waiting before step 3", waiting(3))
		if _, err := m.Next(run.ID); err != nil {
			t.Fatal(err)
		}
		if final, err := m.Wait(ctx, run.ID); err != nil || final.State != StatePassed || final.Waiting {
			t.Fatalf("the run: %+v, %v; want passed", final, err)
		}
		if _, err := m.Next(run.ID); !errors.Is(err, ErrNotPaced) {
			t.Errorf("Next after the end: %v, want ErrNotPaced", err)
		}
	})
	t.Run("a pause takes the steps by itself", func(t *testing.T) {
		m := testManager(t, Env{})
		run, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{Pace: Pace{Paced: true, Pause: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		if final, err := m.Wait(ctx, run.ID); err != nil || final.State != StatePassed {
			t.Fatalf("the run: %+v, %v; want passed", final, err)
		}
	})
	t.Run("a run that is not paced takes no Next; a cancel ends a waiting one", func(t *testing.T) {
		steps := newProgress(false)
		m := testManager(t, Env{Observer: steps})
		if _, err := m.Next("run-99"); !errors.Is(err, ErrNoRun) {
			t.Errorf("Next of no run: %v, want ErrNoRun", err)
		}
		run, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{Pace: Pace{Paced: true}})
		if err != nil {
			t.Fatal(err)
		}
		steps.waitFor(t, "waiting before step 1", waiting(1))
		if got, err := m.Cancel(run.ID); err != nil || got.State != StateCancelled {
			t.Errorf("cancelled while waiting: %+v, %v", got, err)
		}
		plain, err := m.Start(ctx, parse(t, pausesAndResumes), StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Next(plain.ID); err != nil && !errors.Is(err, ErrNotPaced) {
			t.Errorf("Next of a run that is not paced: %v, want ErrNotPaced", err)
		} else if err == nil {
			t.Errorf("Next of a run that is not paced succeeded")
		}
	})
}
