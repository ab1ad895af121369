package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"

	"minisched/app"
)

// TestFeatureGatesFlag: --feature-gates takes kube-scheduler's form, checked
// against the gates of this build; an unknown gate, a locked one, or one
// minisched does not model yet is refused, saying why, before anything
// changes.
func TestFeatureGatesFlag(t *testing.T) {
	before := utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching)
	tests := []struct{ value, wantErr string }{
		{"", ""},
		{"OpportunisticBatching=false", ""},
		{"OpportunisticBatching=false,SchedulerAsyncPreemption=false", ""},
		{"NoSuchGate=true", "unrecognized feature gate"},
		{"DRAExtendedResource=false", "locked"},
		{"GenericWorkload=true", "pod groups and gang scheduling are not modelled yet"},
		{"SchedulerPopFromBackoffQ=false", ""},
		{"SchedulerAsyncAPICalls=true", ""},
		{"OpportunisticBatching", "is not Gate=true or Gate=false"},
		{"OpportunisticBatching=maybe", "want true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			_, err := app.ParseFlags([]string{"--feature-gates", tt.value})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching) != before {
		t.Error("parsing the flag changed the process's gate")
	}
}

// TestFeatureGatesApplyForTheRun: the gates are set while minisched runs,
// the dashboard's snapshot names them, and Close puts them back.
func TestFeatureGatesApplyForTheRun(t *testing.T) {
	before := utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching)
	inst := start(t, func(f *app.Flags) {
		f.FeatureGates = "OpportunisticBatching=" + map[bool]string{true: "false", false: "true"}[before]
	})
	if utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching) == before {
		t.Error("the gate is not set while minisched runs")
	}
	resp, err := http.Get(inst.URL + "api/v1/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap struct{ FeatureGates map[string]bool }
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	if got, ok := snap.FeatureGates["OpportunisticBatching"]; !ok || got == before {
		t.Errorf("the snapshot's gates %v, want OpportunisticBatching=%t", snap.FeatureGates, !before)
	}
	if err := inst.Close(); err != nil {
		t.Fatal(err)
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching) != before {
		t.Error("Close did not put the gate back")
	}
}
