package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"minisched/event"
	"minisched/internal/resttest"
	"minisched/scenario"
)

const quickScenario = `apiVersion: minisched/v1
kind: Scenario
metadata: {name: quick}
spec:
  steps:
  - create: {manifest: {apiVersion: v1, kind: Node, metadata: {name: node-1}}}
  - create:
      manifest:
        apiVersion: v1
        kind: Pod
        metadata: {name: quick-pod}
        spec: {containers: [{name: c, image: "pause:3.10"}]}
  - wait: {for: scheduled, pod: quick-pod}
  - expect: {pod: quick-pod, node: node-1}
`

const slowScenario = `apiVersion: minisched/v1
kind: Scenario
metadata: {name: slow}
spec:
  steps:
  - wait: {duration: 1m}
`

func TestScenarioREST(t *testing.T) {
	reset(t)
	// Post and poll.
	var run scenario.Run
	if code := api(t, "POST", "/api/v1/scenarios", "application/yaml", []byte(quickScenario), &run); code != http.StatusAccepted || run.ID == "" {
		t.Fatalf("post: %d %+v", code, run)
	}
	eventually(t, 30*time.Second, "the scenario to finish", func() bool {
		api(t, "GET", "/api/v1/scenarios/"+run.ID, "", nil, &run)
		return run.State != scenario.StateRunning
	})
	if run.State != scenario.StatePassed || run.Report == nil || len(run.Report.Expectations) != 1 || !run.Report.Expectations[0].Passed {
		t.Fatalf("polled run: %+v", run)
	}
	if len(run.Report.Pods) != 1 || run.Report.Pods[0].Node != "node-1" || run.Report.Pods[0].Attempts != 1 {
		t.Errorf("pod report: %+v", run.Report.Pods)
	}

	// Post and wait: a failing expectation.
	reset(t)
	failing := strings.Replace(quickScenario, "node: node-1}", "node: node-1, queue: unschedulable}", 1)
	if code := api(t, "POST", "/api/v1/scenarios?wait=true", "application/yaml", []byte(failing), &run); code != http.StatusOK {
		t.Fatalf("post with wait: %d", code)
	}
	if run.State != scenario.StateFailed || run.Report.Expectations[1].Passed || run.Report.Expectations[1].Saw != "in no queue" {
		t.Errorf("waited run: state %s, expectations %+v", run.State, run.Report.Expectations)
	}

	// One at a time, and cancel.
	var slow scenario.Run
	if code := api(t, "POST", "/api/v1/scenarios", "application/yaml", []byte(slowScenario), &slow); code != http.StatusAccepted {
		t.Fatalf("post slow: %d", code)
	}
	var e struct{ Error string }
	if code := api(t, "POST", "/api/v1/scenarios", "application/yaml", []byte(quickScenario), &e); code != http.StatusConflict {
		t.Errorf("second scenario while one runs: %d %s, want 409", code, e.Error)
	}
	if code := api(t, "DELETE", "/api/v1/scenarios/"+slow.ID, "", nil, &slow); code != http.StatusOK || slow.State != scenario.StateCancelled {
		t.Errorf("cancel: %d %+v", code, slow)
	}
	if code := api(t, "GET", "/api/v1/scenarios/run-999", "", nil, &e); code != http.StatusNotFound {
		t.Errorf("unknown run: %d", code)
	}

	// A bundled one by name, and the list.
	reset(t)
	if code := api(t, "POST", "/api/v1/scenarios?bundled=07-new-node&wait=true", "", nil, &run); code != http.StatusOK || run.State != scenario.StatePassed {
		t.Errorf("bundled 07-new-node: %d %s %+v", code, run.State, run.Report)
	}
	var listing struct {
		Bundled []struct{ Name, Title string }
		Runs    []scenario.Run
	}
	api(t, "GET", "/api/v1/scenarios", "", nil, &listing)
	if len(listing.Bundled) < 13 || listing.Bundled[0].Name != "01-random" || listing.Bundled[0].Title == "" {
		t.Errorf("bundled list: %+v", listing.Bundled)
	}
	if len(listing.Runs) < 4 || listing.Runs[0].Name != "07-new-node" {
		t.Errorf("runs, newest first: %+v", listing.Runs)
	}

	// The lesson left its nodes and pods: the same lesson again fails on
	// them, and with reset=true it empties the cluster first and passes.
	if code := api(t, "POST", "/api/v1/scenarios?bundled=07-new-node&wait=true", "", nil, &run); code != http.StatusOK ||
		run.State != scenario.StateError || !strings.Contains(run.Report.Message, "with reset=true") || len(run.Report.Steps) != 1 {
		t.Errorf("07-new-node again on its own leftovers: %d %s, want an error at its first step that says to reset: %+v", code, run.State, run.Report)
	}
	if code := api(t, "POST", "/api/v1/scenarios?bundled=07-new-node&reset=true&wait=true", "", nil, &run); code != http.StatusOK || run.State != scenario.StatePassed {
		t.Errorf("07-new-node with reset=true: %d %s %+v", code, run.State, run.Report)
	}

	// No reset while a scenario runs.
	if code := api(t, "POST", "/api/v1/scenarios", "application/yaml", []byte(slowScenario), &slow); code != http.StatusAccepted {
		t.Fatalf("post slow: %d", code)
	}
	if code := api(t, "POST", "/api/v1/reset", "", nil, &e); code != http.StatusConflict {
		t.Errorf("reset while a scenario runs: %d %s, want 409", code, e.Error)
	}
	api(t, "DELETE", "/api/v1/scenarios/"+slow.ID, "", nil, &slow)
}

