package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		{"Secrets", "?replace=true", "application/json", `{` + header + `,"secrets":[{"metadata":{"name":"s","namespace":"default"},"data":{"k":"dg=="}}]}`, 400, `unknown field "secrets"`},
		{"webhooks", "?replace=true", "application/json", `{` + header + `,"validatingWebhookConfigurations":[{"metadata":{"name":"w"}}]}`, 400, `unknown field "validatingWebhookConfigurations"`},
		{"RBAC", "?replace=true", "application/json", `{` + header + `,"clusterRoleBindings":[{"metadata":{"name":"admin"}}]}`, 400, `unknown field "clusterRoleBindings"`},
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

// TestFinalizers: an object created with a finalizer no controller here
// removes answers its DELETE with itself and its deletionTimestamp, as the
// apiserver does; a reset and a replacing import still empty the cluster;
// and an import keeps no finalizers or owner references.
func TestFinalizers(t *testing.T) {
	reset(t)
	held := `"finalizers":["example.com/hold"]`
	mustCreate(t, "/api/v1/nodes", []byte(`{"metadata":{"name":"held",`+held+`},"status":{"allocatable":{"cpu":"2","pods":"10"}}}`))
	mustCreate(t, "/api/v1/pods", []byte(`{"metadata":{"name":"held",`+held+`},"spec":{"containers":[{"name":"c","image":"pause"}]}}`))
	mustCreate(t, "/api/v1/pods", []byte(`{"metadata":{"name":"free"},"spec":{"containers":[{"name":"c","image":"pause"}]}}`))

	for _, path := range []string{"/api/v1/pods/default/held", "/api/v1/nodes/held"} {
		var answer v1.Pod // the metadata is all the test reads
		if code := api(t, "DELETE", path, "", nil, &answer); code != http.StatusOK || answer.DeletionTimestamp == nil || len(answer.Finalizers) != 1 {
			t.Errorf("DELETE %s: %d %+v, want 200 with the object, its deletionTimestamp and its finalizer", path, code, answer.ObjectMeta)
		}
	}
	if code := api(t, "DELETE", "/api/v1/pods/default/free", "", nil, nil); code != http.StatusNoContent {
		t.Errorf("DELETE of a pod without finalizers: %d, want 204", code)
	}

	reset(t)
	if nodes, pods := counts(t); nodes != 0 || pods != 0 {
		t.Errorf("after the reset: %d nodes and %d pods, want none (the finalizers cleared)", nodes, pods)
	}

	// A document written by hand, with what only a controller would own.
	owner := `"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"gone","uid":"0b7c0f6e-0000-4000-8000-000000000001"}]`
	body := `{` + header + `,"nodes":[{"metadata":{"name":"n",` + held + `},"status":{"allocatable":{"cpu":"2","pods":"10"}}}],` +
		`"pods":[{"metadata":{"name":"p","namespace":"default",` + held + `,` + owner + `},"spec":{"containers":[{"name":"c","image":"pause"}]}}]}`
	for _, query := range []string{"", "?replace=true"} {
		if query != "" {
			// A replace empties a cluster whose objects wait on finalizers.
			mustCreate(t, "/api/v1/pods", []byte(`{"metadata":{"name":"held",`+held+`},"spec":{"containers":[{"name":"c","image":"pause"}]}}`))
			api(t, "DELETE", "/api/v1/pods/default/held", "", nil, nil)
		}
		if code := api(t, "POST", "/api/v1/import"+query, "application/json", []byte(body), nil); code != http.StatusOK {
			t.Fatalf("import%s: %d", query, code)
		}
		if _, err := inst.Client.CoreV1().Pods("default").Get(context.Background(), "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("import%s: pod held is still there (%v)", query, err)
		}
		pod, err := inst.Client.CoreV1().Pods("default").Get(context.Background(), "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node, err := inst.Client.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pod.Finalizers)+len(pod.OwnerReferences)+len(node.Finalizers) != 0 || pod.DeletionTimestamp != nil {
			t.Errorf("import%s: pod %+v, node finalizers %v: want no finalizers, owner references or deletion", query, pod.ObjectMeta, node.Finalizers)
		}
	}
}

// TestJournaledWhileLoading: while a load runs, the data directory holds
// the import's mark and its document (what a crash leaves); once it ends,
// only what the cluster is a copy of.
func TestJournaledWhileLoading(t *testing.T) {
	dir := t.TempDir()
	srv := server.New(server.Options{DataDir: dir})
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	doc := &snapshot.Document{Nodes: make([]v1.Node, 3)}
	err := srv.Journaled(server.CopyOf{Kind: "import", Source: "a test"}, doc, func() ([]byte, error) { return []byte("{}"), nil }, func() error {
		if !exists("minisched-import") || !exists("minisched-import-document") {
			t.Errorf("during the load the journal holds no mark of it")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if exists("minisched-import") || exists("minisched-import-document") || !exists("minisched-copy") {
		t.Errorf("after the load: want only the copy's entry")
	}
}
