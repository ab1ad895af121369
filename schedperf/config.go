// Package schedperf runs upstream's scheduler_perf workloads
// (test/integration/scheduler_perf in k8s.io/kubernetes) as upstream writes
// them: it reads their performance-config.yaml files and templates, and
// interprets the ops a workload needs against any scheduler that watches
// the cluster it writes to. Workloads with an op or a field it does not
// interpret are skipped, saying which.
package schedperf

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// TestCase is one entry of a performance-config.yaml: ops written once,
// run with each workload's parameters.
type TestCase struct {
	Name string `json:"name"`
	// Dir is the directory of the file it came from: template paths are
	// relative to it.
	Dir                    string            `json:"-"`
	FeatureGates           map[string]bool   `json:"featureGates,omitempty"`
	SchedulerConfigPath    string            `json:"schedulerConfigPath,omitempty"`
	DefaultPodTemplatePath *string           `json:"defaultPodTemplatePath,omitempty"`
	WorkloadTemplate       []json.RawMessage `json:"workloadTemplate"`
	Workloads              []Workload        `json:"workloads"`
	Labels                 []string          `json:"labels,omitempty"`
}

// File is a path the test case names (a template, its scheduler
// configuration): relative to the directory of the file it came from.
func (tc *TestCase) File(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(tc.Dir, p)
}

// Workload is one parameterization of a test case.
type Workload struct {
	Name         string          `json:"name"`
	Params       map[string]any  `json:"params,omitempty"`
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	Labels       []string        `json:"labels,omitempty"`
}

// Load reads every performance-config.yaml under dir (upstream's
// scheduler_perf directory, or a copy of one config file's directory).
func Load(dir string) ([]*TestCase, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "performance-config.yaml" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finding the workloads in %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no performance-config.yaml under %s", dir)
	}
	sort.Strings(files)
	var out []*TestCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var cases []*TestCase
		if err := yaml.Unmarshal(data, &cases); err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		for _, tc := range cases {
			tc.Dir = filepath.Dir(f)
		}
		out = append(out, cases...)
	}
	return out, nil
}

// Find returns the test case and workload a name such as
// "SchedulingBasic/5Nodes" names.
func Find(cases []*TestCase, name string) (*TestCase, *Workload, error) {
	caseName, workload, ok := strings.Cut(name, "/")
	if !ok {
		return nil, nil, fmt.Errorf("%q: name a workload as TestCase/Workload, such as SchedulingBasic/5Nodes", name)
	}
	for _, tc := range cases {
		if tc.Name != caseName {
			continue
		}
		for i := range tc.Workloads {
			if tc.Workloads[i].Name == workload {
				return tc, &tc.Workloads[i], nil
			}
		}
		names := make([]string, len(tc.Workloads))
		for i, w := range tc.Workloads {
			names[i] = w.Name
		}
		return nil, nil, fmt.Errorf("test case %s has no workload %s; it has %s", caseName, workload, strings.Join(names, ", "))
	}
	return nil, nil, fmt.Errorf("no test case %s", caseName)
}

// Gates are the feature gates a workload runs with: the test case's, then
// the workload's over them.
func (tc *TestCase) Gates(w *Workload) map[string]bool {
	out := map[string]bool{}
	for k, v := range tc.FeatureGates {
		out[k] = v
	}
	for k, v := range w.FeatureGates {
		out[k] = v
	}
	return out
}
