package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minisched/app"
	"minisched/internal/resttest"
	"minisched/journal"
	"minisched/server"
)

// snapshotDoc is a snapshot document of n nodes and m pending pods.
func snapshotDoc(n, m int) string {
	var nodes, pods []string
	for i := range n {
		nodes = append(nodes, fmt.Sprintf(`{"metadata":{"name":"n%d"},"status":{"allocatable":{"cpu":"4","pods":"110"}}}`, i))
	}
	for i := range m {
		pods = append(pods, fmt.Sprintf(`{"metadata":{"name":"p%d","namespace":"default"},"spec":{"containers":[{"name":"c","image":"pause"}]}}`, i))
	}
	return `{"apiVersion":"minisched.dev/v1","kind":"Snapshot","nodes":[` + strings.Join(nodes, ",") + `],"pods":[` + strings.Join(pods, ",") + `]}`
}

// TestInterruptedImport: with --data-dir, a restart still says what the
// cluster is a copy of; an import a crash cut off (its journal left in the
// data directory, as a kill -9 in the middle leaves it) is reported on the
// next start, and POST /import/resume finishes it; a reset forgets both.
func TestInterruptedImport(t *testing.T) {
	dir := t.TempDir()
	withDir := func(f *app.Flags) { f.DataDir = dir }
	snapshotOf := func(inst *app.Instance) server.Snapshot {
		t.Helper()
		resp := resttest.Call(t, "GET", inst.URL+"api/v1/snapshot", "", nil, nil)
		var snap server.Snapshot
		if err := json.Unmarshal(resp.Body, &snap); err != nil {
			t.Fatalf("the snapshot: %v", err)
		}
		return snap
	}

	first := start(t, withDir)
	if code := call(t, "POST", first.URL+"api/v1/import", snapshotDoc(2, 3)); code != http.StatusOK {
		t.Fatalf("import: %d", code)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	// What a crash in the middle of a second import leaves behind.
	j := journal.Journal{Dir: dir}
	if err := j.Put("import-document", []byte(snapshotDoc(3, 5))); err != nil {
		t.Fatal(err)
	}
	if err := j.PutJSON("import", server.InterruptedImport{Kind: "import", Source: "a snapshot loaded over the API", Nodes: 3, Pods: 5}); err != nil {
		t.Fatal(err)
	}

	second := start(t, withDir)
	snap := snapshotOf(second)
	if snap.Copy == nil || snap.Copy.Kind != "import" {
		t.Errorf("after the restart the copy is %+v, want the first import's", snap.Copy)
	}
	if in := snap.InterruptedImport; in == nil || !in.Resumable || in.Nodes != 3 || in.Pods != 5 {
		t.Fatalf("after the crash the snapshot reports %+v, want the interrupted import of 3 nodes and 5 pods, resumable", in)
	}
	var counts struct{ Nodes, Pods int }
	resp := resttest.Call(t, "POST", second.URL+"api/v1/import/resume", "", nil, nil)
	if err := json.Unmarshal(resp.Body, &counts); resp.Code != http.StatusOK || err != nil || counts.Nodes != 3 || counts.Pods != 5 {
		t.Fatalf("resume: %d %s, want 200 with 3 nodes and 5 pods", resp.Code, resp.Body)
	}
	if snap := snapshotOf(second); snap.InterruptedImport != nil || snap.Copy == nil {
		t.Errorf("after the resume: interrupted %+v, copy %+v; want none and the copy", snap.InterruptedImport, snap.Copy)
	}
	if code := call(t, "POST", second.URL+"api/v1/import/resume", ""); code != http.StatusNotFound {
		t.Errorf("a second resume: %d, want 404", code)
	}
	if code := call(t, "POST", second.URL+"api/v1/reset", ""); code != http.StatusNoContent {
		t.Fatalf("reset: %d", code)
	}
	for _, name := range []string{"minisched-copy", "minisched-import", "minisched-import-document"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s after the reset: %v, want it gone", name, err)
		}
	}
}

// TestScenarioRunsSurviveARestart: with --data-dir the list of runs comes
// back after a restart; a run a crash cut off comes back ended in error, at
// the step it had reached.
func TestScenarioRunsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	withDir := func(f *app.Flags) { f.DataDir = dir }
	first := start(t, withDir)
	if code := call(t, "POST", first.URL+"api/v1/scenarios?bundled=01-random&wait=true&reset=true", ""); code != http.StatusOK {
		t.Fatalf("running 01-random: %d", code)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	var runs []map[string]any
	if ok, err := (journal.Journal{Dir: dir}).GetJSON("scenario-runs", &runs); !ok || err != nil || len(runs) != 1 {
		t.Fatalf("the kept runs: %v %v %v", runs, ok, err)
	}
	// As a kill -9 in the middle of a second run leaves the list.
	runs = append(runs, map[string]any{"id": "run-2", "name": "02-filter", "state": "running", "step": 3, "steps": 9})
	if err := (journal.Journal{Dir: dir}).PutJSON("scenario-runs", runs); err != nil {
		t.Fatal(err)
	}
	second := start(t, withDir)
	var listing struct {
		Runs []struct {
			ID, Name, State, Error string
		}
	}
	resp := resttest.Call(t, "GET", second.URL+"api/v1/scenarios", "", nil, nil)
	if err := json.Unmarshal(resp.Body, &listing); err != nil {
		t.Fatal(err)
	}
	if len(listing.Runs) != 2 || listing.Runs[0].ID != "run-2" || listing.Runs[0].State != "error" || !strings.Contains(listing.Runs[0].Error, "stopped during the run, at step 3 of 9") ||
		listing.Runs[1].Name != "01-random" || listing.Runs[1].State != "passed" {
		t.Errorf("runs after the restart: %+v, want the cut-off run in error and the passed one", listing.Runs)
	}
	var run struct{ ID string }
	resp = resttest.Call(t, "POST", second.URL+"api/v1/scenarios?bundled=01-random&wait=true&reset=true", "", nil, nil)
	if err := json.Unmarshal(resp.Body, &run); err != nil || run.ID != "run-3" {
		t.Errorf("the next run: %s, want run-3 (the ids go on)", resp.Body)
	}
}
