// Package whatif answers "what would the current configuration do with this
// workload?" on a copy of a cluster: it unbinds every pod the scheduler
// schedules, schedules the whole workload again, and compares the two
// placements. It only ever runs on minisched's own embedded cluster.
package whatif

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/compare"
	"minisched/event"
	"minisched/history"
	"minisched/minisched"
	"minisched/scenario"
)

// Env is the copy a run works on.
type Env struct {
	Client    kubernetes.Interface
	Scheduler *minisched.Service
	Recorder  *history.Recorder
	// Summaries lists the cluster's nodes and pods as the dashboard sees
	// them (cluster.Cluster.Summaries).
	Summaries func() ([]event.NodeSummary, []event.PodSummary)
}

// Options tune a run.
type Options struct {
	// Timeout bounds the wait for the workload to settle. Default 10 minutes.
	Timeout time.Duration
	// Progress, when set, hears what the run is doing.
	Progress func(string)
	// FeatureGates set, for A and for B, the gates the scheduler alone
	// reads (minisched.SchedulerGates), in kube-scheduler's flag form;
	// empty keeps the running scheduler's. Configs and Scenario use them.
	FeatureGates [2]string
}

// parallelism is how many pods are deleted at once.
const parallelism = 16

// A run's result is a compare.Outcome: the report and the two placements
// it compares, which keep each pod's last Filter and Score numbers for a
// closer look.
func result(a, b compare.Side, notes []string) *compare.Outcome {
	return &compare.Outcome{Report: compare.Compare(a, b), Sides: [2]compare.Side{a, b}, Notes: notes}
}

// RescheduleAll unbinds every pod of the scheduler's profiles, schedules
// the whole workload again under the current configuration, and compares:
// A is the placement before, B the one after. The scheduler is held while
// the pods are replaced, so that it sees the whole workload at once, as
// after a cluster-wide restart; it runs afterwards, paused before or not.
func RescheduleAll(ctx context.Context, env Env, opts Options) (*compare.Outcome, error) {
	if st := env.Scheduler.State(); st.State == "stopped" {
		return nil, errors.New("the scheduler is stopped")
	}
	before, err := compare.ReadSide(ctx, env.Client, "before", env.Recorder.LastFiltered)
	if err != nil {
		return nil, err
	}
	after, err := reschedule(ctx, env, opts, "after")
	if err != nil {
		return nil, err
	}
	r := result(before, after, nil)
	opts.say("done: %d pods placed differently", r.Report.Moved)
	return r, nil
}

// Configs schedules the whole workload under configuration A, then again
// under B, from the same start (every pod unbound, created again in one
// order, one seed), and compares the two; the configuration and tuning
// the scheduler had are put back afterwards. names label A and B.
func Configs(ctx context.Context, env Env, a, b *config.KubeSchedulerConfiguration, names [2]string, opts Options) (res *compare.Outcome, err error) {
	if st := env.Scheduler.State(); st.State == "stopped" {
		return nil, errors.New("the scheduler is stopped")
	}
	origCfg, origTuning := env.Scheduler.Config(), env.Scheduler.Tuning()
	defer func() {
		env.Scheduler.SetTuning(origTuning)
		if rerr := env.Scheduler.Restart(origCfg); rerr != nil {
			err = errors.Join(err, fmt.Errorf("putting the configuration back: %w", rerr))
		}
	}()
	// Ties between nodes break alike under both only with a fixed seed.
	t := origTuning
	if t.Seed == 0 {
		t.Seed = 1
	}
	var sides [2]compare.Side
	for i, cfg := range []*config.KubeSchedulerConfiguration{a, b} {
		opts.say("scheduling the workload under %s", names[i])
		side := t
		if opts.FeatureGates[i] != "" {
			side.FeatureGates = opts.FeatureGates[i]
		}
		env.Scheduler.SetTuning(side)
		if err := env.Scheduler.Restart(cfg); err != nil {
			return nil, fmt.Errorf("configuration %s: %w", names[i], err)
		}
		if sides[i], err = reschedule(ctx, env, opts, names[i]); err != nil {
			return nil, fmt.Errorf("under %s: %w", names[i], err)
		}
	}
	r := result(sides[0], sides[1], nil)
	opts.say("done: %d pods placed differently", r.Report.Moved)
	return r, nil
}

