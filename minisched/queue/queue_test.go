package queue

// The queue's table tests, one per part and transition (Add, Pop, backoff,
// the unschedulable set, hints, gating, flushes, nominations): over 400
// lines because they read in the order queue.go does.

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"

	"minisched/event"
	"minisched/minisched/internal/eventlog"
)

var (
	nodeAdd       = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}
	nodeLabel     = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}
	claimAdd      = fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Add}
	gatesLifted   = fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodSchedulingGatesEliminated}
	labelChange   = []fwk.ClusterEvent{{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodLabel}}
	start         = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fitOnNodeAdd  = map[string][]fwk.ClusterEventWithHint{"Fit": {{Event: nodeAdd}}}
	noHints       = map[string][]fwk.ClusterEventWithHint{}
	rejectedByFit = Failure{Plugins: sets.New("Fit"), Message: "no room"}
)

func pod(name string, priority int32) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{SchedulerName: testProfile, Priority: &priority}}
}

// testProfile is the one profile of the table tests (the differential runs
// two).
const testProfile = "default-scheduler"

func prioritySort(a, b fwk.QueuedEntityInfo) bool {
	return a.GetPriority() > b.GetPriority() || a.GetPriority() == b.GetPriority() && a.GetTimestamp().Before(b.GetTimestamp())
}

// recorder is the package's test observer.
type recorder struct{ eventlog.Log }

// moves returns "from->to(event)" for each queue move of the named pod.
func (r *recorder) moves(name string) []string {
	var out []string
	for _, e := range r.Find(func(e event.Event) bool {
		return e.Kind == event.KindQueue && e.Pod.Name == name && e.Queue.Action != event.ActionUpdate
	}) {
		out = append(out, fmt.Sprintf("%s->%s(%s)", e.Queue.From, e.Queue.To, e.Queue.Event))
	}
	return out
}

func isPop(e event.Event) bool { return e.Kind == event.KindQueue && e.Queue.Action == event.ActionPop }

// preEnqueueRuns counts the PreEnqueue runs for the named pod.
func (r *recorder) preEnqueueRuns(name string) int {
	return len(r.Find(func(e event.Event) bool {
		return e.Kind == event.KindPoint && e.Pod.Name == name && e.Point.Point == "PreEnqueue"
	}))
}

type fixture struct {
	q   *Queue
	clk *testingclock.FakeClock
	rec *recorder
}

func newFixture(t *testing.T, hints map[string][]fwk.ClusterEventWithHint, preEnqueue ...fwk.PreEnqueuePlugin) fixture {
	t.Helper()
	clk := testingclock.NewFakeClock(start)
	rec := &recorder{}
	q := New(Options{Less: prioritySort, Clock: clk, Profiles: map[string]Profile{testProfile: {PreEnqueue: preEnqueue, Hints: hints}}, Observer: rec, Logger: quiet})
	return fixture{q, clk, rec}
}

func (f fixture) where(name string) event.QueueName {
	f.q.mu.RLock()
	defer f.q.mu.RUnlock()
	if pi := f.q.findLocked(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID("uid-" + name)}}); pi != nil {
		return pi.where
	}
	return ""
}

func (f fixture) info(name string) *PodInfo {
	f.q.mu.RLock()
	defer f.q.mu.RUnlock()
	if pi := f.q.findLocked(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID("uid-" + name)}}); pi != nil && pi.where != event.InFlight {
		return pi
	}
	return nil
}

func (f fixture) pop(t *testing.T, want string) *PodInfo {
	t.Helper()
	e, err := f.q.Pop()
	if err != nil {
		t.Fatal(err)
	}
	pi := e.(*PodInfo)
	if pi.Pod.Name != want {
		t.Fatalf("popped %s, want %s", pi.Pod.Name, want)
	}
	return pi
}

// failOnce adds a pod, pops it and hands it back with the failure.
func (f fixture) failOnce(t *testing.T, p *v1.Pod, failure Failure) *PodInfo {
	t.Helper()
	f.q.Add(p)
	pi := f.pop(t, p.Name)
	f.q.AddUnschedulableIfNotPresent(pi, failure)
	return pi
}

func (f fixture) expect(t *testing.T, name string, want event.QueueName) {
	t.Helper()
	if got := f.where(name); got != want {
		t.Fatalf("%s is in %q, want %q; moves %v", name, got, want, f.rec.moves(name))
	}
}

