package schedperf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
// apiserver does not serve, or a DRA object, skips its workload, saying
// why; a Service runs.
func TestCheckServed(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, template, wantSkip string
	}{
		{"a Service", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n", ""},
		{"a version not served", "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: c}\n", "does not serve by default"},
		{"a DRA object", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c-{{.Index}}}\n", "need the resourceclaim controller"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("t%d.yaml", i)
			if err := os.WriteFile(filepath.Join(dir, path), []byte(tt.template), 0o600); err != nil {
				t.Fatal(err)
			}
			err := checkServed(&TestCase{Dir: dir}, &createAnyOp{TemplatePath: path})
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