// Scenarios runs scenarios on the cluster, one at a time
// (scenario.Manager).
type Scenarios interface {
	Start(ctx context.Context, sc *scenario.Scenario, opts scenario.StartOptions) (*scenario.Run, error)
	Wait(ctx context.Context, id string) (*scenario.Run, error)
}

// Scenario runs the scenario data holds under configuration A, then under
// B, each time on an emptied cluster and with one seed, and compares where
// the pods went. A nil configuration leaves the scenario's own, or the
// running one when it has none. Expectations written for one
// configuration may fail under the other: that is a note, not an error.
func Scenario(ctx context.Context, env Env, runs Scenarios, data []byte, configs [2]json.RawMessage, names [2]string, opts Options) (*compare.Outcome, error) {
	var sides [2]compare.Side
	var notes []string
	for i := range configs {
		sc, err := scenario.Parse(data)
		if err != nil {
			return nil, err
		}
		if configs[i] != nil {
			sc.Spec.SchedulerConfig = configs[i]
		}
		if opts.FeatureGates[i] != "" {
			sc.Spec.FeatureGates = opts.FeatureGates[i]
		}
		if sc.Spec.Seed == 0 {
			sc.Spec.Seed = 1 // ties between nodes break alike under both
		}
		opts.say("running %s under %s", sc.Metadata.Name, names[i])
		run, err := runs.Start(ctx, sc, scenario.StartOptions{Reset: true, PartOf: "comparison"})
		if err != nil {
			return nil, fmt.Errorf("under %s: %w", names[i], err)
		}
		if run, err = runs.Wait(ctx, run.ID); err != nil {
			return nil, fmt.Errorf("under %s: %w", names[i], err)
		}
		switch msg := ""; run.State {
		case scenario.StatePassed:
		case scenario.StateFailed:
			if run.Report != nil {
				msg = run.Report.Message
			}
			notes = append(notes, fmt.Sprintf("under %s the scenario failed: %s", names[i], msg))
		default:
			if run.Report != nil {
				msg = run.Report.Message
			}
			return nil, fmt.Errorf("under %s the scenario ended in %s: %s", names[i], run.State, msg)
		}
		if sides[i], err = compare.ReadSide(ctx, env.Client, names[i], env.Recorder.LastFiltered); err != nil {
			return nil, err
		}
	}
	r := result(sides[0], sides[1], notes)
	opts.say("done: %d pods placed differently", r.Report.Moved)
	return r, nil
}

// reschedule unbinds the workload, lets the scheduler place it again, and
// reads the placement it ends in.
func reschedule(ctx context.Context, env Env, opts Options, name string) (compare.Side, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	// The pods of the scheduler's profiles; others are left where they are.
	var names []string
	for _, p := range env.Scheduler.Config().Profiles {
		names = append(names, p.SchedulerName)
	}
	list, err := env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return compare.Side{}, fmt.Errorf("listing the pods to reschedule: %w", err)
	}
	workload := make([]v1.Pod, 0, len(list.Items))
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && slices.Contains(names, p.Spec.SchedulerName) {
			workload = append(workload, p)
		}
	}
	// Created again in the order they first were (by name within one
	// second): the queue breaks ties between pods of one priority by the
	// time they were added, so one order makes two runs comparable.
	sort.SliceStable(workload, func(i, j int) bool {
		a, b := workload[i].CreationTimestamp, workload[j].CreationTimestamp
		return a.Before(&b) || a.Equal(&b) && workload[i].Namespace+"/"+workload[i].Name < workload[j].Namespace+"/"+workload[j].Name
	})

	env.Scheduler.Pause()
	defer env.Scheduler.Resume()
	// Once a pod is deleted it must come back, whatever happens to the
	// caller: neither phase stops at the first error or when ctx ends.
	keep := context.WithoutCancel(ctx)
	opts.say("unbinding %d pods", len(workload))
	deleted, delErr := each(keep, workload, parallelism, func(ctx context.Context, p *v1.Pod) error { return deletePod(ctx, env.Client, p) })
	opts.say("creating %d pods again, unbound", len(deleted))
	// One at a time, so that the scheduler's queue hears of them in order.
	_, createErr := each(keep, deleted, 1, func(ctx context.Context, p *v1.Pod) error {
		_, err := env.Client.CoreV1().Pods(p.Namespace).Create(ctx, unbound(p), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating pod %s/%s again: %w", p.Namespace, p.Name, err)
		}
		return nil
	})
	if err := errors.Join(delErr, createErr); err != nil {
		return compare.Side{}, err
	}
	env.Scheduler.Resume()
	opts.say("scheduling %d pods", len(workload))
	if err := settle(ctx, env, workload, opts.Timeout); err != nil {
		return compare.Side{}, err
	}
	return compare.ReadSide(ctx, env.Client, name, env.Recorder.LastFiltered)
}