func TestBackoffExpiration(t *testing.T) {
	b := newBackoffQueue(testingclock.NewFakeClock(start), time.Second, 10*time.Second, func(a, b Entity) bool { return false }, true)
	at := start.Add(300 * time.Millisecond)
	tests := []struct {
		name          string
		unschedulable int
		errors        int
		want          time.Time
	}{
		{"a pod that never failed has none", 0, 0, time.Time{}},
		{"first failure: 1s, aligned down to its window", 1, 0, start.Add(time.Second)},
		{"second failure doubles", 2, 0, start.Add(2 * time.Second)},
		{"fourth failure", 4, 0, start.Add(8 * time.Second)},
		{"fifth failure reaches the cap", 5, 0, start.Add(10 * time.Second)},
		{"many failures stay at the cap", 70, 0, start.Add(10 * time.Second)},
		{"errors count on their own", 5, 2, start.Add(2 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pi := &PodInfo{entityState: entityState{Timestamp: at, UnschedulableCount: tt.unschedulable, ConsecutiveErrorsCount: tt.errors}}
			if got := b.expiration(pi); !got.Equal(tt.want) {
				t.Errorf("expiration = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("an initial backoff above the maximum is capped", func(t *testing.T) {
		b := newBackoffQueue(testingclock.NewFakeClock(start), 20*time.Second, 10*time.Second, nil, true)
		if got := b.expiration(&PodInfo{entityState: entityState{Timestamp: start, UnschedulableCount: 1}}); !got.Equal(start.Add(10 * time.Second)) {
			t.Errorf("expiration = %v, want the 10s cap", got)
		}
	})
}

func TestBackingOffUntilTheWindowIsOver(t *testing.T) {
	expiry := start.Add(time.Second)
	tests := []struct {
		name string
		now  time.Time
		want bool
	}{
		{"before the expiry", expiry.Add(-time.Millisecond), true},
		{"at the expiry", expiry, true},
		{"within the expiry's window", expiry.Add(999 * time.Millisecond), true},
		{"once the window is over", expiry.Add(time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackoffQueue(testingclock.NewFakeClock(tt.now), time.Second, 10*time.Second, nil, true)
			if got := b.backingOff(&PodInfo{entityState: entityState{BackoffExpiration: expiry}}); got != tt.want {
				t.Errorf("backingOff = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestActiveQOrder(t *testing.T) {
	f := newFixture(t, noHints)
	f.q.Add(pod("low", 1))
	f.clk.Step(time.Millisecond)
	f.q.Add(pod("high", 100))
	f.clk.Step(time.Millisecond)
	f.q.Add(pod("low-later", 1))
	for _, want := range []string{"high", "low", "low-later"} {
		f.pop(t, want)
	}
}

func TestPop(t *testing.T) {
	t.Run("an empty activeQ gives the head of backoffQ at once", func(t *testing.T) {
		f := newFixture(t, fitOnNodeAdd)
		f.failOnce(t, pod("p", 0), rejectedByFit)
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
		f.expect(t, "p", event.BackoffQ)
		f.pop(t, "p")
		popped, _ := f.rec.Last(isPop)
		if last := popped.Queue; last.From != event.BackoffQ || last.Event != EventPopFromBackoffQ {
			t.Errorf("the pop is reported from %q with %q, want from backoff with PopFromBackoffQ", last.From, last.Event)
		}
	})
	t.Run("activeQ comes first", func(t *testing.T) {
		f := newFixture(t, fitOnNodeAdd)
		f.failOnce(t, pod("backing-off", 100), rejectedByFit)
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
		f.q.Add(pod("active", 0))
		f.pop(t, "active")
	})
	t.Run("the error backoff is never popped early", func(t *testing.T) {
		f := newFixture(t, noHints)
		f.failOnce(t, pod("p", 0), Failure{Error: true})
		f.expect(t, "p", event.ErrorBackoffQ)
		f.q.mu.RLock()
		defer f.q.mu.RUnlock()
		if f.q.readyLocked() {
			t.Fatal("Pop would take a pod from the error backoff")
		}
	})
	t.Run("within a window backoffQ pops by priority", func(t *testing.T) {
		f := newFixture(t, fitOnNodeAdd)
		f.failOnce(t, pod("low", 0), rejectedByFit)
		f.clk.Step(400 * time.Millisecond) // expires later, in the same window
		f.failOnce(t, pod("high", 100), rejectedByFit)
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
		f.pop(t, "high")
		f.pop(t, "low")
	})
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name           string
		failure        Failure
		wantQueue      event.QueueName
		wantPlugins    string
		wantErrors     int
		wantRejections int
	}{
		{"a rejection waits for an event", rejectedByFit, event.Unschedulable, "[Fit]/[]", 0, 1},
		{"an error backs off", Failure{Error: true}, event.ErrorBackoffQ, "[]/[]", 1, 0},
		{"an error drops the plugins it names", Failure{Error: true, Plugins: sets.New("Fit")}, event.ErrorBackoffQ, "[]/[]", 1, 0},
		{"a failure that names no plugin is an error", Failure{Message: "no nodes"}, event.ErrorBackoffQ, "[]/[]", 1, 0},
		{"Pending plugins are rejectors too", Failure{Pending: sets.New("Claims")}, event.Unschedulable, "[]/[Claims]", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fitOnNodeAdd)
			f.failOnce(t, pod("p", 0), tt.failure)
			f.expect(t, "p", tt.wantQueue)
			pi := f.info("p")
			if got := plugins(pi.UnschedulablePlugins, pi.PendingPlugins); got != tt.wantPlugins {
				t.Errorf("plugins %s, want %s", got, tt.wantPlugins)
			}
			if pi.ConsecutiveErrorsCount != tt.wantErrors || pi.UnschedulableCount != tt.wantRejections {
				t.Errorf("errors %d, rejections %d; want %d, %d", pi.ConsecutiveErrorsCount, pi.UnschedulableCount, tt.wantErrors, tt.wantRejections)
			}
		})
	}
	t.Run("a rejection resets the error count", func(t *testing.T) {
		f := newFixture(t, noHints)
		pi := f.failOnce(t, pod("p", 0), Failure{Error: true})
		f.clk.Step(3 * time.Second)
		f.q.FlushBackoffQCompleted()
		f.pop(t, "p")
		f.q.AddUnschedulableIfNotPresent(pi, rejectedByFit)
		if pi.ConsecutiveErrorsCount != 0 || pi.UnschedulableCount != 1 {
			t.Errorf("errors %d, rejections %d; want 0, 1", pi.ConsecutiveErrorsCount, pi.UnschedulableCount)
		}
	})
	t.Run("a binding failure after Done comes back", func(t *testing.T) {
		f := newFixture(t, noHints)
		f.q.Add(pod("p", 0))
		pi := f.pop(t, "p")
		f.q.Done(pi.Pod.UID)
		f.expect(t, "p", "")
		f.q.AddUnschedulableIfNotPresent(pi, Failure{Message: "bind failed"})
		f.expect(t, "p", event.ErrorBackoffQ)
	})
}

func TestQueueingHints(t *testing.T) {
	queueOnLabel := func(_ klog.Logger, _ *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
		if n, ok := newObj.(*v1.Node); ok && n.Labels["ready"] == "yes" {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
	failing := func(klog.Logger, *v1.Pod, any, any) (fwk.QueueingHint, error) {
		return fwk.QueueSkip, fmt.Errorf("broken")
	}
	panicking := func(klog.Logger, *v1.Pod, any, any) (fwk.QueueingHint, error) { panic("boom") }
	hints := map[string][]fwk.ClusterEventWithHint{
		"Labels":   {{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: queueOnLabel}},
		"NoHint":   {{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}}},
		"Broken":   {{Event: nodeAdd, QueueingHintFn: failing}},
		"Panics":   {{Event: nodeAdd, QueueingHintFn: panicking}},
		"PodsOnly": {{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}}},
		"Claims":   {{Event: claimAdd}},
	}
	labelled := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"ready": "yes"}}}
	plain := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	tests := []struct {
		name    string
		failure Failure
		event   fwk.ClusterEvent
		newObj  any
		want    event.QueueName
	}{
		{"hint says Queue", Failure{Plugins: sets.New("Labels")}, nodeAdd, labelled, event.BackoffQ},
		{"hint says QueueSkip", Failure{Plugins: sets.New("Labels")}, nodeAdd, plain, event.Unschedulable},
		{"specific update matches a registered union", Failure{Plugins: sets.New("Labels")}, nodeLabel, labelled, event.BackoffQ},
		{"event not registered by the rejector", Failure{Plugins: sets.New("NoHint")}, nodeLabel, labelled, event.Unschedulable},
		{"no hint function means Queue", Failure{Plugins: sets.New("NoHint")}, nodeAdd, plain, event.BackoffQ},
		{"hint error means Queue", Failure{Plugins: sets.New("Broken")}, nodeAdd, plain, event.BackoffQ},
		{"hint panic means Queue", Failure{Plugins: sets.New("Panics")}, nodeAdd, plain, event.BackoffQ},
		{"Pod registration matches an assigned pod", Failure{Plugins: sets.New("PodsOnly")}, AssignedPodDelete, pod("x", 0), event.BackoffQ},
		{"Pod registration ignores nodes", Failure{Plugins: sets.New("PodsOnly")}, nodeAdd, plain, event.Unschedulable},
		{"a wildcard event queues everything", Failure{Plugins: sets.New("NoHint")}, UnschedulableTimeout, nil, event.BackoffQ},
		{"ForceActivate for another pod does not", Failure{Plugins: sets.New("NoHint")}, ForceActivate, pod("other", 0), event.Unschedulable},
		{"a Pending plugin's Queue skips the backoff", Failure{Pending: sets.New("Claims")}, claimAdd, nil, event.ActiveQ},
		{"a Pending plugin's Queue outranks the others'", Failure{Plugins: sets.New("NoHint", "Claims"), Pending: sets.New("Claims")}, claimAdd, nil, event.ActiveQ},
		{"an Unschedulable plugin's Queue goes through backoff", Failure{Plugins: sets.New("NoHint"), Pending: sets.New("Claims")}, nodeAdd, plain, event.BackoffQ},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, hints)
			f.failOnce(t, pod("p", 0), tt.failure)
			f.expect(t, "p", event.Unschedulable)
			f.q.MoveAllToActiveOrBackoffQueue(tt.event, nil, tt.newObj, nil)
			f.expect(t, "p", tt.want)
		})
	}
	t.Run("preCheck selects the pods offered the event", func(t *testing.T) {
		f := newFixture(t, hints)
		f.failOnce(t, pod("low", 0), Failure{Plugins: sets.New("NoHint")})
		f.failOnce(t, pod("high", 100), Failure{Plugins: sets.New("NoHint")})
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, plain, func(p *v1.Pod) bool { return *p.Spec.Priority <= 0 })
		f.expect(t, "low", event.BackoffQ)
		f.expect(t, "high", event.Unschedulable)
	})
}

