package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minisched/event"
	"minisched/history"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
)

// Env is what a scenario runs against.
type Env struct {
	Client kubernetes.Interface
	// Cluster creates objects the way the REST API does, and resets.
	Cluster   Cluster
	Scheduler *minisched.Service
	Recorder  *history.Recorder
	// Observer receives the scenario's progress events.
	Observer event.Observer
	// SchedulerName is the profile name a configuration without one gets.
	SchedulerName string
	Limits        Limits
	// OwnedOnly is set on a real cluster minisched may write to: a scenario
	// then updates and deletes only what it created itself (Cluster labels
	// what it creates).
	OwnedOnly bool
	// Checkpoint, when set, keeps the state now as a starting point for a
	// recording and returns its sequence number: a run's recording then
	// starts exactly where the run does.
	Checkpoint func() uint64
}

// Cluster is how a scenario creates objects, and empties the cluster
// before a run that asks for it: the calls the REST API makes
// (cluster.Cluster), so that both get the same defaults, limits and owner
// label.
type Cluster interface {
	// Own marks an object the scenario creates straight through the
	// apiserver as the REST API's are marked.
	Own(metav1.Object)
	// CheckWrite refuses, on a shared cluster, what minisched may not
	// create there (a namespace not allowed, a bound pod, host access).
	CheckWrite(metav1.Object) error
	// Seen says whether the cluster's watch has told the observer of the
	// node or pod at that resourceVersion: a step ends once it has, so that
	// the history holds a step's objects before the next step is told.
	Seen(kind, namespace, name, rv string) bool
	CreateNode(context.Context, *v1.Node) (*v1.Node, error)
	CreatePod(context.Context, *v1.Pod) (*v1.Pod, error)
	CreatePriorityClass(context.Context, *schedulingv1.PriorityClass) (*schedulingv1.PriorityClass, error)
	Reset(context.Context) error
}

// Runner runs scenarios in an Env.
type Runner struct {
	env Env
	// partOf holds, by run id, the operation a run is a part of
	// (StartOptions.PartOf), for its progress events.
	partOf sync.Map
}

// NewRunner returns a runner.
func NewRunner(env Env) *Runner {
	if env.Observer == nil {
		env.Observer = event.Discard
	}
	return &Runner{env: env}
}

// Run validates sc and runs it. The report is complete even when a step
// fails; an invalid scenario returns an *Error and runs nothing. The
// scheduler's configuration and tuning are put back afterwards.
func (r *Runner) Run(ctx context.Context, id string, sc *Scenario) (*Report, error) {
	if err := r.Validate(ctx, sc); err != nil {
		return nil, err
	}
	rep := r.execute(ctx, id, sc, nil)
	r.progress(id, sc, len(sc.Spec.Steps), string(rep.State), rep.Message)
	return rep, nil
}

// execute runs a validated scenario; onStep, if set, learns of each step.
// The caller tells the observers that the run ended, once it may be
// followed by another.
func (r *Runner) execute(ctx context.Context, id string, sc *Scenario, onStep func(int)) *Report {
	rep := &Report{ID: id, Name: sc.Metadata.Name, Title: sc.Metadata.Title, State: StateRunning, Started: time.Now(),
		Steps: make([]StepReport, 0, len(sc.Spec.Steps))}
	tr := newTracker(r.env.Recorder)
	trackCtx, stopTracking := context.WithCancel(ctx)
	trackDone := make(chan struct{})
	go func() { defer close(trackDone); tr.follow(trackCtx) }()

	svc := r.env.Scheduler
	// The example extender outlives the steps: the configuration that
	// calls it is put back first (the defer below runs before this one).
	ext, err := startExample(sc.Spec.ExampleExtender, r.env.Client)
	if err != nil {
		stopTracking()
		<-trackDone
		rep.finish(StateError, "starting the example extender: "+err.Error())
		return rep
	}
	defer ext.stop()
	origCfg, origTuning := svc.Config(), svc.Tuning()
	defer func() {
		if svc.Config() != origCfg || svc.Tuning() != origTuning {
			svc.SetTuning(origTuning)
			_ = svc.Restart(origCfg)
		}
	}()
	if err := r.prepare(sc, ext); err != nil {
		stopTracking()
		<-trackDone
		rep.finish(StateError, "preparing the scheduler: "+err.Error())
		return rep
	}

	if r.env.Checkpoint != nil {
		rep.RecordingSince = r.env.Checkpoint()
	}
	run := &run{r: r, sc: sc, rep: rep, tr: tr, id: id}
	for i := range sc.Spec.Steps {
		if ctx.Err() != nil {
			break
		}
		if onStep != nil {
			onStep(i + 1)
		}
		run.step(ctx, i)
		if rep.errors > 0 {
			// Later steps build on what this one should have done: waiting
			// for them would only hang until their timeouts.
			break
		}
	}
	tr.catchUp()
	stopTracking()
	<-trackDone
	rep.Pods = tr.podReports(ctx, r.env.Client)
	switch {
	case ctx.Err() != nil:
		rep.finish(StateCancelled, "cancelled")
	case rep.errors > 0:
		last := rep.Steps[len(rep.Steps)-1]
		rep.finish(StateError, fmt.Sprintf("step %d could not be carried out, so the run stopped there: %s", last.Index+1, last.Message))
	case rep.failures > 0:
		rep.finish(StateFailed, fmt.Sprintf("%d expectation(s) or wait(s) did not hold", rep.failures))
	default:
		rep.finish(StatePassed, "")
	}
	rep.Incomplete = tr.truncated
	return rep
}

