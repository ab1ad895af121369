package minisched_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// slowBinder waits at PreBind as VolumeBinding waits for its volumes, until
// its context ends or wait passes.
type slowBinder struct{ wait time.Duration }

func (slowBinder) Name() string { return "SlowBinder" }

func (slowBinder) PreBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return nil, nil
}

func (b slowBinder) PreBind(ctx context.Context, _ fwk.CycleState, _ *v1.Pod, _ string) *fwk.Status {
	select {
	case <-time.After(b.wait):
		return nil
	case <-ctx.Done():
		return fwk.AsStatus(ctx.Err())
	}
}

// TestBindingCycleWaitsAsUpstreamDoes: the hang guard of the scheduling
// cycle does not bound the binding cycle, where upstream's plugins wait (a
// volume's binding, 600 s by default). Only --binding-timeout, when set
// below a plugin's wait, cuts it.
func TestBindingCycleWaitsAsUpstreamDoes(t *testing.T) {
	t.Run("a PreBind wait longer than the cycle timeout binds", func(t *testing.T) {
		h := start(t, multiPoint("SlowBinder"), withPlugin(slowBinder{wait: 3 * time.Second}), withCycleTimeout(time.Second))
		h.addNodes(node("node-1", "4"))
		createPod(t, client, pod("patient-binding", "100m"))
		if got := waitBound(t, client, "patient-binding"); got != "node-1" {
			t.Errorf("bound to %q, want node-1", got)
		}
	})
	t.Run("a binding timeout set below the wait fails the binding", func(t *testing.T) {
		h := start(t, multiPoint("SlowBinder"), withPlugin(slowBinder{wait: time.Minute}), withBindingTimeout(time.Second))
		h.addNodes(node("node-1", "4"))
		createPod(t, client, pod("cut-binding", "100m"))
		end := h.await("cut-binding", "the binding's end", ofKind(event.KindBindingEnd)).BindingEnd
		if end.Bound || !strings.Contains(end.Message, "PreBind plugin SlowBinder did not return within 1s") {
			t.Errorf("binding end %+v, want a failure naming SlowBinder and the 1s limit", end)
		}
	})
}