func TestFlushTiming(t *testing.T) {
	f := newFixture(t, fitOnNodeAdd)
	f.failOnce(t, pod("p", 0), rejectedByFit) // at 0s: backoff until 1s
	f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)

	f.clk.Step(1999 * time.Millisecond)
	f.q.FlushBackoffQCompleted()
	f.expect(t, "p", event.BackoffQ) // the window of its expiry is not over
	f.clk.Step(time.Millisecond)
	f.q.FlushBackoffQCompleted()
	f.expect(t, "p", event.ActiveQ)

	// Second failure, at 2s: nothing queues it; it waits out five minutes.
	f.q.AddUnschedulableIfNotPresent(f.pop(t, "p"), rejectedByFit)
	f.clk.Step(5 * time.Minute)
	f.q.FlushUnschedulableLeftover()
	f.expect(t, "p", event.Unschedulable)
	f.clk.Step(time.Second)
	f.q.FlushUnschedulableLeftover()
	f.expect(t, "p", event.ActiveQ) // its 2s backoff is long over
	want := []string{
		"->active(PodAdd)",
		"active->inFlight()",
		"inFlight->unschedulable(ScheduleAttemptFailure)",
		"unschedulable->backoff(NodeAdd)",
		"backoff->active(BackoffComplete)",
		"active->inFlight()",
		"inFlight->unschedulable(ScheduleAttemptFailure)",
		"unschedulable->active(UnschedulableTimeout)",
	}
	if got := f.rec.moves("p"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("moves:\n got %v\nwant %v", got, want)
	}
}