func TestBadScenariosAreRefused(t *testing.T) {
	reset(t)
	head := "apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  steps:\n"
	pod := "  - create: {manifest: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}}\n"
	deploy := "  - create: {manifest: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}}}\n"
	tests := []struct {
		name    string
		body    string
		want    int
		mention string
	}{
		{"not YAML", "steps: [", 400, "line"},
		{"wrong kind", "apiVersion: minisched/v1\nkind: Play\n", 400, "kind Scenario"},
		{"unknown step", head + "  - fly: {to: moon}\n", 400, "spec.steps[0]: unknown field \"fly\""},
		{"two actions in a step", head + "  - {scheduler: pause, wait: {duration: 1s}}\n", 422, "spec.steps[0]: a step has exactly one action"},
		{"a note too long", head + "  - {scheduler: pause, note: " + strings.Repeat("x", 1001) + "}\n", 422, "spec.steps[0].note"},
		{"invalid manifest", head + "  - create: {manifest: {apiVersion: v1, kind: Node, metadata: {name: Bad_Node}}}\n", 422, "spec.steps[0].create.manifest"},
		{"manifest with a typo", head + "  - create: {manifest: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {contaners: []}}}\n", 422, "contaners"},
		{"runaway count", head + "  - create: {count: 1000000, manifest: {apiVersion: v1, kind: Node, metadata: {name: \"n-{{i}}\"}}}\n", 422, "count 1000000"},
		{"expectation about a pod never created", head + "  - expect: {pod: ghost, node: node-1}\n", 422, "no earlier step creates pod \"default/ghost\""},
		{"expectation about a node never created", head + pod + "  - expect: {pod: p, node: node-9}\n", 422, "node \"node-9\""},
		{"unknown plugin", head + pod + "  - expect: {pod: p, rejectedBy: NoSuchPlugin}\n", 422, "NoSuchPlugin"},
		{"unknown queue", head + pod + "  - expect: {pod: p, queue: limbo}\n", 422, "limbo"},
		{"impossible count", head + pod + "  - expect: {scheduledPods: 5}\n", 422, "at most 1"},
		{"unknown wait", head + "  - wait: {for: godot}\n", 422, "godot"},
		{"an example extender of weight 200", "apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  exampleExtender: {weight: 200}\n  steps:\n  - wait: {duration: 1s}\n", 422, "spec.exampleExtender.weight"},
		{"an example extender with a field it has not", "apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  exampleExtender: {url: x}\n  steps:\n  - wait: {duration: 1s}\n", 400, "unknown field \"url\""},
		{"a gate of the whole run", "apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  featureGates: GenericWorkload=true\n  steps:\n  - wait: {duration: 1s}\n", 422, "spec.featureGates"},
		{"a flush that would spin", "apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  queue: {unschedulableFlushInterval: 1ns}\n  steps:\n  - wait: {duration: 1s}\n", 422, "spec.queue.unschedulableFlushInterval"},
		{"unknown gating plugin", head + pod + "  - expect: {pod: p, gatedBy: NoSuchGate}\n", 422, "NoSuchGate"},
		{"unknown skipping plugin", head + pod + "  - expect: {pod: p, skippedBy: NoSuchHint}\n", 422, "spec.steps[1].expect.skippedBy: no plugin is called \"NoSuchHint\""},
		{"skipped of no pod", head + "  - wait: {for: skipped}\n", 422, "needs the pod"},
		{"deleted of no pod", head + "  - wait: {for: deleted}\n", 422, "needs the pod"},
		{"a kind no scenario makes", head + "  - create: {manifest: {apiVersion: v1, kind: Secret, metadata: {name: s}}}\n", 422, "a scenario creates Node, Pod, PriorityClass, CronJob, DaemonSet, Deployment"},
		{"a Deployment the apiserver refuses", head + "  - create: {manifest: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: other}}, spec: {containers: [{name: c, image: x}]}}}}}\n", 422, "`selector` does not match template `labels`"},
		{"a bad selector", head + "  - wait: {for: scheduled, selector: \"app in (\"}\n", 422, "spec.steps[0].wait.selector"},
		{"a selector and a pod", head + pod + "  - wait: {for: scheduled, pod: p, selector: app=web}\n", 422, "not both"},
		{"a selector with a wait that counts no pods", head + "  - wait: {for: settled, selector: app=web}\n", 422, "counts no pods"},
		{"a count without a selector", head + pod + "  - wait: {for: scheduled, pod: p, count: 2}\n", 422, "a count and a node go with a selector"},
		{"a selector that counts nothing", head + "  - expect: {selector: app=web, queue: active, pod: p}\n", 422, "count something"},
		{"the status of a Deployment", head + deploy + "  - update: {kind: Deployment, name: web, patch: {status: {replicas: 3}}}\n", 422, "what its controllers write"},
		{"a Deployment never created", head + "  - update: {kind: Deployment, name: api, patch: {spec: {replicas: 3}}}\n", 422, "no earlier step creates Deployment \"api\""},
		{"bad configuration", head + "  - schedulerConfig: {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration, profiles: [{plugins: {multiPoint: {enabled: [{name: Nope}]}}}]}\n", 422, "Nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, pods := counts(t)
			var e struct{ Error string }
			if code := api(t, "POST", "/api/v1/scenarios", "application/yaml", []byte(tt.body), &e); code != tt.want {
				t.Errorf("got %d (%s), want %d", code, e.Error, tt.want)
			}
			if !strings.Contains(e.Error, tt.mention) {
				t.Errorf("error %q does not mention %q", e.Error, tt.mention)
			}
			if n, p := counts(t); n != nodes || p != pods {
				t.Errorf("a refused scenario changed the cluster")
			}
		})
	}
}

