package schedperf

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestResolveTemplateParams: "$name" takes the workload's parameter, and
// "$name|default" its default, read as YAML, when the workload has none,
// as upstream's runner resolves them.
func TestResolveTemplateParams(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]any
		params  map[string]any
		want    map[string]any
		wantErr bool
	}{
		{name: "a parameter", in: map[string]any{"n": "$nodes"}, params: map[string]any{"nodes": 5.0}, want: map[string]any{"n": 5.0}},
		{name: "a default the workload overrides", in: map[string]any{"n": "$devices|64"}, params: map[string]any{"devices": 8.0}, want: map[string]any{"n": 8.0}},
		{name: "a default, as a number", in: map[string]any{"n": "$devices|64"}, want: map[string]any{"n": 64.0}},
		{name: "a default, as a string", in: map[string]any{"s": "$mode|fast"}, want: map[string]any{"s": "fast"}},
		{name: "a literal", in: map[string]any{"s": "plain", "i": 3.0}, want: map[string]any{"s": "plain", "i": 3.0}},
		{name: "no parameter and no default", in: map[string]any{"n": "$missing"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := resolveTemplateParams(tt.in, tt.params)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %t", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(tt.in, tt.want) {
				t.Errorf("got %v, want %v", tt.in, tt.want)
			}
		})
	}
}

// TestCheckServed: a createAny writing an API version the embedded
// apiserver does not serve skips its workload, saying why; with the
// workload's gates, the versions scheduler_perf turns on are served too.
func TestCheckServed(t *testing.T) {
	dir := t.TempDir()
	dra := map[string]bool{"DynamicResourceAllocation": true}
	tests := []struct {
		name, template, wantSkip string
		gates                    map[string]bool
	}{
		{"a Service", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n", "", nil},
		{"a version not served", "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: c}\n", "does not serve by default", nil},
		{"a beta version a DRA workload turns on", "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: c}\n", "", dra},
		{"a DRA object", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c-{{.Index}}}\n", "", nil},
		{"a pod group without its gate", "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n", "nor with the workload's feature gates", dra},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("t%d.yaml", i)
			if err := os.WriteFile(filepath.Join(dir, path), []byte(tt.template), 0o600); err != nil {
				t.Fatal(err)
			}
			err := checkServed(&TestCase{Dir: dir}, &createAnyOp{TemplatePath: path}, RuntimeConfig(tt.gates))
			var skip *SkipError
			switch {
			case tt.wantSkip == "" && err != nil:
				t.Errorf("skipped: %v", err)
			case tt.wantSkip != "" && (!errors.As(err, &skip) || !strings.Contains(skip.Reason, tt.wantSkip)):
				t.Errorf("got %v, want a skip saying %q", err, tt.wantSkip)
			}
		})
	}
}

