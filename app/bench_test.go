package app_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minisched/app"
)

// benchJSON is what `minisched bench -o json` prints, as far as the tests
// read it.
type benchJSON struct {
	Rounds []struct {
		Runs []struct {
			Scheduler string
			Measures  []struct {
				Name          string
				Pods, Placed  int
				PodsPerSecond float64
				CPUPerPod     float64
				APICalls      string
			}
		}
	}
	Plugins []struct {
		Point, Plugin string
		Calls         int64
		Share         float64
		Binding       bool
	}
	Cycles int
}

// TestBench runs upstream's scheduler_perf workloads, from the module
// cache, on minisched and on kube-scheduler, each run in a process of its
// own (this test binary as minisched): both place every measured pod, and
// minisched's plugins report their calls at the points the workload
// exercises. Under -short (the race detector's pass) it runs the cases
// marked short: the others add no code of their own to race.
func TestBench(t *testing.T) {
	// The runs' processes are this binary; they are minisched with it.
	t.Setenv("MINISCHED_AS_MAIN", "1")
	tests := []struct {
		workload string
		pods     int
		// plugins are point/plugin pairs that must have been called.
		plugins []string
		// apiCalls is a figure of the API calls per pod the report must
		// show; one binding per pod when empty.
		apiCalls string
		short    bool
	}{
		{"SchedulingBasic/5Nodes", 10, []string{"PreFilter/NodeResourcesFit", "Filter/NodeResourcesFit", "Filter/TaintToleration",
			"Score/NodeResourcesBalancedAllocation", "Reserve/VolumeBinding", "Bind/DefaultBinder"}, "", true},
		{"TopologySpreading/5Nodes", 10, []string{"PreFilter/PodTopologySpread", "Filter/PodTopologySpread", "PreScore/PodTopologySpread", "Bind/DefaultBinder"}, "", false},
		// createAny makes a Service, whose selector the default
		// constraints spread the pods by.
		{"DefaultTopologySpreading/5Nodes", 10, []string{"PreFilter/PodTopologySpread", "Score/PodTopologySpread", "Bind/DefaultBinder"}, "", false},
		// Pods made unschedulable by six plugins, a barrier until each
		// was tried, then updateAny (a resize among them) to free them:
		// the window watches the 60 of them.
		{"EventHandlingPodUpdate/1Node_10Pods", 60, []string{"Filter/NodeUnschedulable", "Filter/TaintToleration",
			"Filter/NodeResourcesFit", "Filter/PodTopologySpread", "PreEnqueue/SchedulingGates", "Bind/DefaultBinder"}, "POST pods/binding 1.17", false},
		// DRA: the resourceclaim controller makes each pod's claim from
		// its template, the plugin allocates it and PreBind writes it.
		{"SchedulingWithResourceClaimTemplate/fast", 10, []string{"PreFilter/DynamicResources", "Filter/DynamicResources",
			"Reserve/DynamicResources", "PreBind/DynamicResources", "Bind/DefaultBinder"}, "POST resourceclaims 1.00", true},
		// Pod groups (GenericWorkload): createPodGroups makes the gangs,
		// GangScheduling holds each until it is whole and its pods at
		// Permit until they all are assumed, and the PodGroups' status
		// is written once each.
		{"GangScheduling/10Nodes_3Gangs", 9, []string{"PreEnqueue/GangScheduling", "Permit/GangScheduling", "Bind/DefaultBinder"}, "PATCH podgroups/status 0.33", false},
	}
	for _, tt := range tests {
		if testing.Short() && !tt.short {
			continue
		}
		t.Run(tt.workload, func(t *testing.T) {
			dir := t.TempDir()
			page, profile := filepath.Join(dir, "report.html"), filepath.Join(dir, "cpu")
			code, stdout, stderr := runCommand(t, "bench", "--against", "kube-scheduler", "--output", "json", "--html", page, "--cpuprofile", profile, tt.workload)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep benchJSON
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("reading the report: %v\n%s", err, stdout)
			}
			if len(rep.Rounds) != 1 || len(rep.Rounds[0].Runs) != 2 {
				t.Fatalf("want 1 round of 2 runs, got %+v", rep.Rounds)
			}
			seen := map[string]bool{}
			for _, run := range rep.Rounds[0].Runs {
				seen[run.Scheduler] = true
				if len(run.Measures) != 1 {
					t.Fatalf("%s: want 1 measured window, got %+v", run.Scheduler, run.Measures)
				}
				m := run.Measures[0]
				apiCalls := cmp.Or(tt.apiCalls, "POST pods/binding 1.00")
				if m.Pods != tt.pods || m.Placed != tt.pods || m.PodsPerSecond <= 0 || m.CPUPerPod <= 0 || !strings.Contains(m.APICalls, apiCalls) {
					t.Errorf("%s: want %d of %d pods placed, a rate, CPU and %q; got %+v", run.Scheduler, tt.pods, tt.pods, apiCalls, m)
				}
			}
			if !seen["minisched"] || !seen["kube-scheduler"] {
				t.Errorf("want runs of minisched and kube-scheduler, got %v", seen)
			}
			calls := map[string]int64{}
			for _, r := range rep.Plugins {
				calls[r.Point+"/"+r.Plugin] = r.Calls
				if r.Binding != (r.Point == "Bind" || r.Point == "PreBindPreFlight" || r.Point == "PreBind" || r.Point == "PostBind") {
					t.Errorf("%s/%s: binding %t", r.Point, r.Plugin, r.Binding)
				}
				if !r.Binding && (r.Share <= 0 || r.Share > 16) {
					t.Errorf("%s/%s: share %v of the cycles", r.Point, r.Plugin, r.Share)
				}
			}
			// The workload's every pod, measured or not, has one cycle.
			if rep.Cycles < tt.pods {
				t.Errorf("%d scheduling cycles, want at least %d", rep.Cycles, tt.pods)
			}
			for _, want := range tt.plugins {
				if calls[want] < int64(tt.pods) {
					t.Errorf("%s: %d calls, want at least %d (rows: %v)", want, calls[want], tt.pods, calls)
				}
			}
			checkHTMLReport(t, page, rep)
			for _, which := range []string{"minisched", "kube-scheduler"} {
				checkCPUProfile(t, profile+"."+which+".1")
			}
		})
	}
}

