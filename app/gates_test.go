package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		{"GenericWorkload=true", ""},
		{"GenericWorkload=true,TopologyAwareWorkloadScheduling=true", "topology-aware workload scheduling (alpha) is not modelled"},
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

// TestGangSchedulingRun: with --feature-gates=GenericWorkload=true the
// embedded apiserver serves PodGroups, kubectl's habits work for them, and
// the default profile has GangScheduling (the configuration is defaulted
// under the run's gates). A gang's pods made before their PodGroup wait for
// it in a lane of their own (GET /queue, and the snapshot's vocabulary
// names it); with the PodGroup, two pods of three wait for their minimum,
// gated by GangScheduling; with the third, the group is scheduled whole,
// runs on the simulated kubelets, and the PodGroup says it was scheduled.
func TestGangSchedulingRun(t *testing.T) {
	inst := start(t, func(f *app.Flags) { f.FeatureGates = "GenericWorkload=true" })
	s := newStory(t, inst)
	for _, n := range []string{"a", "b", "c"} {
		s.node(n, "1")
	}
	kubectl := kubectlFor(t, inst)
	dir := t.TempDir()
	apply := func(name, manifest string) {
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		kubectl("apply", "-n", s.ns, "-f", path)
	}
	member := func(name string) {
		apply(name, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  schedulingGroup: {podGroupName: trio}
  nodeSelector: {story: %s}
  containers: [{name: c, image: "pause:3.10", resources: {requests: {cpu: 800m}}}]
`, name, s.ns))
	}
	type queued struct {
		PodGroup     string `json:"podGroup"`
		GatingPlugin string `json:"gatingPlugin"`
	}
	var q struct {
		Unschedulable      []queued `json:"unschedulable"`
		IncompletePodGroup []queued `json:"incompletePodGroup"`
	}
	member("trio-0")
	member("trio-1")
	s.waitFor("both pods waiting for their PodGroup", func() bool {
		getJSON(t, inst.URL+"api/v1/queue", &q)
		return len(q.IncompletePodGroup) == 2 && q.IncompletePodGroup[0].PodGroup == s.ns+"/trio"
	})
	var snap struct {
		Vocabulary struct{ Queues []string }
	}
	getJSON(t, inst.URL+"api/v1/snapshot", &snap)
	if !slices.Contains(snap.Vocabulary.Queues, "incompletePodGroup") || !slices.Contains(snap.Vocabulary.Queues, "pendingPodGroup") {
		t.Errorf("the snapshot's queues %v, want the pod groups' lanes", snap.Vocabulary.Queues)
	}

	apply("trio", `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: trio}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
`)
	s.waitFor("two pods gated by GangScheduling", func() bool {
		q.Unschedulable = nil
		getJSON(t, inst.URL+"api/v1/queue", &q)
		return len(q.Unschedulable) == 2 && q.Unschedulable[0].GatingPlugin == "GangScheduling" && q.Unschedulable[1].GatingPlugin == "GangScheduling"
	})
	member("trio-2")
	s.waitFor("the three pods running", func() bool {
		return s.phase("trio-0") == v1.PodRunning && s.phase("trio-1") == v1.PodRunning && s.phase("trio-2") == v1.PodRunning
	})
	// kubectl warns first that v1beta1 will go (in 1.40).
	out := kubectl("get", "podgroup", "trio", "-n", s.ns, "-o", `jsonpath={.status.conditions[?(@.type=="PodGroupInitiallyScheduled")].status}`)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); lines[len(lines)-1] != "True" {
		t.Errorf("kubectl get podgroup: PodGroupInitiallyScheduled %q, want True", out)
	}

	// A reset takes the PodGroups too: a lesson can be run again.
	if code := call(t, "POST", inst.URL+"api/v1/reset", ""); code != http.StatusNoContent {
		t.Fatalf("POST reset: %d", code)
	}
	if _, err := inst.Client.SchedulingV1beta1().PodGroups(s.ns).Get(context.Background(), "trio", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a reset, the PodGroup: %v, want it gone", err)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
