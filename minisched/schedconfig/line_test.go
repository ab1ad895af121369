package schedconfig

import (
	"errors"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	const doc = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 2
      - name: EBSLimits
        weight: 3
`
	tests := []struct {
		name string
		data string
		want int
	}{
		{"a plugin removed from v1: the plugin's line", doc, 10},
		{"an unknown field", strings.Replace(doc, "weight: 2", "wieght: 2", 1), 9},
		{"an unknown top-level field", doc + "bogusField: 1\n", 12},
		{"a YAML syntax error: the parser's line", "kind: x\nprofiles: [\n  - {a: b\n", 2},
		{"a top-level field", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 500\n", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load([]byte(tt.data), "default-scheduler")
			if err == nil {
				t.Fatal("Load took it")
			}
			if got := Line([]byte(tt.data), err); got != tt.want {
				t.Errorf("Line = %d, want %d, for %v", got, tt.want, err)
			}
		})
	}
}

// The framework refuses an unknown plugin when it is built, after Load:
// its message names the plugin.
func TestLineOfAFrameworkError(t *testing.T) {
	doc := "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n"
	if got := Line([]byte(doc), errors.New(`building the framework: ScorePlugin "NoSuchPlugin" does not exist`)); got != 5 {
		t.Errorf("Line = %d, want 5", got)
	}
}
