package minisched_test

import (
	"strings"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"minisched/event"
	"minisched/minisched"
)

// TestParseSchedulerGates: one scheduler takes kube-scheduler's flag form,
// and only the gates nothing but the scheduler reads.
func TestParseSchedulerGates(t *testing.T) {
	tests := []struct {
		value, canonical, wantErr string
	}{
		{value: "", canonical: ""},
		{value: "OpportunisticBatching=false", canonical: "OpportunisticBatching=false"},
		{value: " SchedulerPopFromBackoffQ=false, SchedulerAsyncAPICalls=true", canonical: "SchedulerAsyncAPICalls=true,SchedulerPopFromBackoffQ=false"},
		{value: "GenericWorkload=true", wantErr: "only for the whole run"},
		{value: "DRAExtendedResource=false", wantErr: "only for the whole run"},
		{value: "OpportunisticBatching", wantErr: "is not Gate=true or Gate=false"},
		{value: "OpportunisticBatching=maybe", wantErr: "want true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			_, canonical, err := minisched.ParseSchedulerGates(tt.value)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got %v, want an error with %q", err, tt.wantErr)
			case canonical != tt.canonical:
				t.Errorf("canonical form %q, want %q", canonical, tt.canonical)
			}
		})
	}
}

// TestSchedulerGatesApplyToOneScheduler: a scheduler restarted with
// OpportunisticBatching=false in its tuning does not batch (its cycles
// carry no batching record), though the process's gate is on; restarted
// without, it batches again. A gate one scheduler may not set is refused
// at Restart, and the running scheduler stays.
func TestSchedulerGatesApplyToOneScheduler(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.OpportunisticBatching, true)
	h := start(t, "", func(o *minisched.ServiceOptions) { o.Tuning.FeatureGates = "OpportunisticBatching=false" })
	h.addNodes(node("node-1", "4"))
	batched := func(name string) bool {
		createPod(t, client, pod(name, "100m"))
		end := h.await(name, "its cycle's end", ofKind(event.KindCycleEnd))
		return end.CycleEnd.Batch != nil
	}
	if batched("off-1") {
		t.Error("with OpportunisticBatching=false for this scheduler, a cycle has a batching record")
	}
	cfg := h.svc.Config()
	tuning := h.svc.Tuning()
	tuning.FeatureGates = ""
	h.svc.SetTuning(tuning)
	if err := h.svc.Restart(cfg); err != nil {
		t.Fatal(err)
	}
	if !batched("on-1") {
		t.Error("with the process's gate (on), a cycle has no batching record")
	}

	running := h.svc.Scheduler()
	tuning.FeatureGates = "GenericWorkload=true"
	h.svc.SetTuning(tuning)
	if err := h.svc.Restart(cfg); err == nil || !strings.Contains(err.Error(), "only for the whole run") {
		t.Errorf("restart with GenericWorkload for one scheduler: %v", err)
	}
	if h.svc.Scheduler() != running {
		t.Error("a refused restart replaced the running scheduler")
	}
}
