package app

// --feature-gates, as kube-scheduler's: the gates apply to the whole run,
// the embedded apiserver and controllers as well as the scheduler, since
// they share the process's gate.

import (
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"

	"minisched/minisched"
)

// unmodelled are the scheduler's gates whose value other than the default
// minisched does not model yet: it would show scheduling kube-scheduler
// would not do. docs/FIDELITY.md says so too.
var unmodelled = map[featuregate.Feature]string{
	features.TopologyAwareWorkloadScheduling: "topology-aware workload scheduling (alpha) is not modelled",
	features.CompositePodGroup:               "composite pod groups (alpha) are not modelled",
	features.SchedulerPreQueueingHints:       "pre-queueing hints are not modelled",
}

// parseFeatureGates reads A=true,B=false and checks it on a copy of the
// process's gate, so that a refused value changes nothing: an unknown gate,
// one locked to its default, or one minisched does not model is an error.
func parseFeatureGates(value string) (map[string]bool, error) {
	gates, err := minisched.ParseGates(value)
	if err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	if len(gates) == 0 {
		return nil, nil
	}
	if err := checkFeatureGates(gates); err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	return gates, nil
}

// checkFeatureGates tries the gates on a copy of the process's gate: an
// unknown gate, one locked to its default, or one minisched does not model
// is an error, and nothing changes.
func checkFeatureGates(gates map[string]bool) error {
	probe := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := probe.SetFromMap(gates); err != nil {
		return err
	}
	defaults := utilfeature.DefaultMutableFeatureGate.GetAll()
	for name, on := range gates {
		if why, ok := unmodelled[featuregate.Feature(name)]; ok && on != defaults[featuregate.Feature(name)].Default {
			return fmt.Errorf("%s=%t: minisched cannot show it yet: %s", name, on, why)
		}
	}
	return nil
}

// setFeatureGates sets the gates for this process and returns what puts the
// values before back (for a process that starts minisched more than once,
// such as the tests).
func setFeatureGates(gates map[string]bool) (restore func(), err error) {
	if len(gates) == 0 {
		return func() {}, nil
	}
	before := map[string]bool{}
	for name := range gates {
		before[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	return func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(before) }, nil
}