func (o Options) say(format string, a ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, a...))
	}
}

// each runs f on every pod, n at a time, and returns the pods it succeeded
// on and what failed (the first few errors).
func each(ctx context.Context, pods []v1.Pod, n int, f func(context.Context, *v1.Pod) error) ([]v1.Pod, error) {
	ok := make([]bool, len(pods))
	var mu sync.Mutex
	var errs []error
	failed := 0
	workqueue.ParallelizeUntil(ctx, n, len(pods), func(i int) {
		err := f(ctx, &pods[i])
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			ok[i] = true
		case len(errs) < 5:
			errs = append(errs, err)
			fallthrough
		default:
			failed++
		}
	})
	var done []v1.Pod
	for i, p := range pods {
		if ok[i] {
			done = append(done, p)
		}
	}
	if failed > len(errs) {
		errs = append(errs, fmt.Errorf("and %d more", failed-len(errs)))
	}
	return done, errors.Join(errs...)
}

// deletePod deletes p at once, and only p: a pod created under its name
// meanwhile is another pod, and stays.
func deletePod(ctx context.Context, client kubernetes.Interface, p *v1.Pod) error {
	zero := int64(0)
	uid := p.UID
	err := client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("unbinding pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// unbound is p as it was asked for: its spec without the node, its labels
// and annotations, nothing the server or the scheduler set.
func unbound(p *v1.Pod) *v1.Pod {
	out := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, Annotations: p.Annotations}, Spec: *p.Spec.DeepCopy()}
	out.Spec.NodeName = ""
	return out
}

// settle waits until every pod of the workload is bound or waits in the
// unschedulable set, and the scheduler has nothing under way.
func settle(ctx context.Context, env Env, workload []v1.Pod, timeout time.Duration) error {
	var last string
	done := func(ctx context.Context) (bool, error) {
		sched := env.Scheduler.Scheduler()
		if sched == nil {
			return false, errors.New("the scheduler stopped")
		}
		counts := sched.Queue().Counts()
		busy := counts[event.ActiveQ] + counts[event.BackoffQ] + counts[event.ErrorBackoffQ] + counts[event.InFlight] + counts[event.PendingGroup] + sched.BindingCycles()
		unschedulable := map[string]bool{}
		for _, e := range sched.Queue().List() {
			if e.Queue == event.Unschedulable {
				unschedulable[e.Pod.Namespace+"/"+e.Pod.Name] = true
			}
		}
		_, pods := env.Summaries()
		bound := map[string]bool{}
		for _, p := range pods {
			if p.NodeName != "" {
				bound[p.Namespace+"/"+p.Name] = true
			}
		}
		waiting := 0
		for _, p := range workload {
			if key := p.Namespace + "/" + p.Name; !bound[key] && !unschedulable[key] {
				waiting++
			}
		}
		last = fmt.Sprintf("%d pods neither bound nor unschedulable; the queue holds %d pods under way", waiting, busy)
		return waiting == 0 && busy == 0, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, done); err != nil {
		return fmt.Errorf("waiting %v for the workload to settle (%s): %w", timeout, last, err)
	}
	return nil
}
