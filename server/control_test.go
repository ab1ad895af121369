package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"minisched/event"
	"minisched/minisched"
	"minisched/server"
)

// get reads an answer of the API; anything but 200 fails the test.
func get[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	if code := api(t, "GET", path, "", nil, &v); code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, code)
	}
	return v
}

func queueOf(t *testing.T) server.QueueView { return get[server.QueueView](t, "/api/v1/queue") }

func schedulerState(t *testing.T) event.SchedulerState {
	return get[event.SchedulerState](t, "/api/v1/scheduler")
}

func TestPauseStepResume(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "8"))
	eventually(t, 10*time.Second, "the node in the scheduler", func() bool { return inst.Scheduler.Scheduler().NodeCount() == 1 })

	var st event.SchedulerState
	if code := api(t, "POST", "/api/v1/scheduler/pause", "", nil, &st); code != http.StatusOK || st.State != "paused" {
		t.Fatalf("pause: %d %+v", code, st)
	}
	for _, name := range []string{"a", "b"} {
		mustCreate(t, "/api/v1/pods", podJSON(name, "100m"))
	}
	// Holding: the loop has a pod to take and waits at the gate, so from
	// here on only a step or resume lets it bind anything.
	eventually(t, 10*time.Second, "the paused scheduler to hold both pods", func() bool {
		return len(queueOf(t).Active) == 2 && schedulerState(t).Holding
	})
	if boundNode(t, "a") != "" || boundNode(t, "b") != "" {
		t.Fatal("a paused scheduler bound a pod")
	}

	if code := api(t, "POST", "/api/v1/scheduler/step", "", nil, &st); code != http.StatusOK || st.State != "paused" {
		t.Fatalf("step: %d %+v", code, st)
	}
	eventually(t, 10*time.Second, "one pod bound after a step, and the loop held again", func() bool {
		return (boundNode(t, "a") != "" || boundNode(t, "b") != "") && schedulerState(t).Holding
	})
	if boundNode(t, "a") != "" && boundNode(t, "b") != "" {
		t.Fatal("one step bound two pods")
	}
	if q := queueOf(t); len(q.Active) != 1 {
		t.Errorf("after one step activeQ holds %d pods, want 1", len(q.Active))
	}
	if code := api(t, "GET", "/api/v1/scheduler", "", nil, &st); code != http.StatusOK || st.State != "paused" {
		t.Errorf("after a step the scheduler is %+v, want paused", st)
	}

	if code := api(t, "POST", "/api/v1/scheduler/resume", "", nil, &st); code != http.StatusOK || st.State != "running" {
		t.Fatalf("resume: %d %+v", code, st)
	}
	eventually(t, 10*time.Second, "both pods bound after resume", func() bool { return boundNode(t, "a") != "" && boundNode(t, "b") != "" })
}

const nodeNumberConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: NodeNumber
        weight: 10
