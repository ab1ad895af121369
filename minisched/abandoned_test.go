package minisched_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// lateKey is what a lingering plugin writes after its timeout.
const lateKey fwk.StateKey = "Lingerer/late"

type late struct{}

func (late) Clone() fwk.StateData { return late{} }

// lingerer stays in the extension point its pod names (label
// linger=<point>), the first time only, until its context is cancelled or
// the test lets it go; then it writes to the cycle state, as a plugin that
// ignores its timeout would. Its Unreserve lets it go as well, waits for that
// write and looks for it in its own cycle state.
type lingerer struct {
	first       sync.Once
	release     chan struct{}
	releaseOnce sync.Once
	wrote       chan struct{}
	// cancelled says the lingering call's context was done when it woke.
	cancelled atomic.Bool
	// unreserveSaw gets whether Unreserve found the late write.
	unreserveSaw chan bool
}

func newLingerer() *lingerer {
	return &lingerer{release: make(chan struct{}), wrote: make(chan struct{}), unreserveSaw: make(chan bool, 1)}
}

func (l *lingerer) let() { l.releaseOnce.Do(func() { close(l.release) }) }

func (l *lingerer) linger(ctx context.Context, state fwk.CycleState, point string, p *v1.Pod) {
	if p.Labels["linger"] != point {
		return
	}
	first := false
	l.first.Do(func() { first = true })
	if !first {
		return
	}
	select {
	case <-ctx.Done():
	case <-l.release:
	}
	l.cancelled.Store(ctx.Err() != nil)
	state.Write(lateKey, late{})
	close(l.wrote)
}

func (l *lingerer) Name() string { return "Lingerer" }

func (l *lingerer) Filter(ctx context.Context, state fwk.CycleState, p *v1.Pod, _ fwk.NodeInfo) *fwk.Status {
	l.linger(ctx, state, "Filter", p)
	return nil
}

func (l *lingerer) Reserve(ctx context.Context, state fwk.CycleState, p *v1.Pod, _ string) *fwk.Status {
	l.linger(ctx, state, "Reserve", p)
	return nil
}

func (l *lingerer) Unreserve(ctx context.Context, state fwk.CycleState, p *v1.Pod, _ string) {
	if p.Labels["linger"] == "" {
		return
	}
	l.let()
	select {
	case <-l.wrote:
	case <-ctx.Done():
		return
	}
	_, err := state.Read(lateKey)
	select {
	case l.unreserveSaw <- err == nil:
	default:
	}
}

func (l *lingerer) Permit(ctx context.Context, state fwk.CycleState, p *v1.Pod, _ string) (*fwk.Status, time.Duration) {
	l.linger(ctx, state, "Permit", p)
	return nil, 0
}

// A plugin call abandoned at its timeout gets a cancelled context and a
// cycle state of its own: what it writes late never reaches the extension
// points that run after it, and the pod's next attempt binds.
func TestAbandonedCallIsCutOffFromTheCycle(t *testing.T) {
	tests := []struct {
		point string
		// unreserves says Unreserve runs after the point fails, and must
		// not see the late write.
		unreserves bool
	}{
		{point: "Filter"},
		{point: "Reserve", unreserves: true},
		{point: "Permit", unreserves: true},
	}
	for _, tt := range tests {
		t.Run(tt.point, func(t *testing.T) {
			l := newLingerer()
			h := start(t, multiPoint("Lingerer"), withPlugin(l), withCycleTimeout(2*time.Second))
			h.addNodes(node("node-1", "4"))

			name := "linger-" + strings.ToLower(tt.point)
			createPod(t, client, pod(name, "100m", func(p *v1.Pod) { p.Labels = map[string]string{"linger": tt.point} }))
			end := h.await(name, name+"'s first cycle to end", ofKind(event.KindCycleEnd)).CycleEnd
			if end.Result != event.ResultError || !strings.Contains(end.Message, tt.point+" plugin Lingerer did not return within") {
				t.Errorf("cycle end %+v, want an error blaming Lingerer at %s", end, tt.point)
			}

			// Let the call go, should its context not have, and wait for
			// its late write.
			l.let()
			select {
			case <-l.wrote:
			case <-time.After(30 * time.Second): // a guard: the write follows at once
				t.Fatal("the lingering call never woke")
			}
			if !l.cancelled.Load() {
				t.Error("the abandoned call's context was not cancelled")
			}
			if tt.unreserves {
				select {
				case saw := <-l.unreserveSaw:
					if saw {
						t.Error("Unreserve saw what the abandoned call wrote after its timeout")
					}
				default:
					t.Error("Unreserve did not run before the cycle ended")
				}
			}
			// The next attempt does not linger and binds.
			if got := waitBound(t, client, name); got != "node-1" {
				t.Errorf("%s bound to %q", name, got)
			}
		})
	}
}
