package scenario

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary documents to the scenario parser: it must never
// panic, and must refuse with an *Error that the API turns into a 400.
func FuzzParse(f *testing.F) {
	f.Add([]byte("apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n  - wait: {duration: 1s}\n"))
	f.Add([]byte("apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n  - create: {count: 3, manifest: {apiVersion: v1, kind: Node, metadata: {name: \"n-{{i}}\"}}}\n  - expect: {scheduledPods: 0}\n"))
	f.Add([]byte(`{"apiVersion":"minisched/v1","kind":"Scenario","spec":{"steps":[{"fly":1}]}}`))
	f.Add([]byte("spec: [\n"))
	f.Add([]byte("apiVersion: minisched/v1\nkind: Scenario\nspec: {queue: {maxInUnschedulable: soon}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data)
		var se *Error
		switch {
		case err != nil && !errors.As(err, &se):
			t.Fatalf("Parse(%q) = %v: not an *Error", data, err)
		case err == nil && (sc.APIVersion != APIVersion || sc.Kind != Kind):
			t.Fatalf("Parse(%q) accepted %s/%s", data, sc.APIVersion, sc.Kind)
		}
	})
}

func TestParse(t *testing.T) {
	head := "apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n"
	tests := []struct {
		name, body, wantErr string
	}{
		{"a wait", head + "  - wait: {duration: 2s}\n", ""},
		{"unknown step names its path", head + "  - wait: {duration: 1s}\n  - fly: {}\n", `spec.steps[1]: unknown field "fly"`},
		{"YAML syntax names the line", head + "  - wait: {duration: 1s\n", "line"},
		{"bad duration", head + "  - wait: {duration: soon}\n", "spec.steps[0]"},
		{"wrong kind", "apiVersion: minisched/v1\nkind: Play\n", "kind Scenario"},
		{"empty", "", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.body))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Parse: %v, want error %q", err, tt.wantErr)
			}
		})
	}
}
