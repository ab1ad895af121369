package manifest

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzDecode feeds arbitrary bodies to the decoder: it must never panic, and
// must refuse what it cannot decode with its own error type, which the API
// turns into a 400 or a 415.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}`), "application/json")
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n"), "application/yaml")
	f.Add([]byte("kind: Pod\n"), "")
	f.Add([]byte(`{"metadata":{"name":"x","labels":{"a":1}}}`), "application/json")
	f.Add([]byte("- [a, b\n"), "text/yaml")
	f.Fuzz(func(t *testing.T, data []byte, contentType string) {
		for _, into := range []runtime.Object{&v1.Node{}, &v1.Pod{}} {
			err := Decode(data, contentType, into)
			var me *Error
			if err != nil && !errors.As(err, &me) {
				t.Fatalf("Decode(%q, %q) = %v: not a manifest.Error", data, contentType, err)
			}
		}
	})
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, body, contentType string
		wantErr                 string
	}{
		{"JSON node", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}`, "application/json", ""},
		{"YAML without a kind", "metadata: {name: node-a}\n", "application/yaml", ""},
		{"wrong kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "application/yaml", "expected kind Node"},
		{"unknown field", `{"metadata":{"name":"n"},"spek":{}}`, "application/json", `unknown field "spek"`},
		{"bad type", `{"metadata":{"name":1}}`, "application/json", "malformed Node manifest"},
		{"empty", "  ", "application/json", "empty"},
		{"XML", "<node/>", "application/xml", "not supported"},
		{"two documents", "metadata: {name: a}\n---\nmetadata: {name: b}\n", "application/yaml", "2 YAML documents"},
		{"a leading separator and a comment-only document", "---\n# nodes\n---\nmetadata: {name: a}\n", "application/yaml", ""},
		{"a trailing separator", "metadata: {name: a}\n---\n", "application/yaml", ""},
		{"a bad quantity: its field and line, no regular expression", "metadata: {name: a}\nstatus:\n  allocatable:\n    cpu: 4\n    memory: 8 GB\n", "application/yaml",
			`not a quantity: status.allocatable.memory "8 GB" (line 5); write a number with an optional suffix`},
		{"a bad quantity in JSON", `{"metadata":{"name":"a"},"status":{"capacity":{"cpu":"1x"}}}`, "application/json", `status.capacity.cpu "1x" (line 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Decode([]byte(tt.body), tt.contentType, &v1.Node{})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
