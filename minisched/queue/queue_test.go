package queue

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"

	"minisched/minisched/event"
)

var nodeAdd = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}
var nodeLabel = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}

func pod(name string, priority int32) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Priority: &priority}}
}

func prioritySort(a, b fwk.QueuedEntityInfo) bool {
	return a.GetPriority() > b.GetPriority() || a.GetPriority() == b.GetPriority() && a.GetTimestamp().Before(b.GetTimestamp())
}

type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Observe(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// moves returns "from->to(event)" for each queue move of the named pod.
func (r *recorder) moves(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Kind == event.KindQueue && e.Pod.Name == name && e.Queue.Action == event.ActionMove {
			out = append(out, fmt.Sprintf("%s->%s(%s)", e.Queue.From, e.Queue.To, e.Queue.Event))
		}
	}
	return out
}

func newTestQueue(t *testing.T, hints map[string][]fwk.ClusterEventWithHint) (*Queue, *testingclock.FakeClock, *recorder) {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rec := &recorder{}
	q := New(Options{Less: prioritySort, Clock: clk, Hints: hints, Observer: rec})
	return q, clk, rec
}

func where(q *Queue, name string) event.QueueName {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.whereLocked(types.UID("uid-" + name))
}

// failOnce pops the only pod and hands it back as rejected by plugins.
func failOnce(t *testing.T, q *Queue, plugins ...string) *PodInfo {
	t.Helper()
	pi, err := q.Pop()
	if err != nil {
		t.Fatal(err)
	}
	q.AddUnschedulableIfNotPresent(pi, Failure{Plugins: sets.New(plugins...)})
	return pi
}

func TestBackoffDuration(t *testing.T) {
	q, _, _ := newTestQueue(t, nil)
	tests := []struct {
		name          string
		unschedulable int
		errors        int
		want          time.Duration
	}{
		{"never failed", 0, 0, 0},
		{"first failure waits the initial backoff", 1, 0, time.Second},
		{"second failure doubles", 2, 0, 2 * time.Second},
		{"fourth failure", 4, 0, 8 * time.Second},
		{"fifth failure reaches the cap", 5, 0, 10 * time.Second},
		{"many failures stay at the cap", 40, 0, 10 * time.Second},
		{"errors count on their own", 5, 2, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pi := &PodInfo{UnschedulableCount: tt.unschedulable, ConsecutiveErrorsCount: tt.errors}
			if got := q.backoffDuration(pi); got != tt.want {
				t.Errorf("backoffDuration = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestActiveQOrder(t *testing.T) {
	q, clk, _ := newTestQueue(t, nil)
	q.Add(pod("low", 1))
	clk.Step(time.Millisecond)
	q.Add(pod("high", 100))
	clk.Step(time.Millisecond)
	q.Add(pod("low-later", 1))
	for _, want := range []string{"high", "low", "low-later"} {
		pi, err := q.Pop()
		if err != nil {
			t.Fatal(err)
		}
		if pi.Pod.Name != want {
			t.Fatalf("popped %s, want %s", pi.Pod.Name, want)
		}
	}
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
	}
	labelled := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"ready": "yes"}}}
	plain := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	tests := []struct {
		name     string
		rejector string
		event    fwk.ClusterEvent
		newObj   any
		want     event.QueueName
	}{
		{"hint says Queue", "Labels", nodeAdd, labelled, event.BackoffQ},
		{"hint says QueueSkip", "Labels", nodeAdd, plain, event.Unschedulable},
		{"specific update matches a registered union", "Labels", nodeLabel, labelled, event.BackoffQ},
		{"event not registered by the rejector", "NoHint", nodeLabel, labelled, event.Unschedulable},
		{"no hint function means Queue", "NoHint", nodeAdd, plain, event.BackoffQ},
		{"hint error means Queue", "Broken", nodeAdd, plain, event.BackoffQ},
		{"hint panic means Queue", "Panics", nodeAdd, plain, event.BackoffQ},
		{"Pod registration matches an assigned pod", "PodsOnly", AssignedPodDelete, pod("x", 0), event.BackoffQ},
		{"Pod registration ignores nodes", "PodsOnly", nodeAdd, plain, event.Unschedulable},
		{"wildcard event queues everything", "NoHint", UnschedulableTimeout, nil, event.BackoffQ},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _, rec := newTestQueue(t, hints)
			q.Add(pod("p", 0))
			failOnce(t, q, tt.rejector)
			if got := where(q, "p"); got != event.Unschedulable {
				t.Fatalf("after a rejection the pod is in %q, want unschedulable", got)
			}
			q.MoveAllToActiveOrBackoffQueue(tt.event, nil, tt.newObj)
			if got := where(q, "p"); got != tt.want {
				t.Errorf("pod is in %q, want %q; moves %v", got, tt.want, rec.moves("p"))
			}
		})
	}
}