// prepare applies the scenario's seed, queue tuning and configuration, and
// adds the example extender to it when the scenario runs one.
func (r *Runner) prepare(sc *Scenario, ext *example) error {
	svc := r.env.Scheduler
	t := svc.Tuning()
	changed := false
	if sc.Spec.Seed != 0 {
		t.Seed, changed = sc.Spec.Seed, true
	}
	if q := sc.Spec.Queue; q != nil {
		t.MaxInUnschedulable, t.UnschedulableFlushInterval = time.Duration(q.MaxInUnschedulable), time.Duration(q.UnschedulableFlushInterval)
		changed = true
	}
	if sc.Spec.FeatureGates != "" {
		t.FeatureGates, changed = sc.Spec.FeatureGates, true
	}
	cfg := svc.Config()
	if len(sc.Spec.SchedulerConfig) > 0 {
		var err error
		if cfg, err = schedconfig.Load(sc.Spec.SchedulerConfig, r.env.SchedulerName); err != nil {
			return err
		}
		changed = true
	}
	if ext != nil {
		cfg, changed = ext.addTo(cfg), true
	}
	if !changed {
		return nil
	}
	svc.SetTuning(t)
	return svc.Restart(cfg)
}

func (r *Runner) progress(id string, sc *Scenario, step int, phase, msg string) {
	p := &event.ScenarioStep{ID: id, Name: sc.Metadata.Name, Title: sc.Metadata.Title, Step: step, Steps: len(sc.Spec.Steps), Phase: phase, Message: msg}
	if part, ok := r.partOf.Load(id); ok {
		p.PartOf = part.(string)
	}
	if (phase == "running" || phase == "waiting") && step >= 1 && step <= len(sc.Spec.Steps) {
		p.Note = sc.Spec.Steps[step-1].Note
	}
	r.env.Observer.Observe(event.Event{Time: time.Now(), Kind: event.KindScenario, Scenario: p})
}

// run is one scenario under way.
type run struct {
	r   *Runner
	sc  *Scenario
	rep *Report
	tr  *tracker
	id  string
}

func (u *run) step(ctx context.Context, i int) {
	st := &u.sc.Spec.Steps[i]
	sr := StepReport{Index: i, Name: stepName(st), Action: st.action(), Outcome: OutcomeOK}
	u.r.progress(u.id, u.sc, i+1, "running", sr.Name)
	begun := time.Now()
	var err error
	switch sr.Action {
	case "create":
		err = u.create(ctx, i, st.Create)
	case "update":
		err = u.update(ctx, st.Update)
	case "delete":
		err = u.delete(ctx, st.Delete)
	case "schedulerConfig":
		var cfg = u.r.env.Scheduler.Config()
		if cfg, err = schedconfig.Load(st.SchedulerConfig, u.r.env.SchedulerName); err == nil {
			err = u.r.env.Scheduler.Restart(cfg)
		}
	case "scheduler":
		switch st.Scheduler {
		case "pause":
			u.r.env.Scheduler.Pause()
		case "resume":
			u.r.env.Scheduler.Resume()
		case "step":
			u.r.env.Scheduler.Step()
		}
	case "wait":
		if msg := u.wait(ctx, st.Wait); msg != "" {
			sr.Outcome, sr.Message = OutcomeFailed, msg
			u.rep.failures++
		}
	case "expect":
		u.tr.catchUp()
		results := u.expect(ctx, i, st.Expect)
		for _, res := range results {
			if !res.Passed {
				sr.Outcome = OutcomeFailed
				u.rep.failures++
			}
		}
		u.rep.Expectations = append(u.rep.Expectations, results...)
	}
	if err != nil {
		sr.Outcome, sr.Message = OutcomeError, err.Error()
		if apierrors.IsAlreadyExists(err) {
			sr.Message += " (the cluster was not empty: run the scenario after a reset, or with reset=true)"
		}
		u.rep.errors++
	}
	sr.Seconds = time.Since(begun).Seconds()
	u.rep.Steps = append(u.rep.Steps, sr)
}

const defaultWaitTimeout = time.Minute

// stepName is the step's name, or what it does.
func stepName(st *Step) string {
	if st.Name != "" {
		return st.Name
	}
	return describeStep(st)
}

func describeStep(st *Step) string {
	switch st.action() {
	case "create":
		obj, err := decodeObject(st.Create.Manifest, 1)
		if err != nil {
			return "create"
		}
		kind, name := describe(obj)
		if st.Create.Count > 1 {
			return fmt.Sprintf("create %d %ss (%s ...)", st.Create.Count, strings.ToLower(kind), name)
		}
		return fmt.Sprintf("create %s %s", strings.ToLower(kind), name)
	case "update":
		return fmt.Sprintf("update %s %s", strings.ToLower(st.Update.Kind), st.Update.Name)
	case "delete":
		return fmt.Sprintf("delete %s %s", strings.ToLower(st.Delete.Kind), st.Delete.Name)
	case "schedulerConfig":
		return "restart the scheduler with a new configuration"
	case "scheduler":
		return st.Scheduler + " the scheduler"
	case "wait":
		return "wait " + describeWait(st.Wait)
	case "expect":
		return "check expectations"
	}
	return st.action()
}
