package schedperf

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"
)

// TestSteadyState runs a createPods in steady state against a real
// apiserver, with the test as the scheduler: it binds the first few pods
// and then no more. Each bound pod is deleted and another made, so the
// namespace keeps its backlog; the window counts the deleted pods as
// placed and as made.
func TestSteadyState(t *testing.T) {
	e, client := startCluster(t, nil)
	ctx := watchPods(t, e, client)

	const ns, backlog, bound = "steady", 3, 4
	if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.ensureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The op runs until the informer has seen each bound pod gone and
	// another made in its place (its store is then up to date for the
	// window's count), not for a time: its own duration is far away.
	opCtx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	made, gone := 0, 0
	count := func(added, deleted int) {
		mu.Lock()
		defer mu.Unlock()
		made, gone = made+added, gone+deleted
		if gone == bound && made == backlog+bound {
			stop()
		}
	}
	handle, err := e.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { count(1, 0) },
		DeleteFunc: func(any) { count(0, 1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.pods.RemoveEventHandler(handle) }()
	// The scheduler: bind the first pods made, then no more.
	go func() {
		binds := 0
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			if !ok || ev.Type != watch.Added {
				continue
			}
			b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name}, Target: v1.ObjectReference{Kind: "Node", Name: "n"}}
			if err := client.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
				t.Errorf("binding %s: %v", pod.Name, err)
				stop()
				return
			}
			if binds++; binds == bound {
				return
			}
		}
	}()
	op := &createPodsOp{Count: backlog, Namespace: ptr.To(ns), SteadyState: true, Duration: metav1.Duration{Duration: time.Hour},
		CollectMetrics: true, SignatureBatchSize: 1}
	if err := e.createPods(opCtx, 0, op); err != nil {
		t.Fatal(err)
	}
	if len(e.measures) != 1 {
		t.Fatalf("measures %+v, want one window", e.measures)
	}
	if m := e.measures[0]; m.Placed != bound || m.Pods != backlog+bound || m.Backlog != backlog {
		t.Errorf("window: %d of %d placed, backlog %d; want %d of %d, backlog %d", m.Placed, m.Pods, m.Backlog, bound, backlog+bound, backlog)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != backlog {
		t.Errorf("%d pods left, want the backlog of %d", len(pods.Items), backlog)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			t.Errorf("%s is bound and still there", p.Name)
		}
	}
}

// TestEnding: a steady state ends without an error when its duration runs
// out in the middle of a call, however the call says so; client-go's rate
// limiter says it before the context ends.
func TestEnding(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	soon, cancelSoon := context.WithTimeout(live, time.Hour)
	defer cancelSoon()
	// A limiter whose next token comes after the deadline: its Wait refuses
	// at once, with the context still live.
	limiter := flowcontrol.NewTokenBucketRateLimiter(1.0/7200, 1)
	limiter.Accept()
	refused := limiter.Wait(soon)
	if refused == nil || soon.Err() != nil {
		t.Fatalf("the limiter's Wait = %v with the context's error %v; want a refusal while the context lives", refused, soon.Err())
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{name: "a call that succeeded, the op running", ctx: live, want: false},
		{name: "a call that failed, the op running", ctx: live, err: errors.New("pods \"p\" is forbidden"), want: false},
		{name: "the rate limiter's refusal before the end", ctx: soon, err: refused, want: true},
		{name: "a call cut by the end", ctx: ended, err: context.Canceled, want: true},
		{name: "a call that succeeded as the op ended", ctx: ended, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ending(tc.ctx, tc.err); got != tc.want {
				t.Errorf("ending(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