// TestPreemptionIsReported: the lesson on priorities evicts one low pod for
// the important one. The stream names victim and preemptor, and the report
// says the victim was preempted, not that it waits to be scheduled.
func TestPreemptionIsReported(t *testing.T) {
	var run scenario.Run
	if code := api(t, "POST", "/api/v1/scenarios?bundled=13-priorities&reset=true&wait=true", "", nil, &run); code != http.StatusOK || run.State != scenario.StatePassed {
		t.Fatalf("13-priorities: %d %s %+v", code, run.State, run.Report)
	}
	var victims []string
	for _, p := range run.Report.Pods {
		if strings.Contains(p.Reason, "preempted by default/important, which needed room on node-1") {
			victims = append(victims, p.Pod)
		}
	}
	if len(victims) != 1 || !strings.HasPrefix(victims[0], "default/low-") {
		t.Errorf("victims in the report: %v; pods %+v", victims, run.Report.Pods)
	}
	var hist struct{ FirstSeq uint64 }
	api(t, "GET", "/api/v1/history", "", nil, &hist)
	var page struct{ Events []event.Event }
	if code := api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&limit=10000", hist.FirstSeq-1), "", nil, &page); code != http.StatusOK {
		t.Fatalf("events: %d", code)
	}
	var seen []string
	for _, e := range page.Events {
		if e.Kind == event.KindPreemption {
			seen = append(seen, e.Pod.Key()+" by "+e.Preemption.Preemptor.Key()+" on "+e.Preemption.Node)
		}
	}
	if len(victims) == 1 && (len(seen) != 1 || seen[0] != victims[0]+" by default/important on node-1") {
		t.Errorf("preemption events: %v, want the victim %s", seen, victims[0])
	}
}

