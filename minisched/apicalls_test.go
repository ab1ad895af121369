package minisched

import (
	"context"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"minisched/minisched/schedconfig"
)

// TestAsyncAPICallsWiring: with SchedulerAsyncAPICalls on, as under
// kube-scheduler's New, every profile's framework has the API dispatcher
// and an APICacher (DefaultBinder and preemption send their calls through
// it), and minisched's own status patches go there too; with the gate off
// there is neither. The placement differential runs a seed with the gate on
// against kube-scheduler (diffRuns).
func TestAsyncAPICallsWiring(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "gate off", true: "gate on"}[on], func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.SchedulerAsyncAPICalls, on)
			cfg, err := schedconfig.Load([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n- schedulerName: b\n"), "")
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(context.Background(), Options{Client: fake.NewClientset(), Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Discard()
			if got := s.dispatcher != nil; got != on {
				t.Errorf("a dispatcher: %t, want %t", got, on)
			}
			if got := s.apiCacher != nil; got != on {
				t.Errorf("minisched's status patches through the dispatcher: %t, want %t", got, on)
			}
			for _, p := range s.order {
				if got := p.fw.APICacher() != nil; got != on {
					t.Errorf("profile %s: the framework's APICacher set: %t, want %t", p.name, got, on)
				}
			}
		})
	}
}
