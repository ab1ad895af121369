package minisched

// Feature gates one scheduler may set apart from the process's: the gates
// kube-scheduler reads once, when it builds its scheduler, and nothing else
// in the process reads (not the plugins, the apiserver or the controllers).
// A comparison may thus run A with a gate off and B with it on, or a
// scenario set one for its run, while the process's --feature-gates stay.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"
)

// SchedulerGates are the gates a scheduler of its own may set.
var SchedulerGates = []featuregate.Feature{
	features.OpportunisticBatching,
	features.SchedulerAsyncAPICalls,
	features.SchedulerPopFromBackoffQ,
}

// ParseGates reads kube-scheduler's --feature-gates form, A=true,B=false;
// the empty string is no gate. It checks the form only, not the names.
func ParseGates(value string) (map[string]bool, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	gates := map[string]bool{}
	for _, kv := range strings.Split(value, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not Gate=true or Gate=false", kv)
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want true or false", k, v)
		}
		gates[k] = on
	}
	return gates, nil
}

// FormatGates writes gates in the flag's form, sorted.
func FormatGates(gates map[string]bool) string {
	parts := make([]string, 0, len(gates))
	for name, on := range gates {
		parts = append(parts, name+"="+strconv.FormatBool(on))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// ParseSchedulerGates reads the flag's form for one scheduler: only
// SchedulerGates are allowed. It returns the gates in a canonical form too
// (FormatGates), which Tuning keeps.
func ParseSchedulerGates(value string) (map[featuregate.Feature]bool, string, error) {
	parsed, err := ParseGates(value)
	if err != nil {
		return nil, "", fmt.Errorf("feature gates: %w", err)
	}
	if len(parsed) == 0 {
		return nil, "", nil
	}
	gates := map[featuregate.Feature]bool{}
	for name, on := range parsed {
		if !slices.Contains(SchedulerGates, featuregate.Feature(name)) {
			return nil, "", fmt.Errorf("feature gates: %s cannot be set for one scheduler, only for the whole run (--feature-gates); one scheduler may set %s", name, gateNames())
		}
		gates[featuregate.Feature(name)] = on
	}
	return gates, FormatGates(parsed), nil
}

func gateNames() string {
	names := make([]string, len(SchedulerGates))
	for i, g := range SchedulerGates {
		names[i] = string(g)
	}
	return strings.Join(names, ", ")
}

// enabled is the gate for this scheduler: its own value when Options.Gates
// sets one, else the process's.
func (o *Options) enabled(gate featuregate.Feature) bool {
	if on, ok := o.Gates[gate]; ok {
		return on
	}
	return utilfeature.DefaultFeatureGate.Enabled(gate)
}