// TestRunFlushesOnWindowBoundaries steps the fake clock and waits for Run
// to take each step, by the timers it registers and the moves it reports.
func TestRunFlushesOnWindowBoundaries(t *testing.T) {
	f := newFixture(t, noHints)
	f.clk.Step(300 * time.Millisecond)
	f.failOnce(t, pod("p", 0), Failure{Error: true}) // backoff until 1s; the window ends at 2s
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.q.Run(ctx); close(done) }()
	waitForWaiters(t, f.clk, 2) // the timer to the next boundary, and the leftover ticker
	f.clk.Step(700 * time.Millisecond)
	waitForWaiters(t, f.clk, 2) // the timer fired at 1s, the flush ran, the window ticker runs
	f.expect(t, "p", event.ErrorBackoffQ)
	f.clk.Step(time.Second)
	moved, stop := context.WithTimeout(ctx, time.Minute) // a guard: the move follows at once
	defer stop()
	if _, err := f.rec.Await(moved, func(e event.Event) bool {
		return e.Kind == event.KindQueue && e.Queue.Event == EventBackoffComplete && e.Pod.Name == "p"
	}); err != nil {
		t.Fatalf("p did not leave the error backoff when its window ended: %v", err)
	}
	cancel()
	<-done
	if _, err := f.q.Pop(); err != ErrClosed {
		t.Fatalf("Pop after Run ended = %v, want ErrClosed", err)
	}
}

// waitForWaiters waits until n timers and tickers wait on clk.
func waitForWaiters(t *testing.T, clk *testingclock.FakeClock, n int) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return clk.Waiters() == n, nil
	}); err != nil {
		t.Fatalf("waiting for %d timers on the clock, %d wait: %v", n, clk.Waiters(), err)
	}
}

func TestInFlightEvents(t *testing.T) {
	t.Run("an event during the attempt requeues", func(t *testing.T) {
		f := newFixture(t, fitOnNodeAdd)
		f.q.Add(pod("p", 0))
		pi := f.pop(t, "p")
		// A node arrives while the pod is scheduled against the old snapshot.
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, &v1.Node{}, nil)
		f.q.AddUnschedulableIfNotPresent(pi, rejectedByFit)
		if got := f.rec.moves("p"); fmt.Sprint(got[len(got)-1]) != "inFlight->backoff(NodeAdd)" {
			t.Errorf("moves = %v", got)
		}
		if f.q.flight.log.Len() != 0 {
			t.Errorf("the flight log keeps %d entries with no pod in flight", f.q.flight.log.Len())
		}
	})
	t.Run("ForceActivate applies to the activated pod only", func(t *testing.T) {
		f := newFixture(t, noHints)
		f.q.Add(pod("activated", 1))
		f.q.Add(pod("other", 0))
		activated, other := f.pop(t, "activated"), f.pop(t, "other")
		f.q.Activate(klog.Background(), map[string]*v1.Pod{"default/activated": activated.Pod})
		f.q.AddUnschedulableIfNotPresent(activated, rejectedByFit)
		f.q.AddUnschedulableIfNotPresent(other, rejectedByFit)
		f.expect(t, "activated", event.BackoffQ)
		f.expect(t, "other", event.Unschedulable)
	})
	for _, flushed := range []bool{true, false} {
		t.Run(fmt.Sprintf("a flush that moves a pod records UnschedulableTimeout: %v", flushed), func(t *testing.T) {
			f := newFixture(t, noHints)
			if flushed {
				f.failOnce(t, pod("waiting", 0), rejectedByFit)
			}
			f.clk.Step(6 * time.Minute)
			f.q.Add(pod("flying", 0))
			pi := f.pop(t, "flying")
			f.q.FlushUnschedulableLeftover()
			f.q.AddUnschedulableIfNotPresent(pi, rejectedByFit)
			want := event.Unschedulable
			if flushed {
				want = event.BackoffQ
			}
			f.expect(t, "flying", want)
		})
	}
	t.Run("an update during the attempt is an event for the pod", func(t *testing.T) {
		f := newFixture(t, map[string][]fwk.ClusterEventWithHint{"Labels": {{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodLabel}}}})
		f.q.Add(pod("p", 0))
		pi := f.pop(t, "p")
		f.q.Update(pi.Pod, pod("p", 0), labelChange)
		f.q.AddUnschedulableIfNotPresent(pi, Failure{Plugins: sets.New("Labels")})
		f.expect(t, "p", event.BackoffQ)
	})
}