`

func TestSchedulerConfig(t *testing.T) {
	reset(t)
	var before event.SchedulerState
	api(t, "GET", "/api/v1/scheduler", "", nil, &before)

	bad := []struct{ name, body, mention string }{
		{"not YAML", "{{{", "decoding"},
		{"wrong kind", "apiVersion: v1\nkind: Pod\n", "KubeSchedulerConfiguration"},
		{"unknown plugin", strings.ReplaceAll(nodeNumberConfig, "NodeNumber", "NoSuchPlugin"), "NoSuchPlugin"},
		// Upstream's framework refuses a negative weight that a positive one
		// follows in its list of Score plugins (its overflow check wraps).
		{"a negative weight before positive ones", strings.ReplaceAll(nodeNumberConfig, "multiPoint:\n      enabled:\n      - name: NodeNumber\n        weight: 10", "score:\n      enabled:\n      - name: NodeNumber\n        weight: -1"), "could overflow"},
		{"two profiles of one name", nodeNumberConfig + "- schedulerName: default-scheduler\n", "Duplicate value"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/scheduler/config?dryRun=true", "/api/v1/scheduler/config"} {
				var e struct{ Error string }
				if code := api(t, "PUT", path, "application/yaml", []byte(tt.body), &e); code != http.StatusUnprocessableEntity {
					t.Errorf("PUT %s: got %d (%s), want 422", path, code, e.Error)
				}
				if !strings.Contains(e.Error, tt.mention) {
					t.Errorf("PUT %s: error %q does not mention %q", path, e.Error, tt.mention)
				}
			}
			var now event.SchedulerState
			api(t, "GET", "/api/v1/scheduler", "", nil, &now)
			if now.Generation != before.Generation || now.State != before.State {
				t.Errorf("a refused configuration changed the scheduler: %+v -> %+v", before, now)
			}
		})
	}

	// A pod that cannot fit waits in the queue; a new configuration must
	// keep it.
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "1"))
	mustCreate(t, "/api/v1/pods", podJSON("too-big", "4"))
	eventually(t, 10*time.Second, "too-big unschedulable", func() bool { return len(queueOf(t).Unschedulable) == 1 })

	// The editor's checks: the line of a problem, a dry run that changes
	// nothing, and the defaults to diff against.
	var e struct {
		Error string
		Line  int
	}
	if code := api(t, "PUT", "/api/v1/scheduler/config?dryRun=true", "application/yaml",
		[]byte(strings.ReplaceAll(nodeNumberConfig, "NodeNumber", "NoSuchPlugin")), &e); code != http.StatusUnprocessableEntity || e.Line != 7 {
		t.Errorf("an unknown plugin on line 7: %d, line %d (%s)", code, e.Line, e.Error)
	}
	var cfg map[string]any
	if code := api(t, "PUT", "/api/v1/scheduler/config?dryRun=true", "application/yaml", []byte(nodeNumberConfig), &cfg); code != http.StatusOK || cfg["profiles"] == nil {
		t.Fatalf("a dry run of a valid configuration: %d %v", code, cfg)
	}
	if now := schedulerState(t); now.Generation != before.Generation {
		t.Errorf("a dry run restarted the scheduler: generation %d -> %d", before.Generation, now.Generation)
	}
	var defaultCfg struct {
		Profiles []struct {
			Plugins struct {
				MultiPoint struct{ Enabled []struct{ Name string } }
			}
		}
	}
	if code := api(t, "GET", "/api/v1/scheduler/config?defaults=true", "", nil, &defaultCfg); code != http.StatusOK ||
		len(defaultCfg.Profiles) != 1 || len(defaultCfg.Profiles[0].Plugins.MultiPoint.Enabled) < 10 {
		t.Errorf("the defaults: %d %+v", code, defaultCfg)
	}

	if code := api(t, "PUT", "/api/v1/scheduler/config", "application/yaml", []byte(nodeNumberConfig), &cfg); code != http.StatusOK {
		t.Fatalf("valid configuration: %d %v", code, cfg)
	}
	var after event.SchedulerState
	api(t, "GET", "/api/v1/scheduler", "", nil, &after)
	if after.Generation != before.Generation+1 {
		t.Errorf("generation %d -> %d, want one restart", before.Generation, after.Generation)
	}
	var plugins server.PluginsView
	api(t, "GET", "/api/v1/scheduler/plugins", "", nil, &plugins)
	found := false
	for _, p := range plugins.Enabled["Score"] {
		found = found || p.Name == "NodeNumber" && p.Weight == 10
	}
	if !found {
		t.Errorf("NodeNumber is not a Score plugin of weight 10 after the update: %+v", plugins.Enabled["Score"])
	}
	// Every plugin says what it implements, enabled or not, and what
	// cluster events it registers.
	byName := map[string]minisched.PluginInfo{}
	for _, p := range plugins.Plugins {
		byName[p.Name] = p
	}
	if len(byName) != len(plugins.Available) {
		t.Errorf("%d plugins described, %d available", len(byName), len(plugins.Available))
	}
	if fit := byName["NodeResourcesFit"]; fmt.Sprint(fit.ExtensionPoints) != "[PreFilter Filter PreScore Score]" || !slices.Contains(fit.Events, "NodeAdd") {
		t.Errorf("NodeResourcesFit: %+v", fit)
	}
	if qs := byName["PrioritySort"]; fmt.Sprint(qs.ExtensionPoints) != "[QueueSort]" || plugins.Required["QueueSort"] != 1 || plugins.Required["Bind"] != 1 {
		t.Errorf("PrioritySort %+v, required %v", qs, plugins.Required)
	}
	eventually(t, 20*time.Second, "too-big back in the new scheduler's queue", func() bool {
		q := queueOf(t)
		return len(q.Active)+len(q.Backoff)+len(q.Unschedulable)+len(q.InFlight) == 1
	})

	// Two profiles: the plugin view describes the one asked for.
	if code := api(t, "PUT", "/api/v1/scheduler/config", "application/yaml", []byte(nodeNumberConfig+"- schedulerName: other\n"), nil); code != http.StatusOK {
		t.Fatalf("two profiles: %d", code)
	}
	var other server.PluginsView
	if code := api(t, "GET", "/api/v1/scheduler/plugins?profile=other", "", nil, &other); code != http.StatusOK ||
		other.Profile != "other" || fmt.Sprint(other.Profiles) != "[default-scheduler other]" || slices.ContainsFunc(other.Enabled["Score"], func(p server.EnabledPlugin) bool { return p.Name == "NodeNumber" }) {
		t.Errorf("GET /scheduler/plugins?profile=other: %d %s %v; want profile other of [default-scheduler other], without NodeNumber", code, other.Profile, other.Profiles)
	}
	var e404 struct{ Error string }
	if code := api(t, "GET", "/api/v1/scheduler/plugins?profile=nobody", "", nil, &e404); code != http.StatusNotFound || !strings.Contains(e404.Error, "default-scheduler, other") {
		t.Errorf("an unknown profile: %d %q, want 404 naming the profiles", code, e404.Error)
	}

	// Put the defaults back for the other tests.
	defaults := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	if code := api(t, "PUT", "/api/v1/scheduler/config", "application/yaml", []byte(defaults), nil); code != http.StatusOK {
		t.Fatalf("restoring the defaults: %d", code)
	}
}

func TestResetKeepsConfiguration(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "1"))
	mustCreate(t, "/api/v1/pods", podJSON("p", "100m"))
	eventually(t, 10*time.Second, "p bound", func() bool { return boundNode(t, "p") != "" })
	var before event.SchedulerState
	api(t, "GET", "/api/v1/scheduler", "", nil, &before)
	reset(t)
	var cycles struct {
		Items []map[string]any
	}
	api(t, "GET", "/api/v1/cycles", "", nil, &cycles)
	if len(cycles.Items) != 0 {
		t.Errorf("history holds %d cycles after a reset", len(cycles.Items))
	}
	var after event.SchedulerState
	api(t, "GET", "/api/v1/scheduler", "", nil, &after)
	if after.Generation != before.Generation {
		t.Errorf("reset restarted the scheduler: generation %d -> %d", before.Generation, after.Generation)
	}
}

// A reset holds the scheduler: the pods it deletes free room that the pods
// still waiting would take, but none is tried on its way out (issue 37,
// 8); afterwards the scheduler runs again, unpaused.
func TestResetHoldsTheScheduler(t *testing.T) {
	reset(t)
	const nodes, pending = 5, 40
	for i := range nodes {
		mustCreate(t, "/api/v1/nodes", nodeJSON(fmt.Sprintf("node-%d", i), "1"))
		mustCreate(t, "/api/v1/pods", podJSON(fmt.Sprintf("big-%d", i), "900m"))
	}
	eventually(t, 30*time.Second, "the big pods bound", func() bool {
		for i := range nodes {
			if boundNode(t, fmt.Sprintf("big-%d", i)) == "" {
				return false
			}
		}
		return true
	})
	for i := range pending {
		mustCreate(t, "/api/v1/pods", podJSON(fmt.Sprintf("waits-%d", i), "500m"))
	}
	eventually(t, 60*time.Second, "every small pod tried and waiting", func() bool { return len(queueOf(t).Unschedulable) == pending })
	begun := inst.Scheduler.Cycles()
	reset(t)
	if n := inst.Scheduler.Cycles() - begun; n != 0 {
		t.Errorf("%d scheduling cycles began during the reset, want none: the deleted big pods made room", n)
	}
	var after event.SchedulerState
	api(t, "GET", "/api/v1/scheduler", "", nil, &after)
	if after.State != "running" || strings.Contains(after.Message, "held") {
		t.Errorf("after the reset the scheduler is %q (%q), want running", after.State, after.Message)
	}
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-after", "1"))
	mustCreate(t, "/api/v1/pods", podJSON("after", "100m"))
	eventually(t, 30*time.Second, "a pod bound after the reset", func() bool { return boundNode(t, "after") != "" })
}
