package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"minisched/explain"
)

// TestExplainEndpoint: GET /pods/{ns}/{name}/explain answers a pending pod
// with the schema, .../explain/nodes/{node} with one node tried, and a pod
// or node that is gone, or a pod that is bound, with 404 and 409.
func TestExplainEndpoint(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "1"))
	mustCreate(t, "/api/v1/pods", podJSON("too-big", "4"))
	mustCreate(t, "/api/v1/pods", podJSON("fits", "100m"))
	eventually(t, 10*time.Second, "too-big unschedulable, fits bound", func() bool {
		return len(queueOf(t).Unschedulable) == 1 && boundNode(t, "fits") != ""
	})
	var e explain.Explanation
	if code := api(t, "GET", "/api/v1/pods/default/too-big/explain", "", nil, &e); code != http.StatusOK {
		t.Fatalf("GET explain: %d", code)
	}
	if e.Schema != explain.Schema || e.Nodes != 1 || len(e.Closest) != 1 || e.Closest[0].Name != "node-1" || !strings.HasPrefix(e.Sentence, "Fits nowhere.") {
		t.Errorf("explanation %+v", e)
	}
	// One node, its change tried.
	var n explain.Node
	if code := api(t, "GET", "/api/v1/pods/default/too-big/explain/nodes/node-1", "", nil, &n); code != http.StatusOK {
		t.Fatalf("GET explain for node-1: %d", code)
	}
	if n.Name != "node-1" || len(n.Failures) != 1 || n.Failures[0].Plugin != "NodeResourcesFit" || n.Tried == nil || !n.Tried.Fits {
		t.Errorf("node-1: %+v, want NodeResourcesFit, tried and fits", n)
	}
	// The apiserver says fits is bound before the scheduler's informer
	// does; an explanation reads the informer's pod.
	eventually(t, 10*time.Second, "the scheduler sees fits bound", func() bool {
		return api(t, "GET", "/api/v1/pods/default/fits/explain", "", nil, nil) != http.StatusOK
	})
	for _, tt := range []struct {
		path string
		want int
	}{
		{"/api/v1/pods/default/nobody/explain", http.StatusNotFound},
		{"/api/v1/pods/default/fits/explain", http.StatusConflict},
		{"/api/v1/pods/default/too-big/explain/nodes/node-9", http.StatusNotFound},
		{"/api/v1/pods/default/fits/explain/nodes/node-1", http.StatusConflict},
	} {
		var out struct{ Error string }
		if code := api(t, "GET", tt.path, "", nil, &out); code != tt.want || out.Error == "" {
			t.Errorf("GET %s: %d %q, want %d with a message", tt.path, code, out.Error, tt.want)
		}
	}
}