func TestUpdateAndDelete(t *testing.T) {
	hints := map[string][]fwk.ClusterEventWithHint{
		"Tolerations": {{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodToleration}}},
	}
	tolerationChange := []fwk.ClusterEvent{{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodToleration}}
	rejected := Failure{Plugins: sets.New("Tolerations")}
	tests := []struct {
		name   string
		setup  func(f fixture)
		events []fwk.ClusterEvent
		want   event.QueueName
	}{
		{"update in activeQ stays", func(f fixture) { f.q.Add(pod("p", 0)) }, labelChange, event.ActiveQ},
		{"update that the rejector cares about moves", func(f fixture) { f.failOnce(t, pod("p", 0), rejected) }, tolerationChange, event.BackoffQ},
		{"update that the rejector ignores stays", func(f fixture) { f.failOnce(t, pod("p", 0), rejected) }, labelChange, event.Unschedulable},
		{"update in the error backoff stays", func(f fixture) { f.failOnce(t, pod("p", 0), Failure{Error: true}) }, labelChange, event.ErrorBackoffQ},
		{"update of an unknown pod adds it", func(f fixture) {}, labelChange, event.ActiveQ},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, hints)
			tt.setup(f)
			updated := pod("p", 5)
			f.q.Update(pod("p", 0), updated, tt.events)
			f.expect(t, "p", tt.want)
			for _, e := range f.q.List() {
				if e.Pod != updated {
					t.Errorf("the queue holds the old object")
				}
			}
			f.q.Delete(updated)
			f.expect(t, "p", "")
		})
	}
	t.Run("a pod deleted in flight does not come back", func(t *testing.T) {
		f := newFixture(t, noHints)
		f.q.Add(pod("p", 0))
		pi := f.pop(t, "p")
		f.q.Delete(pi.Pod)
		f.q.AddUnschedulableIfNotPresent(pi, rejectedByFit)
		f.expect(t, "p", "")
	})
}

// gate holds pods with scheduling gates, and those it is told to block.
type gate struct {
	name    string
	blocked sets.Set[string]
}

func (g *gate) Name() string { return g.name }
func (g *gate) PreEnqueue(_ context.Context, p *v1.Pod) *fwk.Status {
	if len(p.Spec.SchedulingGates) > 0 || g.blocked.Has(p.Name) {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "waiting")
	}
	return nil
}

func gated(name string) *v1.Pod {
	p := pod(name, 0)
	p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	return p
}

// rejectedBehindGate returns a fixture whose pod p Fit rejected, behind a
// PreEnqueue plugin Gate that blocks nothing yet.
func rejectedBehindGate(t *testing.T, hints map[string][]fwk.ClusterEventWithHint) (fixture, *gate) {
	t.Helper()
	g := &gate{name: "Gate", blocked: sets.New[string]()}
	f := newFixture(t, hints, g)
	f.failOnce(t, pod("p", 0), rejectedByFit)
	return f, g
}