// A paced run over REST: it waits before each step until POST .../next
// (issue 37, 1).
func TestPacedScenarioREST(t *testing.T) {
	reset(t)
	var out struct{ Error string }
	if code := api(t, "POST", "/api/v1/scenarios?pace=soon", "application/yaml", []byte(quickScenario), &out); code != http.StatusBadRequest || !strings.Contains(out.Error, "pace") {
		t.Errorf("a bad pace: %d %q, want 400", code, out.Error)
	}
	var run scenario.Run
	if code := api(t, "POST", "/api/v1/scenarios?pace=step", "application/yaml", []byte(quickScenario), &run); code != http.StatusAccepted || !run.Paced {
		t.Fatalf("post paced: %d %+v", code, run)
	}
	steps := scenarioSteps(t, quickScenario)
	for step := 1; step <= steps; step++ {
		eventually(t, 30*time.Second, fmt.Sprintf("waiting before step %d", step), func() bool {
			api(t, "GET", "/api/v1/scenarios/"+run.ID, "", nil, &run)
			return run.Waiting && run.Step == step
		})
		if step == 1 && len(queueOf(t).Active)+len(queueOf(t).Unschedulable) != 0 {
			t.Errorf("before step 1 something ran")
		}
		if code := api(t, "POST", "/api/v1/scenarios/"+run.ID+"/next", "", nil, nil); code != http.StatusOK {
			t.Fatalf("next at step %d: %d", step, code)
		}
	}
	if code := api(t, "GET", "/api/v1/scenarios/"+run.ID+"?wait=true", "", nil, &run); code != http.StatusOK || run.State != scenario.StatePassed {
		t.Fatalf("the paced run: %d %+v", code, run)
	}
	if code := api(t, "POST", "/api/v1/scenarios/"+run.ID+"/next", "", nil, &out); code != http.StatusConflict {
		t.Errorf("next after the end: %d %q, want 409", code, out.Error)
	}
	if code := api(t, "POST", "/api/v1/scenarios/run-999/next", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("next of no run: %d, want 404", code)
	}
}

func scenarioSteps(t *testing.T, doc string) int {
	t.Helper()
	sc, err := scenario.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return len(sc.Spec.Steps)
}