// checkCPUProfile reads a --cpuprofile file: runtime/pprof's, a gzipped
// protocol buffer, not empty.
func checkCPUProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the CPU profile: %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the CPU profile %s: %v", path, err)
	}
	if n, err := io.Copy(io.Discard, z); err != nil || n == 0 {
		t.Errorf("the CPU profile %s: %d bytes, %v", path, n, err)
	}
}

// checkHTMLReport reads the --html page: self-contained (no script, no
// address it would load), both runs in its table, and every plugin of the
// JSON report in the flame (a box titled with it) or the table.
func checkHTMLReport(t *testing.T, path string, rep benchJSON) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the HTML report: %v", err)
	}
	page := string(b)
	for _, bad := range []string{"<script", "src=", "href=", "url(", "@import", "ZgotmplZ"} {
		if strings.Contains(page, bad) {
			t.Errorf("the HTML report holds %q: it must load nothing, and the template must have written every value", bad)
		}
	}
	for _, want := range []string{"<svg", "kube-scheduler", "minisched", "pods/s over kube-scheduler"} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	for _, r := range rep.Plugins {
		row := "<td>" + r.Point + "</td><td>" + r.Plugin + "</td>"
		if !strings.Contains(page, row) {
			t.Errorf("the HTML report's table lacks %s/%s", r.Point, r.Plugin)
		}
		if !r.Binding && !strings.Contains(page, "<title>"+r.Plugin+" at "+r.Point+":") {
			t.Errorf("the HTML report's flame lacks %s/%s", r.Point, r.Plugin)
		}
	}
}

// TestBenchRefuses: what the bench cannot run it says, and runs nothing.
func TestBenchRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no workload", []string{"bench"}, "name one workload"},
		{"an unknown workload", []string{"bench", "SchedulingBasic/7Nodes"}, "has no workload 7Nodes"},
		{"an unknown scheduler", []string{"bench", "--against", "volcano", "SchedulingBasic/5Nodes"}, `--against "volcano"`},
		{"no rounds", []string{"bench", "--rounds", "0", "SchedulingBasic/5Nodes"}, "--rounds 0"},
		{"a gate minisched does not model", []string{"bench", "TopologyAwareScheduling/10Nodes_3Gangs"}, "topology-aware workload scheduling (alpha) is not modelled"},
		{"a missing directory", []string{"bench", "--workloads", "no/such/dir", "SchedulingBasic/5Nodes"}, "no/such/dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			err := app.Run(context.Background(), tt.args, &out, &errs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error naming %q, got %v", tt.want, err)
			}
			if out.Len() > 0 {
				t.Errorf("printed %q", out.String())
			}
		})
	}
}

// TestBenchList lists upstream's workloads, each supported or skipped with
// why.
func TestBenchList(t *testing.T) {
	code, stdout, stderr := runCommand(t, "bench", "--list")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"SchedulingBasic/5Nodes", "supported", "skipped: feature gates: TopologyAwareWorkloadScheduling=true", " supported, "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the list lacks %q", want)
		}
	}
	// DRA workloads run (the bench runs the resourceclaim controller),
	// and so do a steady state and pod groups.
	for _, line := range strings.Split(stdout, "\n") {
		for _, w := range []string{"SchedulingWithResourceClaimTemplate/fast ", "SchedulingWithResourceClaimTemplate/half_100nodes ", "GangScheduling/10Nodes_3Gangs "} {
			if strings.HasPrefix(line, w) && !strings.HasSuffix(line, " supported") {
				t.Errorf("want it supported: %q", line)
			}
		}
	}
}