func TestPreEnqueue(t *testing.T) {
	hints := map[string][]fwk.ClusterEventWithHint{"Gate": {{Event: gatesLifted}}, "Fit": {{Event: nodeAdd}}}
	lifted := []fwk.ClusterEvent{{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodSchedulingGatesEliminated}}
	t.Run("a gated pod waits with its gating plugin", func(t *testing.T) {
		f := newFixture(t, hints, &gate{name: "Gate"})
		f.q.Add(gated("p"))
		f.expect(t, "p", event.Unschedulable)
		if pi := f.info("p"); pi.GatingPlugin != "Gate" || !pi.UnschedulablePlugins.Has("Gate") {
			t.Fatalf("gating plugin %q, plugins %v", pi.GatingPlugin, pi.UnschedulablePlugins)
		}
		f.q.MoveAllToActiveOrBackoffQueue(UnschedulableTimeout, nil, nil, nil)
		f.expect(t, "p", event.Unschedulable)
		f.q.Update(gated("p"), pod("p", 0), lifted)
		f.expect(t, "p", event.ActiveQ)
	})
	t.Run("an update its gate did not register for leaves it gated", func(t *testing.T) {
		f := newFixture(t, hints, &gate{name: "Gate"})
		f.q.Add(gated("p"))
		f.q.Update(gated("p"), pod("p", 0), labelChange)
		f.expect(t, "p", event.Unschedulable)
	})
	t.Run("a gated pod hears only its gate's events", func(t *testing.T) {
		f, g := rejectedBehindGate(t, hints)
		g.blocked.Insert("p")
		f.q.Activate(klog.Background(), map[string]*v1.Pod{"default/p": pod("p", 0)})
		f.expect(t, "p", event.Unschedulable) // Fit rejected it, Gate holds it now
		g.blocked.Delete("p")
		runs := f.rec.preEnqueueRuns("p")
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
		if f.rec.preEnqueueRuns("p") != runs {
			t.Errorf("NodeAdd, which Gate did not register, re-ran PreEnqueue")
		}
		f.expect(t, "p", event.Unschedulable)
	})
	t.Run("PreEnqueue runs on the way into backoff", func(t *testing.T) {
		f, g := rejectedBehindGate(t, hints)
		g.blocked.Insert("p")
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
		f.expect(t, "p", event.Unschedulable)
		if pi := f.info("p"); pi.GatingPlugin != "Gate" {
			t.Errorf("gating plugin %q, want Gate", pi.GatingPlugin)
		}
	})
	t.Run("PreEnqueue does not run from backoff to activeQ", func(t *testing.T) {
		f, g := rejectedBehindGate(t, hints)
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
		f.expect(t, "p", event.BackoffQ)
		g.blocked.Insert("p")
		f.clk.Step(2 * time.Second)
		f.q.FlushBackoffQCompleted()
		f.expect(t, "p", event.ActiveQ)
	})
	t.Run("Activate runs PreEnqueue again", func(t *testing.T) {
		// The asynchronous preemption gate: the preemptor is held while its
		// victims go, then activated.
		g := &gate{name: "Gate", blocked: sets.New("p")}
		f := newFixture(t, hints, g)
		f.q.Add(pod("p", 0))
		f.expect(t, "p", event.Unschedulable)
		g.blocked.Delete("p")
		f.q.Activate(klog.Background(), map[string]*v1.Pod{"default/p": pod("p", 0)})
		f.expect(t, "p", event.ActiveQ)
	})
	t.Run("the gating plugin runs first", func(t *testing.T) {
		first, second := &gate{name: "First", blocked: sets.New[string]()}, &gate{name: "Second", blocked: sets.New("p")}
		f := newFixture(t, hints, first, second)
		f.q.Add(pod("p", 0))
		first.blocked.Insert("p")
		f.q.MoveAllToActiveOrBackoffQueue(UnschedulableTimeout, nil, nil, nil)
		if pi := f.info("p"); pi.GatingPlugin != "Second" {
			t.Errorf("gating plugin %q, want Second, which gated it before", pi.GatingPlugin)
		}
	})
	t.Run("gated pods are flushed every five minutes", func(t *testing.T) {
		f := newFixture(t, hints, &gate{name: "Gate"})
		f.q.Add(gated("p"))
		runs := func() int { return f.rec.preEnqueueRuns("p") }
		for _, step := range []struct {
			after time.Duration
			runs  int
		}{{5 * time.Minute, 1}, {time.Second, 2}, {4 * time.Minute, 2}, {time.Minute + time.Second, 3}} {
			f.clk.Step(step.after)
			f.q.FlushUnschedulableLeftover()
			if runs() != step.runs {
				t.Fatalf("at %v PreEnqueue ran %d times, want %d", f.clk.Since(start), runs(), step.runs)
			}
		}
		f.expect(t, "p", event.Unschedulable)
	})
}