// TestScenariosFolder: --scenarios-dir offers its files beside the bundled
// ones, but a link out of the folder is not followed, a file beyond the
// body limit is refused, a broken file's content is not echoed, and a
// changed file is read again.
func TestScenariosFolder(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "shadow")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, "_apt:*:20228:0:99999:7:::\n")
	in := func(name string) string { return filepath.Join(scenariosDir, name) }
	valid := func(title string) string {
		return "apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: folder, title: " + title + "}\nspec:\n  steps:\n  - note: nothing\n"
	}
	write(in("zz-valid.yaml"), valid("First"))
	write(in("zz-broken.yaml"), "apiVersion: minisched/v1\nkind: Scenario\nhunter2: {}\n")
	write(in("zz-big.yaml"), valid("Big")+"# "+strings.Repeat("x", 1<<20)+"\n")
	for link, target := range map[string]string{"zz-shadow.yaml": secret, "zz-escape.yaml": "../" + filepath.Base(outside) + "/shadow", "zz-inside.yaml": "zz-valid.yaml"} {
		if err := os.Symlink(target, in(link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, f := range []string{"zz-valid.yaml", "zz-broken.yaml", "zz-big.yaml", "zz-shadow.yaml", "zz-escape.yaml", "zz-inside.yaml"} {
			_ = os.Remove(in(f))
		}
	})

	titles := func() map[string]string {
		var listing struct {
			Bundled []struct{ Name, Title string }
		}
		api(t, "GET", "/api/v1/scenarios", "", nil, &listing)
		out := map[string]string{}
		for _, b := range listing.Bundled {
			out[b.Name] = b.Title
		}
		return out
	}
	got := titles()
	if got["zz-valid"] != "First" || got["zz-inside"] != "First" || got["01-random"] == "" {
		t.Errorf("listing %v: want zz-valid and the link to it titled First, beside the bundled ones", got)
	}
	if title, ok := got["zz-big"]; !ok || title != "" {
		t.Errorf("zz-big: listed %v with title %q, want listed without a title (it is not read)", ok, title)
	}
	for _, name := range []string{"zz-shadow", "zz-escape"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s is listed: a link out of the folder was followed", name)
		}
	}

	tests := []struct {
		name string
		want int
	}{
		{"zz-shadow", http.StatusNotFound},
		{"zz-escape", http.StatusNotFound},
		{"zz-big", http.StatusRequestEntityTooLarge},
		{"zz-broken", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := resttest.Call(t, "POST", strings.TrimSuffix(inst.URL, "/")+"/api/v1/scenarios?bundled="+tt.name, "", nil, nil)
			body := string(resp.Body)
			if resp.Code != tt.want || strings.Contains(body, "20228") || strings.Contains(body, "hunter2") || !strings.Contains(body, tt.name) {
				t.Errorf("answer %d %s: want %d naming the scenario, without the file's content", resp.Code, body, tt.want)
			}
		})
	}

	// A changed file is read again (its size changes too, so a coarse
	// clock cannot hide the change).
	write(in("zz-valid.yaml"), valid("Second and longer"))
	if got := titles(); got["zz-valid"] != "Second and longer" {
		t.Errorf("after the change: zz-valid titled %q, want the new title", got["zz-valid"])
	}
}

// TestScenarioFeatureGates: a scenario's spec.featureGates applies to its
// run alone: with OpportunisticBatching=false its cycle carries no batching
// record, and the scheduler's tuning is as before afterwards.
func TestScenarioFeatureGates(t *testing.T) {
	before := inst.Scheduler.Tuning()
	doc := strings.Replace(quickScenario, "spec:\n", "spec:\n  featureGates: OpportunisticBatching=false\n", 1)
	var run scenario.Run
	if code := api(t, "POST", "/api/v1/scenarios?reset=true&wait=true", "application/yaml", []byte(doc), &run); code != http.StatusOK || run.State != scenario.StatePassed {
		t.Fatalf("the scenario: %d %s %+v", code, run.State, run.Report)
	}
	// The reset began a new history.
	var hist struct{ FirstSeq uint64 }
	api(t, "GET", "/api/v1/history", "", nil, &hist)
	var page struct{ Events []event.Event }
	api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&limit=10000", hist.FirstSeq-1), "", nil, &page)
	ends := 0
	for _, e := range page.Events {
		if e.Kind == event.KindCycleEnd && e.Pod != nil && e.Pod.Name == "quick-pod" {
			ends++
			if e.CycleEnd.Batch != nil {
				t.Errorf("cycle %d has a batching record %+v under OpportunisticBatching=false", e.Cycle, e.CycleEnd.Batch)
			}
		}
	}
	if ends == 0 {
		t.Error("no cycle of quick-pod in the history")
	}
	if after := inst.Scheduler.Tuning(); after != before {
		t.Errorf("the tuning after the run %+v, before %+v", after, before)
	}
}
