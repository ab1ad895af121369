package schedconfig

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// FuzzLoad feeds arbitrary documents to the configuration loader: it must
// never panic, must refuse with an *Error (the API's 422), and what it takes
// has a profile, each of its own name.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"))
	f.Add([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: NodeNumber, weight: 3}]\n"))
	f.Add([]byte(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"a"},{"schedulerName":"b"}]}`))
	f.Add([]byte("apiVersion: v1\nkind: Pod\n"))
	f.Add([]byte("{{{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Load(data, "default-scheduler")
		var ce *Error
		switch {
		case err != nil && !errors.As(err, &ce):
			t.Fatalf("Load(%q) = %v: not an *Error", data, err)
		case err == nil && len(cfg.Profiles) == 0:
			t.Fatalf("Load(%q) accepted no profile", data)
		case err == nil:
			seen := map[string]bool{}
			for _, p := range cfg.Profiles {
				if seen[p.SchedulerName] || p.SchedulerName == "" {
					t.Fatalf("Load(%q) accepted profiles %q twice or unnamed", data, p.SchedulerName)
				}
				seen[p.SchedulerName] = true
			}
		}
	})
}

func TestLoad(t *testing.T) {
	const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	tests := []struct {
		name, body, wantErr, wantName string
	}{
		{"defaults", head, "", "given"},
		{"named profile keeps its name", head + "profiles: [{schedulerName: mine}]\n", "", "mine"},
		{"a negative weight is upstream's to take", head + "profiles: [{schedulerName: given, plugins: {multiPoint: {enabled: [{name: NodeNumber, weight: -2}]}}}]\n", "", "given"},
		{"two profiles", head + "profiles: [{schedulerName: a}, {schedulerName: b}]\n", "", "a"},
		{"two profiles of one name", head + "profiles: [{schedulerName: a}, {schedulerName: a}]\n", "Duplicate value", ""},
		{"an extender", head + "extenders: [{urlPrefix: 'http://127.0.0.1:1/', filterVerb: filter}]\n", "", "given"},
		{"an extender that prioritizes without a weight", head + "extenders: [{urlPrefix: 'http://127.0.0.1:1/', prioritizeVerb: prioritize}]\n", "positive weight", ""},
		{"wrong kind", "apiVersion: v1\nkind: Pod\n", "KubeSchedulerConfiguration", ""},
		{"empty", "", "empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load([]byte(tt.body), "given")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Profiles[0].SchedulerName != tt.wantName {
				t.Errorf("scheduler name %q, want %q", cfg.Profiles[0].SchedulerName, tt.wantName)
			}
		})
	}
	data, err := Encode(mustDefault(t))
	if err != nil || !strings.Contains(string(data), "kind: KubeSchedulerConfiguration") {
		t.Errorf("Encode: %v\n%s", err, data)
	}
	if back, err := Load(data, ""); err != nil || back.Profiles[0].SchedulerName != "default-scheduler" {
		t.Errorf("the encoded defaults do not load back: %v", err)
	}
}

func mustDefault(t *testing.T) *config.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := Default("")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