func TestNominator(t *testing.T) {
	nominatedTo := func(name, node string) *v1.Pod {
		p := pod(name, 0)
		p.Status.NominatedNodeName = node
		return p
	}
	stored := &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: "stored"}
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"kept when neither object names a node", "", "", "stored"},
		{"the new object's node wins", "", "n2", "n2"},
		{"cleared when the status stops naming one", "n1", "", ""},
		{"moved when the status changes", "n1", "n2", "n2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := New(Options{})
			q.AddNominatedPod(klog.Background(), podInfoOf(nominatedTo("p", tt.old)), stored)
			q.UpdateNominatedPod(klog.Background(), nominatedTo("p", tt.old), podInfoOf(nominatedTo("p", tt.new)))
			got := q.nominator.node[types.UID("uid-p")]
			if got != tt.want {
				t.Errorf("nominated to %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("the queue records, follows and forgets nominations", func(t *testing.T) {
		f := newFixture(t, noHints)
		f.q.Add(nominatedTo("p", "n1"))
		renamed := nominatedTo("p", "n1")
		renamed.ResourceVersion = "2"
		f.q.Update(nominatedTo("p", "n1"), renamed, labelChange)
		if got := f.q.NominatedPodsForNode("n1"); len(got) != 1 || got[0].GetPod().ResourceVersion != "2" {
			t.Fatalf("nominated to n1: %v, want the updated pod", got)
		}
		f.pop(t, "p")
		if got := f.q.NominatedPodsForNode("n1"); len(got) != 1 || got[0].GetPod().Spec.Priority != nil {
			t.Fatalf("a pod in flight is given by name alone, got %v", got[0].GetPod())
		}
		f.q.Delete(renamed)
		if got := f.q.NominatedPodsForNode("n1"); len(got) != 0 {
			t.Fatalf("deleted pod still nominated: %v", got)
		}
	})
	t.Run("a pod gone or bound is not nominated", func(t *testing.T) {
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		bound := pod("bound", 0)
		bound.Spec.NodeName = "n1"
		if err := indexer.Add(bound); err != nil {
			t.Fatal(err)
		}
		q := New(Options{PodLister: corelisters.NewPodLister(indexer)})
		for _, p := range []*v1.Pod{pod("gone", 0), pod("bound", 0)} {
			q.AddNominatedPod(klog.Background(), podInfoOf(p), &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: "n1"})
		}
		if got := q.NominatedPodsForNode("n1"); len(got) != 0 {
			t.Errorf("nominated: %v", got)
		}
	})
}

// TestConcurrentUse runs producers, a scheduler loop and event sources at
// once and checks that every pod ends up bound exactly once.
func TestConcurrentUse(t *testing.T) {
	f := newFixture(t, fitOnNodeAdd)
	const pods = 400
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < pods; i += 4 {
				name := fmt.Sprintf("p%d", i)
				if i%7 == 0 { // an update of an unknown pod adds it
					f.q.Update(pod(name, 0), pod(name, 9), labelChange)
				} else {
					f.q.Add(pod(name, int32(i%3)))
				}
			}
		})
	}
	bound := map[string]int{}
	scheduler := make(chan struct{})
	go func() { // every pod fails twice, one way or the other, then binds
		defer close(scheduler)
		for len(bound) < pods {
			e, err := f.q.Pop()
			if err != nil {
				return
			}
			pi := e.(*PodInfo)
			switch pi.Attempts {
			case 1:
				f.q.AddUnschedulableIfNotPresent(pi, rejectedByFit)
			case 2:
				f.q.AddUnschedulableIfNotPresent(pi, Failure{Error: true})
			default:
				f.q.Done(pi.Pod.UID)
				bound[pi.Pod.Name]++
			}
		}
	}()
	// Cluster events and the clock, until the scheduler is done.
	for running := true; running; {
		select {
		case <-scheduler:
			running = false
		default:
			f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
			f.clk.Step(500 * time.Millisecond)
			f.q.FlushBackoffQCompleted()
			runtime.Gosched()
		}
	}
	wg.Wait()
	for name, n := range bound {
		if n != 1 {
			t.Errorf("%s bound %d times", name, n)
		}
	}
	if c := f.q.Counts(); len(bound) != pods || c[event.ActiveQ]+c[event.BackoffQ]+c[event.ErrorBackoffQ]+c[event.Unschedulable]+c[event.InFlight] != 0 {
		t.Fatalf("bound %d of %d pods; queue %v", len(bound), pods, c)
	}
}

func TestListAndCounts(t *testing.T) {
	f := newFixture(t, fitOnNodeAdd, &gate{name: "Gate"})
	f.failOnce(t, pod("backoff", 0), rejectedByFit)
	f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
	f.failOnce(t, pod("error", 0), Failure{Error: true})
	f.failOnce(t, pod("unschedulable", 0), rejectedByFit)
	f.clk.Step(time.Millisecond)
	f.q.Add(gated("gated"))
	f.q.Add(pod("flying", 0))
	f.pop(t, "flying")
	f.q.Add(pod("active", 0))
	var got []string
	for _, e := range f.q.List() {
		got = append(got, e.Pod.Name+":"+string(e.Queue))
	}
	want := "[active:active backoff:backoff error:errorBackoff unschedulable:unschedulable gated:unschedulable flying:inFlight]"
	if fmt.Sprint(got) != want {
		t.Errorf("List:\n got %v\nwant %s", got, want)
	}
	c := f.q.Counts()
	if c[event.ActiveQ] != 1 || c[event.BackoffQ] != 1 || c[event.ErrorBackoffQ] != 1 || c[event.Unschedulable] != 2 || c[event.InFlight] != 1 {
		t.Errorf("Counts = %v", c)
	}
}