func TestFlushTiming(t *testing.T) {
	hints := map[string][]fwk.ClusterEventWithHint{"Fit": {{Event: nodeAdd}}}
	q, clk, rec := newTestQueue(t, hints)
	q.Add(pod("p", 0))
	failOnce(t, q, "Fit")
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil)

	clk.Step(999 * time.Millisecond)
	q.FlushBackoffQCompleted()
	if got := where(q, "p"); got != event.BackoffQ {
		t.Fatalf("before its 1s backoff ends the pod is in %q, want backoff", got)
	}
	clk.Step(time.Millisecond)
	q.FlushBackoffQCompleted()
	if got := where(q, "p"); got != event.ActiveQ {
		t.Fatalf("after 1s the pod is in %q, want active", got)
	}

	// Second failure: nothing queues it; it waits out five minutes.
	failOnce(t, q, "Fit")
	clk.Step(5 * time.Minute)
	q.FlushUnschedulableLeftover()
	if got := where(q, "p"); got != event.Unschedulable {
		t.Fatalf("at exactly 5m the pod is in %q, want unschedulable", got)
	}
	clk.Step(time.Second)
	q.FlushUnschedulableLeftover()
	if got := where(q, "p"); got != event.ActiveQ {
		t.Fatalf("after 5m the pod is in %q, want active (its 2s backoff is long over)", got)
	}
	want := []string{
		"inFlight->unschedulable(ScheduleAttemptFailure)",
		"unschedulable->backoff(NodeAdd)",
		"backoff->active(BackoffComplete)",
		"inFlight->unschedulable(ScheduleAttemptFailure)",
		"unschedulable->active(UnschedulableTimeout)",
	}
	if got := rec.moves("p"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("moves:\n got %v\nwant %v", got, want)
	}
}

func TestRunFlushesWithTheClock(t *testing.T) {
	q, clk, _ := newTestQueue(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx); close(done) }()
	q.Add(pod("p", 0))
	pi, _ := q.Pop()
	q.AddUnschedulableIfNotPresent(pi, Failure{Error: true, Message: "apiserver down"})
	if got := where(q, "p"); got != event.BackoffQ {
		t.Fatalf("after an error the pod is in %q, want backoff", got)
	}
	for where(q, "p") != event.ActiveQ {
		clk.Step(100 * time.Millisecond)
		time.Sleep(time.Millisecond)
		if clk.Since(pi.Timestamp) > 5*time.Second {
			t.Fatal("the backoff flush never moved the pod")
		}
	}
	cancel()
	<-done
	if _, err := q.Pop(); err != ErrClosed {
		t.Fatalf("Pop after Run ended = %v, want ErrClosed", err)
	}
}

func TestEventDuringFlightRequeues(t *testing.T) {
	hints := map[string][]fwk.ClusterEventWithHint{"Fit": {{Event: nodeAdd}}}
	q, _, rec := newTestQueue(t, hints)
	q.Add(pod("p", 0))
	pi, _ := q.Pop()
	// A node arrives while the pod is being scheduled against the old snapshot.
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, &v1.Node{})
	q.AddUnschedulableIfNotPresent(pi, Failure{Plugins: sets.New("Fit")})
	if got := rec.moves("p"); fmt.Sprint(got) != "[inFlight->backoff(NodeAdd)]" {
		t.Errorf("moves = %v", got)
	}
	// The event log is trimmed once no pod is in flight.
	if q.flightLog.Len() != 0 || q.logEvents != 0 {
		t.Errorf("flight log holds %d entries, %d events", q.flightLog.Len(), q.logEvents)
	}
}

func TestUpdateAndDelete(t *testing.T) {
	hints := map[string][]fwk.ClusterEventWithHint{
		"Tolerations": {{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodToleration}}},
	}
	tolerationChange := []fwk.ClusterEvent{{Resource: fwk.UnscheduledPod, ActionType: fwk.UpdatePodToleration}}
	labelChange := []fwk.ClusterEvent{{Resource: fwk.UnscheduledPod, ActionType: fwk.UpdatePodLabel}}
	tests := []struct {
		name   string
		setup  func(q *Queue)
		events []fwk.ClusterEvent
		want   event.QueueName
	}{
		{"update in activeQ stays", func(q *Queue) {}, labelChange, event.ActiveQ},
		{"update that the rejector cares about moves", func(q *Queue) { failOnce(t, q, "Tolerations") }, tolerationChange, event.BackoffQ},
		{"update that the rejector ignores stays", func(q *Queue) { failOnce(t, q, "Tolerations") }, labelChange, event.Unschedulable},
		{"update of an unknown pod adds it", func(q *Queue) { q.Delete(pod("p", 0)) }, labelChange, event.ActiveQ},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _, _ := newTestQueue(t, hints)
			q.Add(pod("p", 0))
			tt.setup(q)
			updated := pod("p", 5)
			q.Update(pod("p", 0), updated, tt.events)
			if got := where(q, "p"); got != tt.want {
				t.Fatalf("pod is in %q, want %q", got, tt.want)
			}
			for _, e := range q.List() {
				if e.Pod != updated {
					t.Errorf("the queue holds the old object")
				}
			}
			q.Delete(updated)
			if got := where(q, "p"); got != "" {
				t.Errorf("after Delete the pod is in %q", got)
			}
		})
	}
}

