package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"minisched/cluster"
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
	CreateNode(context.Context, *v1.Node) (*v1.Node, error)
	CreatePod(context.Context, *v1.Pod) (*v1.Pod, error)
	CreatePriorityClass(context.Context, *schedulingv1.PriorityClass) (*schedulingv1.PriorityClass, error)
	Reset(context.Context) error
}

// Runner runs scenarios in an Env.
type Runner struct{ env Env }

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
	p := &event.ScenarioStep{ID: id, Name: sc.Metadata.Name, Step: step, Steps: len(sc.Spec.Steps), Phase: phase, Message: msg}
	if phase == "running" && step >= 1 && step <= len(sc.Spec.Steps) {
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
	sr := StepReport{Index: i, Name: st.Name, Action: st.action(), Outcome: OutcomeOK}
	if sr.Name == "" {
		sr.Name = describeStep(st)
	}
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

func (u *run) create(ctx context.Context, i int, c *Create) error {
	count := max(c.Count, 1)
	var written []written
	defer func() { u.awaitScheduler(ctx, written) }()
	for j := 1; j <= count; j++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		obj, err := decodeObject(c.Manifest, j)
		if err != nil {
			return err
		}
		switch o := obj.(type) {
		case *v1.Node:
			var node *v1.Node
			if node, err = u.r.env.Cluster.CreateNode(ctx, o); err == nil {
				written = append(written, wrote("Node", node))
			}
		case *v1.Pod:
			var pod *v1.Pod
			if pod, err = u.createPod(ctx, o); err == nil {
				written = append(written, wrote("Pod", pod))
			}
		case *schedulingv1.PriorityClass:
			_, err = u.r.env.Cluster.CreatePriorityClass(ctx, o)
		default:
			kind, _ := describe(obj)
			u.r.env.Cluster.Own(obj)
			err = resources[kind].create(ctx, u.r.env.Client, obj, metav1.CreateOptions{})
		}
		if err != nil {
			kind, name := describe(obj)
			return fmt.Errorf("creating %s %s: %w", kind, name, err)
		}
		if count >= 100 && j%100 == 0 {
			u.r.progress(u.id, u.sc, i+1, "running", fmt.Sprintf("created %d of %d", j, count))
		}
	}
	return nil
}

// createPod creates a pod, waiting while the apiserver's admission has not
// yet seen a PriorityClass an earlier step created (validation made sure
// the class exists or is created first).
func (u *run) createPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	var created *v1.Pod
	err := cluster.WaitForClass(ctx, func() error {
		var err error
		created, err = u.r.env.Cluster.CreatePod(ctx, pod.DeepCopy())
		return err
	})
	return created, err
}

// written names a node or pod a step wrote, and the resourceVersion the
// write gave it ("" for a delete).
type written struct {
	kind, namespace, name, resourceVersion string
}

func wrote(kind string, obj metav1.Object) written {
	return written{kind, obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion()}
}

// awaitScheduler waits (up to 10s) until the scheduler's informers have
// handled every write of a step, so that the next step never races them: a
// lesson replays the same way every time.
func (u *run) awaitScheduler(ctx context.Context, writes []written) {
	deadline := time.Now().Add(10 * time.Second)
	for _, w := range writes {
		for ctx.Err() == nil && time.Now().Before(deadline) {
			if s := u.r.env.Scheduler.Scheduler(); s != nil && s.Seen(w.kind, w.namespace, w.name, w.resourceVersion) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (u *run) update(ctx context.Context, up *Update) error {
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(up.Patch, &patch); err != nil {
		return err
	}
	status, hasStatus := patch["status"]
	delete(patch, "status")
	rest, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	c := u.r.env.Client.CoreV1()
	ns, name := "", up.Name
	if namespacedKind(up.Kind) {
		ns, name, _ = strings.Cut(podKey(up.Name), "/")
	}
	var last metav1.Object
	patchOne := func(body []byte, subresources ...string) (err error) {
		switch up.Kind {
		case "Node":
			last, err = c.Nodes().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, subresources...)
		case "Pod":
			last, err = c.Pods(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, subresources...)
		case "PriorityClass":
			if len(subresources) > 0 {
				return errors.New("a PriorityClass has no status")
			}
			_, err = u.r.env.Client.SchedulingV1().PriorityClasses().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		default:
			if len(subresources) > 0 {
				return fmt.Errorf("the status of a %s is what its controllers write", up.Kind)
			}
			err = resources[up.Kind].patch(ctx, u.r.env.Client, ns, name, body)
		}
		return err
	}
	if len(patch) > 0 {
		if err := patchOne(rest); err != nil {
			return fmt.Errorf("patching %s %s: %w", up.Kind, up.Name, err)
		}
	}
	if hasStatus {
		body, _ := json.Marshal(map[string]json.RawMessage{"status": status})
		if err := patchOne(body, "status"); err != nil {
			return fmt.Errorf("patching the status of %s %s: %w", up.Kind, up.Name, err)
		}
	}
	if last != nil {
		u.awaitScheduler(ctx, []written{wrote(up.Kind, last)})
	}
	return nil
}

func (u *run) delete(ctx context.Context, d *Delete) error {
	zero := int64(0)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	var gone []written
	defer func() { u.awaitScheduler(ctx, gone) }()
	for j := 1; j <= max(d.Count, 1); j++ {
		name := d.Name
		if d.Count > 0 {
			name = expand(d.Name, j)
		}
		var err error
		switch d.Kind {
		case "Node":
			err = u.r.env.Client.CoreV1().Nodes().Delete(ctx, name, opts)
			gone = append(gone, written{kind: d.Kind, name: name})
		case "Pod":
			ns, n, _ := strings.Cut(podKey(name), "/")
			err = u.r.env.Client.CoreV1().Pods(ns).Delete(ctx, n, opts)
			gone = append(gone, written{kind: d.Kind, namespace: ns, name: n})
		case "PriorityClass":
			err = u.r.env.Client.SchedulingV1().PriorityClasses().Delete(ctx, name, opts)
		default:
			ns, n := "", name
			if namespacedKind(d.Kind) {
				ns, n, _ = strings.Cut(podKey(name), "/")
			}
			err = resources[d.Kind].delete(ctx, u.r.env.Client, ns, n)
		}
		if err != nil {
			return fmt.Errorf("deleting %s %s: %w", d.Kind, name, err)
		}
	}
	return nil
}

const defaultWaitTimeout = time.Minute

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
