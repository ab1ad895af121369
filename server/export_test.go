package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"minisched/cluster"
	"minisched/server"
	"minisched/snapshot"
)

// exported is the cluster as GET /export answers it.
func exported(t *testing.T) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", strings.TrimSuffix(inst.URL, "/")+"/api/v1/export?format=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %v", resp.StatusCode, err)
	}
	return buf.Bytes()
}

const header = `"apiVersion":"minisched.dev/v1","kind":"Snapshot"`

// TestImportRefusesBadInput sends snapshots that must not load: each gets
// a clear 4xx JSON error, and the cluster is as it was.
func TestImportRefusesBadInput(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("already-here", "2"))
	kubeletReported(t, "already-here")
	before := exported(t)
	tests := []struct {
		name        string
		query       string
		contentType string
		body        string
		wantCode    int
		wantWords   string
	}{
		{"unknown top-level field", "", "application/json", `{` + header + `,"nodez":[]}`, 400, `unknown field "nodez"`},
		{"unknown field inside a pod", "", "application/json",
			`{` + header + `,"pods":[{"metadata":{"name":"a","namespace":"default"},"spec":{"containerz":[]}}]}`, 400, `unknown field "containerz"`},
		{"unknown field in YAML", "", "application/yaml", "apiVersion: minisched.dev/v1\nkind: Snapshot\nnodes:\n- metadata: {name: n}\n  colour: blue\n", 400, `unknown field "colour"`},
		{"duplicate field in YAML", "", "application/yaml", "apiVersion: minisched.dev/v1\nkind: Snapshot\nkind: Snapshot\n", 400, "already set"},
		{"another apiVersion", "", "application/json", `{"apiVersion":"minisched.dev/v2","kind":"Snapshot"}`, 400, "expected apiVersion minisched.dev/v1"},
		{"another kind", "", "application/json", `{"apiVersion":"minisched.dev/v1","kind":"Pod"}`, 400, `kind "Pod"`},
		{"no header", "", "application/json", `{"nodes":[]}`, 400, "expected apiVersion"},
		{"trailing data", "", "application/json", `{` + header + `} {}`, 400, "data after the document"},
		{"empty body", "", "application/json", ``, 400, "empty"},
		{"wrong content type", "", "text/csv", `{` + header + `}`, 415, "unsupported content type"},
		{"bad replace", "?replace=maybe", "application/json", `{` + header + `}`, 400, "want true or false"},
		{"pod in a namespace it does not list", "?replace=true", "application/json",
			`{` + header + `,"pods":[{"metadata":{"name":"a","namespace":"nowhere"},"spec":{"containers":[{"name":"c","image":"pause"}]}}]}`, 422, "namespace nowhere is not in the snapshot's namespaces"},
		{"a node twice", "?replace=true", "application/json",
			`{` + header + `,"nodes":[{"metadata":{"name":"n"}},{"metadata":{"name":"n"}}]}`, 422, "node n appears twice"},
		{"invalid scheduler configuration", "?replace=true", "application/json",
			`{` + header + `,"schedulerConfiguration":{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"a"},{"schedulerName":"a"}]}}`,
			422, "Duplicate value"},
		{"a cluster that is not empty, without replace", "", "application/json",
			`{` + header + `,"nodes":[{"metadata":{"name":"imported"}}]}`, 409, "it holds nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var answer map[string]any
			code := api(t, "POST", "/api/v1/import"+tt.query, tt.contentType, []byte(tt.body), &answer)
			msg, _ := answer["error"].(string)
			if code != tt.wantCode || !strings.Contains(msg, tt.wantWords) {
				t.Errorf("%d %q, want %d with %q", code, msg, tt.wantCode, tt.wantWords)
			}
			if after := exported(t); !bytes.Equal(before, after) {
				t.Errorf("the refused import changed the cluster:\n--- before\n%s\n--- after\n%s", before, after)
			}
		})
	}
}

// TestImportReplaces loads a snapshot over a cluster that holds other
// objects: with replace=true they go, and the snapshot's come.
func TestImportReplaces(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("old", "2"))
	mustCreate(t, "/api/v1/pods", podJSON("old-pod", "100m"))
	body := `{` + header + `,"nodes":[{"metadata":{"name":"new"},"status":{"allocatable":{"cpu":"2","pods":"10"}}}],` +
		`"pods":[{"metadata":{"name":"on-new","namespace":"default"},"spec":{"nodeName":"new","containers":[{"name":"c","image":"pause"}]}}]}`
	var counts snapshot.Counts
	if code := api(t, "POST", "/api/v1/import?replace=true", "application/json", []byte(body), &counts); code != http.StatusOK {
		t.Fatalf("import: %d %+v", code, counts)
	}
	if counts.Nodes != 1 || counts.Pods != 1 || counts.BoundPods != 1 {
		t.Errorf("import created %+v, want one node and one bound pod", counts)
	}
	var doc snapshot.Document
	if err := json.Unmarshal(exported(t), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != 1 || doc.Nodes[0].Name != "new" || len(doc.Pods) != 1 || doc.Pods[0].Spec.NodeName != "new" {
		t.Errorf("after the replace the cluster holds nodes %v and pods %v, want node new and pod on-new bound to it", doc.Nodes, doc.Pods)
	}
}

// TestImportBounds checks the guards that answer before a snapshot is
// read: the body's size, and a real cluster.
func TestImportBounds(t *testing.T) {
	tests := []struct {
		name     string
		opts     server.Options
		body     string
		wantCode int
	}{
		{"a body over the limit", server.Options{Client: inst.Client, Cluster: inst.Cluster, ImportLimit: 64},
			`{` + header + `,"nodes":[{"metadata":{"name":"a-node-with-a-long-name"}}]}`, http.StatusRequestEntityTooLarge},
		{"attached to a real cluster", server.Options{Cluster: cluster.New(cluster.Options{Writes: cluster.WritesNone})},
			`{` + header + `}`, http.StatusForbidden},
		{"attached with --allow-writes", server.Options{Cluster: cluster.New(cluster.Options{Writes: cluster.WritesOwned})},
			`{` + header + `}`, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := guarded(t, tt.opts)
			resp, err := http.Post(ts.URL+"/api/v1/import", "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var answer map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != tt.wantCode || answer["error"] == "" {
				t.Errorf("%d %v (%v), want %d with an error", resp.StatusCode, answer, err, tt.wantCode)
			}
		})
	}
}