// TestRejectedAndHinted: the plugins that rejected a pod and the plugins
// whose QueueingHint moved it are told apart, on the events and in List.
func TestRejectedAndHinted(t *testing.T) {
	f := newFixture(t, fitOnNodeAdd)
	f.failOnce(t, pod("p", 0), rejectedByFit)
	f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
	moves := f.rec.Find(func(e event.Event) bool { return e.Kind == event.KindQueue && e.Pod.Name == "p" })
	tests := []struct {
		name                      string
		move                      *event.QueueMove
		wantPlugins, wantRejected string
	}{
		{"added: nothing yet", moves[0].Queue, "[]", "[]"},
		{"the failure names the rejecting plugin", moves[2].Queue, "[Fit]", "[Fit]"},
		{"the node's arrival: Fit's hint moved it, and Fit rejected it", moves[3].Queue, "[Fit]", "[Fit]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(tt.move.Plugins); got != tt.wantPlugins {
			t.Errorf("%s: plugins %s, want %s", tt.name, got, tt.wantPlugins)
		}
		if got := fmt.Sprint(tt.move.RejectedBy); got != tt.wantRejected {
			t.Errorf("%s: rejectedBy %s, want %s", tt.name, got, tt.wantRejected)
		}
	}
	if moves[3].Queue.Event != nodeAdd.Label() {
		t.Fatalf("the last move: %+v", moves[3].Queue)
	}
	list := f.q.List()
	if len(list) != 1 || fmt.Sprint(list[0].HintedBy) != "[Fit]" || fmt.Sprint(list[0].Plugins) != "[Fit]" || list[0].LastEvent != nodeAdd.Label() {
		t.Errorf("List: %+v", list)
	}
	// A move that no cluster event made forgets the hint.
	f.clk.Step(time.Minute)
	f.q.FlushBackoffQCompleted()
	if list := f.q.List(); len(list) != 1 || list[0].HintedBy != nil || list[0].LastEvent != EventBackoffComplete {
		t.Errorf("after the backoff: %+v", list)
	}
}

func TestSkipsReported(t *testing.T) {
	fitsBig := func(_ klog.Logger, _ *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
		if n, ok := newObj.(*v1.Node); ok && n.Labels["size"] == "big" {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
	hints := map[string][]fwk.ClusterEventWithHint{
		"Fit":    {{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: fitsBig}},
		"Ports":  {{Event: nodeAdd, QueueingHintFn: fitsBig}},
		"Claims": {{Event: claimAdd}},
	}
	node := func(name, size string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"size": size}}}
	}
	skips := func(r *recorder) []string {
		var out []string
		for _, e := range r.Find(func(e event.Event) bool { return e.Kind == event.KindQueue && e.Queue.Action == event.ActionSkip }) {
			out = append(out, fmt.Sprintf("%s(%s):%v in %s", e.Queue.Event, e.Queue.Object, e.Queue.Plugins, e.Queue.To))
		}
		return out
	}
	tests := []struct {
		name   string
		events func(q *Queue)
		want   []string
		last   string
	}{
		{
			name:   "a node too small: every rejecting plugin that registered says QueueSkip",
			events: func(q *Queue) { q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node("n1", "small"), nil) },
			want:   []string{"NodeAdd(n1):[Fit Ports] in unschedulable"},
			last:   "NodeAdd n1 [Fit Ports]",
		},
		{
			name: "the same answer to the same event is reported once while the pod waits",
			events: func(q *Queue) {
				q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node("n1", "small"), nil)
				q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node("n2", "small"), nil)
				q.MoveAllToActiveOrBackoffQueue(nodeLabel, node("n1", ""), node("n1", "small"), nil)
			},
			want: []string{"NodeAdd(n1):[Fit Ports] in unschedulable", "NodeUpdateNodeLabel(n1):[Fit] in unschedulable"},
			last: "NodeUpdateNodeLabel n1 [Fit]",
		},
		{
			name:   "an event no rejecting plugin registered is not checked, so not reported",
			events: func(q *Queue) { q.MoveAllToActiveOrBackoffQueue(claimAdd, nil, nil, nil) },
		},
		{
			name:   "a hint that says Queue moves the pod: no skip",
			events: func(q *Queue) { q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node("n3", "big"), nil) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, hints)
			f.failOnce(t, pod("p", 0), Failure{Plugins: sets.New("Fit", "Ports")})
			tt.events(f.q)
			if got := skips(f.rec); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("skips %q, want %q", got, tt.want)
			}
			last := ""
			if list := f.q.List(); len(list) == 1 && list[0].LastSkip != nil {
				k := list[0].LastSkip
				last = fmt.Sprintf("%s %s %v", k.Event, k.Object, k.Plugins)
			}
			if last != tt.last {
				t.Errorf("List's last skip %q, want %q", last, tt.last)
			}
		})
	}
	t.Run("a new wait reports the same answer again", func(t *testing.T) {
		f := newFixture(t, hints)
		pi := f.failOnce(t, pod("p", 0), Failure{Plugins: sets.New("Fit")})
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node("n1", "small"), nil)
		f.q.Activate(quiet, map[string]*v1.Pod{"p": pi.Pod})
		f.pop(t, "p")
		f.q.AddUnschedulableIfNotPresent(pi, Failure{Plugins: sets.New("Fit")})
		f.q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node("n2", "small"), nil)
		if got := skips(f.rec); len(got) != 2 {
			t.Errorf("skips %q, want one per wait", got)
		}
		if list := f.q.List(); list[0].LastSkip == nil || list[0].LastSkip.Object != "n2" {
			t.Errorf("List: %+v", list[0])
		}
	})
}