func TestDeletedInFlightDoesNotComeBack(t *testing.T) {
	q, _, _ := newTestQueue(t, nil)
	q.Add(pod("p", 0))
	pi, _ := q.Pop()
	q.Delete(pi.Pod)
	q.AddUnschedulableIfNotPresent(pi, Failure{Plugins: sets.New("Fit")})
	if got := where(q, "p"); got != "" {
		t.Fatalf("deleted pod came back to %q", got)
	}
}

type gate struct{ open bool }

func (g *gate) Name() string { return "Gate" }
func (g *gate) PreEnqueue(_ context.Context, p *v1.Pod) *fwk.Status {
	if len(p.Spec.SchedulingGates) > 0 {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "waiting for scheduling gates")
	}
	return nil
}

func TestGatedPod(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	q := New(Options{Less: prioritySort, Clock: clk, PreEnqueue: []fwk.PreEnqueuePlugin{&gate{}}})
	gated := pod("p", 0)
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	q.Add(gated)
	if got := where(q, "p"); got != event.Unschedulable {
		t.Fatalf("gated pod is in %q", got)
	}
	if e := q.List()[0]; e.GatingPlugin != "Gate" {
		t.Fatalf("gating plugin = %q", e.GatingPlugin)
	}
	q.MoveAllToActiveOrBackoffQueue(UnschedulableTimeout, nil, nil)
	if got := where(q, "p"); got != event.Unschedulable {
		t.Fatalf("a flush released a gated pod to %q", got)
	}
	q.Update(gated, pod("p", 0), nil)
	if got := where(q, "p"); got != event.ActiveQ {
		t.Fatalf("ungated pod is in %q, want active", got)
	}
}

// TestConcurrentUse runs producers, a scheduler loop and event sources at
// once and checks that every pod ends up exactly once in one place.
func TestConcurrentUse(t *testing.T) {
	hints := map[string][]fwk.ClusterEventWithHint{"Fit": {{Event: nodeAdd}}}
	q := New(Options{Less: prioritySort, Hints: hints, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		BackoffFlushInterval: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)

	const pods = 400
	var wg sync.WaitGroup
	var mu sync.Mutex
	bound := map[string]int{}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < pods; i += 4 {
				p := pod(fmt.Sprintf("p%d", i), int32(i%3))
				q.Add(p)
				if i%7 == 0 {
					q.Update(p, pod(p.Name, 9), []fwk.ClusterEvent{{Resource: fwk.UnscheduledPod, ActionType: fwk.UpdatePodLabel}})
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() { // cluster events
		defer wg.Done()
		for i := 0; i < 200; i++ {
			q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil)
			time.Sleep(100 * time.Microsecond)
		}
	}()
	schedulerDone := make(chan struct{})
	go func() { // the scheduling loop: every pod fails twice, then binds
		defer close(schedulerDone)
		for {
			pi, err := q.Pop()
			if err != nil {
				return
			}
			if pi.Attempts < 3 {
				q.AddUnschedulableIfNotPresent(pi, Failure{Plugins: sets.New("Fit")})
				continue
			}
			q.Done(pi.Pod.UID)
			mu.Lock()
			bound[pi.Pod.Name]++
			n := len(bound)
			mu.Unlock()
			if n == pods {
				return
			}
		}
	}()
	wg.Wait()
	// Pods parked after the last event need one more: keep nudging.
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-schedulerDone:
			for name, n := range bound {
				if n != 1 {
					t.Errorf("%s bound %d times", name, n)
				}
			}
			if len(bound) != pods {
				t.Fatalf("bound %d pods, want %d", len(bound), pods)
			}
			if c := q.Counts(); c[event.ActiveQ]+c[event.BackoffQ]+c[event.Unschedulable]+c[event.InFlight] != 0 {
				t.Fatalf("queue not empty: %v", c)
			}
			return
		case <-deadline:
			t.Fatalf("only %d of %d pods bound; queue %v", len(bound), pods, q.Counts())
		case <-time.After(5 * time.Millisecond):
			q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil)
		}
	}
}