// TestPlanReadsOps: the ops of churn, updateAny, a barrier, a rate of
// deletes and a steady state are read as upstream's runner validates them, with parameters
// put in; a value upstream refuses is an error, not a skip.
func TestPlanReadsOps(t *testing.T) {
	tests := []struct {
		name    string
		op      string
		params  map[string]any
		want    any
		wantErr string
	}{
		{name: "churn in create mode", op: `{"opcode": "churn", "mode": "create", "templatePaths": ["p.yaml"], "intervalMilliseconds": 200}`,
			want: &churnOp{Opcode: "churn", Mode: "create", TemplatePaths: []string{"p.yaml"}, IntervalMilliseconds: 200}},
		{name: "churn in recreate mode without a number", op: `{"opcode": "churn", "mode": "recreate", "templatePaths": ["p.yaml"]}`, wantErr: "number must be set"},
		{name: "churn in another mode", op: `{"opcode": "churn", "mode": "delete", "templatePaths": ["p.yaml"]}`, wantErr: `mode "delete"`},
		{name: "churn without a template", op: `{"opcode": "churn", "mode": "create"}`, wantErr: "templatePaths"},
		{name: "updateAny with a count parameter", op: `{"opcode": "updateAny", "countParam": "$pods", "templatePath": "u.yaml", "updatePerSecond": 100, "subresources": ["resize"]}`,
			params: map[string]any{"pods": 20.0},
			want:   &updateAnyOp{Opcode: "updateAny", Count: ptr.To(20), CountParam: "$pods", TemplatePath: "u.yaml", UpdatePerSecond: 100, Subresources: []string{"resize"}}},
		{name: "updateAny without a template", op: `{"opcode": "updateAny"}`, wantErr: "templatePath"},
		{name: "a barrier by default", op: `{"opcode": "barrier"}`, want: &barrierOp{Opcode: "barrier", StageRequirement: "Scheduled"}},
		{name: "a barrier for pods tried", op: `{"opcode": "barrier", "stageRequirement": "Attempted"}`, want: &barrierOp{Opcode: "barrier", StageRequirement: "Attempted"}},
		{name: "a barrier for another stage", op: `{"opcode": "barrier", "stageRequirement": "Bound"}`, wantErr: `stageRequirement "Bound"`},
		{name: "deletes at a rate", op: `{"opcode": "deletePods", "namespace": "n", "deletePodsPerSecond": 50, "skipWaitToCompletion": true}`,
			want: &deletePodsOp{Opcode: "deletePods", Namespace: "n", DeletePodsPerSecond: 50, SkipWaitToCompletion: true}},
		{name: "pod sets, unrolled", op: `{"opcode": "createPodSets", "countParam": "$sets", "namespacePrefix": "init-ns", "createPodsOp": {"opcode": "createPods", "countParam": "$pods"}}`,
			params: map[string]any{"sets": 2.0, "pods": 3.0},
			want: []any{
				&createPodsOp{Opcode: "createPods", Count: 3, CountParam: "$pods", Namespace: ptr.To("init-ns-0"), SignatureBatchSize: 1},
				&createPodsOp{Opcode: "createPods", Count: 3, CountParam: "$pods", Namespace: ptr.To("init-ns-1"), SignatureBatchSize: 1},
			}},
		{name: "pod sets of another op", op: `{"opcode": "createPodSets", "count": 1, "createPodsOp": {"opcode": "barrier"}}`, wantErr: "createPodsOp is a barrier op"},
		{name: "deletes at a negative rate", op: `{"opcode": "deletePods", "deletePodsPerSecond": -1}`, wantErr: "negative"},
		{name: "a steady state from parameters", op: `{"opcode": "createPods", "countParam": "$pods", "steadyStateParam": "$steady", "durationParam": "$duration", "collectMetrics": true}`,
			params: map[string]any{"pods": 10.0, "steady": true, "duration": "10s"},
			want: &createPodsOp{Opcode: "createPods", Count: 10, CountParam: "$pods", SteadyState: true, SteadyStateParam: "$steady",
				Duration: metav1.Duration{Duration: 10 * time.Second}, DurationParam: "$duration", CollectMetrics: true, SignatureBatchSize: 1}},
		{name: "a steady state without a duration", op: `{"opcode": "createPods", "count": 1, "steadyState": true}`, wantErr: "duration must be > 0"},
		{name: "a steady state that skips waiting", op: `{"opcode": "createPods", "count": 1, "steadyState": true, "duration": "1s", "skipWaitToCompletion": true}`,
			wantErr: "skipWaitToCompletion and steadyState"},
		{name: "metrics of pods not waited for", op: `{"opcode": "createPods", "count": 1, "collectMetrics": true, "skipWaitToCompletion": true}`,
			wantErr: "collectMetrics and skipWaitToCompletion"},
		{name: "a duration that is not one", op: `{"opcode": "createPods", "count": 1, "durationParam": "$d"}`, params: map[string]any{"d": "soon"}, wantErr: "parameter $d"},
		{name: "pod groups from parameters", op: `{"opcode": "createPodGroups", "countParam": "$groups", "namespace": "gang-ns-0", "templatePath": "pg.yaml", "templateParams": {"podsPerGroup": "$size"}}`,
			params: map[string]any{"groups": 3.0, "size": 4.0},
			want: &createPodGroupsOp{Opcode: "createPodGroups", Count: 3, CountParam: "$groups", Namespace: "gang-ns-0", TemplatePath: "pg.yaml",
				TemplateParams: map[string]any{"podsPerGroup": 4.0}}},
		{name: "pod groups in no namespace", op: `{"opcode": "createPodGroups", "count": 1, "templatePath": "pg.yaml"}`, wantErr: "namespace must be set"},
		{name: "no pod group", op: `{"opcode": "createPodGroups", "count": 0, "namespace": "n", "templatePath": "pg.yaml"}`, wantErr: "count must be greater than 0"},
	}
	dir := t.TempDir()
	for _, name := range []string{"p.yaml", "u.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := Plan(&TestCase{Dir: dir, WorkloadTemplate: []json.RawMessage{json.RawMessage(tt.op)}}, &Workload{Params: tt.params})
			if tt.wantErr != "" {
				var skip *SkipError
				if err == nil || errors.As(err, &skip) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, ok := tt.want.([]any)
			if !ok {
				want = []any{tt.want}
			}
			if !reflect.DeepEqual(ops, want) {
				t.Errorf("got %+v, want %+v", ops, want)
			}
		})
	}
}
