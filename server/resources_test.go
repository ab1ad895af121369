package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/internal/resttest"
)

func TestNodeAndPodLifecycle(t *testing.T) {
	reset(t)
	nodeYAML := `apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {zone: a}
status:
  allocatable: {cpu: "2", memory: 4Gi}
`
	var node v1.Node
	if code := api(t, "POST", "/api/v1/nodes", "application/yaml", []byte(nodeYAML), &node); code != http.StatusCreated {
		t.Fatalf("create node from YAML: %d", code)
	}
	if node.Name != "node-1" || node.Status.Allocatable.Cpu().String() != "2" || node.Status.Allocatable.Pods().Value() != 110 {
		t.Errorf("created node = %s cpu %s pods %s; want node-1, the given cpu and the default pods",
			node.Name, node.Status.Allocatable.Cpu(), node.Status.Allocatable.Pods())
	}
	// A pod without a namespace lands in default.
	var pod v1.Pod
	if code := api(t, "POST", "/api/v1/pods", "application/json", podJSON("pod-1", "100m"), &pod); code != http.StatusCreated {
		t.Fatalf("create pod from JSON: %d", code)
	}
	if pod.Namespace != "default" || pod.UID == "" {
		t.Errorf("created pod %s/%s uid %q", pod.Namespace, pod.Name, pod.UID)
	}

	// Read back through client-go: they are real objects.
	ctx := context.Background()
	if n, err := inst.Client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{}); err != nil || n.Labels["zone"] != "a" {
		t.Errorf("client-go get node: %v %v", n, err)
	}
	eventually(t, 20e9, "pod-1 to be bound", func() bool { return boundNode(t, "pod-1") == "node-1" })

	// And through the REST API.
	var got v1.Pod
	if code := api(t, "GET", "/api/v1/pods/default/pod-1", "", nil, &got); code != http.StatusOK || got.Spec.NodeName != "node-1" {
		t.Errorf("GET pod: %d, node %q", code, got.Spec.NodeName)
	}
	if nodes, pods := counts(t); nodes != 1 || pods != 1 {
		t.Errorf("lists hold %d nodes and %d pods, want 1 and 1", nodes, pods)
	}

	if code := api(t, "DELETE", "/api/v1/pods/default/pod-1", "", nil, nil); code != http.StatusNoContent {
		t.Errorf("delete pod: %d", code)
	}
	if code := api(t, "DELETE", "/api/v1/nodes/node-1", "", nil, nil); code != http.StatusNoContent {
		t.Errorf("delete node: %d", code)
	}
	var e struct{ Error, Reason string }
	if code := api(t, "GET", "/api/v1/nodes/node-1", "", nil, &e); code != http.StatusNotFound || e.Error == "" {
		t.Errorf("GET deleted node: %d %+v, want 404 with a message", code, e)
	}
	if _, err := inst.Client.CoreV1().Pods("default").Get(ctx, "pod-1", metav1.GetOptions{}); err == nil {
		t.Errorf("deleted pod still exists")
	}
}

func TestPriorityClasses(t *testing.T) {
	reset(t)
	body := `{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000}`
	if code := api(t, "POST", "/api/v1/priorityclasses", "application/json", []byte(body), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	// The apiserver's admission learns of the class through a watch: the
	// first pod may come a moment too early.
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"vip"},"spec":{"priorityClassName":"high","containers":[{"name":"c","image":"x"}]}}`
	var created v1.Pod
	eventually(t, 10*time.Second, "a pod with the new class", func() bool {
		return api(t, "POST", "/api/v1/pods", "application/json", []byte(pod), &created) == http.StatusCreated
	})
	if created.Spec.Priority == nil || *created.Spec.Priority != 1000 {
		t.Fatalf("pod with the class has priority %v, want 1000", created.Spec.Priority)
	}
	var classes struct {
		Items []struct{ Metadata struct{ Name string } }
	}
	api(t, "GET", "/api/v1/priorityclasses", "", nil, &classes)
	if len(classes.Items) < 3 { // high and the two system classes
		t.Errorf("classes: %+v", classes.Items)
	}
	// Reset removes the class people made and keeps the system's.
	reset(t)
	if code := api(t, "DELETE", "/api/v1/priorityclasses/high", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("after a reset, deleting high: %d, want 404", code)
	}
}

func TestBadInput(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("existing", "1"))
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		want        int
		mention     string
	}{
		{"malformed JSON", "POST", "/api/v1/nodes", "application/json", `{"metadata": {"name": "x"`, 400, "malformed"},
		{"malformed YAML", "POST", "/api/v1/pods", "application/yaml", "metadata:\n  name: [x\n", 400, "malformed"},
		{"YAML of the wrong kind", "POST", "/api/v1/nodes", "application/yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n", 400, "expected kind Node"},
		{"unknown field", "POST", "/api/v1/pods", "application/json", `{"metadata":{"name":"p"},"spec":{"contaners":[]}}`, 400, "contaners"},
		{"empty body", "POST", "/api/v1/nodes", "application/json", "", 400, "empty"},
		{"body over the limit", "POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"big","labels":{"a":"` + strings.Repeat("x", 2<<20) + `"}}}`, 413, "limit"},
		{"invalid name", "POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"Bad_Name"}}`, 422, "Bad_Name"},
		{"pod without containers", "POST", "/api/v1/pods", "application/json", `{"metadata":{"name":"p"}}`, 422, "containers"},
		{"already exists", "POST", "/api/v1/nodes", "application/json", string(nodeJSON("existing", "1")), 409, "already exists"},
		{"unsupported content type", "POST", "/api/v1/nodes", "application/xml", `<node/>`, 415, "content type"},
		{"delete of a missing node", "DELETE", "/api/v1/nodes/missing", "", "", 404, "not found"},
		{"unknown route", "GET", "/api/v1/nope", "", "", 404, "no such API route"},
		{"bad cycle id", "GET", "/api/v1/cycles/abc", "", "", 400, "positive integer"},
		{"bad limit", "GET", "/api/v1/cycles?limit=-3", "", "", 400, "limit"},
		{"bad pod filter", "GET", "/api/v1/cycles?pod=nopod", "", "", 400, "namespace/name"},
		{"bad since", "GET", "/api/v1/events?since=x", "", "", 400, "since"},
		// Issue 38, 10: a second document is refused, not dropped.
		{"two YAML documents", "POST", "/api/v1/nodes", "application/yaml", "metadata: {name: m1}\n---\nmetadata: {name: m2}\n", 400, "2 YAML documents"},
		// Issue 38, 14: a path of a shape no route has is a 404, not a 500.
		{"a node path with one segment too many", "GET", "/api/v1/nodes/x/y", "", "", 404, "no such API route"},
		{"a pod path with one segment too many", "GET", "/api/v1/pods/default/p/q", "", "", 404, "no such API route"},
		{"an explain path with one segment too many", "GET", "/api/v1/pods/default/needy/explain/x", "", "", 404, "no such API route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodesBefore, podsBefore := counts(t)
			var e struct {
				Error  string
				Causes []string
			}
			code := api(t, tt.method, tt.path, tt.contentType, []byte(tt.body), &e)
			if code != tt.want {
				t.Errorf("got %d, want %d (%s)", code, tt.want, e.Error)
			}
			if !strings.Contains(strings.ToLower(e.Error+strings.Join(e.Causes, " ")), strings.ToLower(tt.mention)) {
				t.Errorf("error %q does not mention %q", e.Error, tt.mention)
			}
			if nodes, pods := counts(t); nodes != nodesBefore || pods != podsBefore {
				t.Errorf("bad input changed the cluster: %d->%d nodes, %d->%d pods", nodesBefore, nodes, podsBefore, pods)
			}
		})
	}
}

// A node may give its resources as empty maps; this once crashed the
// process from a scenario and answered 500 over REST.
func TestNodeWithEmptyResourceMaps(t *testing.T) {
	reset(t)
	tests := []struct{ name, status, wantCPU string }{
		{"empty allocatable", `{"allocatable":{}}`, "4"},
		{"empty capacity", `{"capacity":{},"allocatable":{"cpu":"2"}}`, "2"},
		{"both empty", `{"capacity":{},"allocatable":{}}`, "4"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("empty-maps-%d", i)
			var node v1.Node
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q},"status":%s}`, name, tt.status)
			if code := api(t, "POST", "/api/v1/nodes", "application/json", []byte(body), &node); code != http.StatusCreated {
				t.Fatalf("status %d", code)
			}
			if cpu := node.Status.Allocatable.Cpu().String(); cpu != tt.wantCPU {
				t.Errorf("allocatable cpu %s, want %s", cpu, tt.wantCPU)
			}
			if node.Status.Capacity.Cpu().Cmp(*node.Status.Allocatable.Cpu()) < 0 {
				t.Errorf("capacity %v below allocatable %v", node.Status.Capacity, node.Status.Allocatable)
			}
		})
	}
}

// userTaints leaves out the taints node lifecycle keeps (a cordoned node
// gets node.kubernetes.io/unschedulable from it, as on a real cluster).
func userTaints(n v1.Node) []v1.Taint {
	var out []v1.Taint
	for _, t := range n.Spec.Taints {
		if !strings.HasPrefix(t.Key, "node.kubernetes.io/") {
			out = append(out, t)
		}
	}
	return out
}

// TestPatchNode edits a node the way the Cluster view does, and refuses
// what is not a node change.
func TestPatchNode(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("edited", "2"))
	tests := []struct {
		name, body string
		check      func(v1.Node) bool
	}{
		{"cordon", `{"unschedulable": true}`, func(n v1.Node) bool { return n.Spec.Unschedulable }},
		{"labels replace the old ones", `{"labels": {"zone": "a"}}`, func(n v1.Node) bool {
			return n.Labels["zone"] == "a" && len(n.Labels) == 1 && n.Spec.Unschedulable
		}},
		{"taints", `{"taints": [{"key": "gpu", "effect": "NoSchedule"}]}`, func(n v1.Node) bool {
			taints := userTaints(n)
			return len(taints) == 1 && taints[0].Key == "gpu"
		}},
		{"allocatable, capacity following", `{"allocatable": {"cpu": "8", "pods": "10"}}`, func(n v1.Node) bool {
			return n.Status.Allocatable.Cpu().String() == "8" && n.Status.Capacity.Cpu().Cmp(*n.Status.Allocatable.Cpu()) >= 0 &&
				n.Status.Allocatable.Pods().String() == "10" && n.Labels["zone"] == "a"
		}},
		{"uncordon", `{"unschedulable": false}`, func(n v1.Node) bool { return !n.Spec.Unschedulable && len(userTaints(n)) == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var node v1.Node
			if code := api(t, "PATCH", "/api/v1/nodes/edited", "application/json", []byte(tt.body), &node); code != http.StatusOK {
				t.Fatalf("PATCH %s: %d", tt.body, code)
			}
			stored, err := inst.Client.CoreV1().Nodes().Get(context.Background(), "edited", metav1.GetOptions{})
			if err != nil || !tt.check(node) || !tt.check(*stored) {
				t.Errorf("after %s: answered %+v / %+v, stored %+v / %+v (%v)", tt.body, node.Spec, node.Status.Allocatable, stored.Spec, stored.Status.Allocatable, err)
			}
		})
	}
	// Issue 38, 11: the type the handler takes gets past the same-site check.
	if code := api(t, "PATCH", "/api/v1/nodes/edited", "application/merge-patch+json", []byte(`{"unschedulable": true}`), nil); code != http.StatusOK {
		t.Errorf("PATCH as application/merge-patch+json: %d, want 200", code)
	}
	refused := []struct {
		name, path, contentType, body string
		want                          int
	}{
		{"an unknown field", "/api/v1/nodes/edited", "application/json", `{"spec": {}}`, http.StatusBadRequest},
		{"not JSON", "/api/v1/nodes/edited", "application/json", `{`, http.StatusBadRequest},
		{"YAML", "/api/v1/nodes/edited", "application/yaml", `unschedulable: true`, http.StatusUnsupportedMediaType},
		{"no such node", "/api/v1/nodes/nowhere", "application/json", `{"unschedulable": true}`, http.StatusNotFound},
		{"a bad quantity", "/api/v1/nodes/edited", "application/json", `{"allocatable": {"cpu": "lots"}}`, http.StatusBadRequest},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			if code := api(t, "PATCH", tt.path, tt.contentType, []byte(tt.body), nil); code != tt.want {
				t.Errorf("PATCH %s %s: %d, want %d", tt.path, tt.body, code, tt.want)
			}
		})
	}
}

// TestWorkloads: a Deployment and a DaemonSet made over REST get their pods
// from the embedded cluster's controllers; one that would pass the pod
// limit is refused and changes nothing; deleting one takes its pods.
func TestWorkloads(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "4"))
	ctx := context.Background()
	owned := func(kind string) int {
		pods, err := inst.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range pods.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == kind && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: pause}]}\n"
	if code := api(t, "POST", "/api/v1/deployments", "application/yaml", []byte(fmt.Sprintf(deployment, 2)), nil); code != http.StatusCreated {
		t.Fatalf("create a Deployment: %d", code)
	}
	daemons := `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent"},"spec":{"selector":{"matchLabels":{"app":"agent"}},` +
		`"template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"c","image":"pause"}]}}}}`
	if code := api(t, "POST", "/api/v1/daemonsets", "application/json", []byte(daemons), nil); code != http.StatusCreated {
		t.Fatalf("create a DaemonSet: %d", code)
	}
	eventually(t, 2*time.Minute, "2 pods of the ReplicaSet and 1 of the DaemonSet", func() bool {
		return owned("ReplicaSet") == 2 && owned("DaemonSet") == 1
	})

	var e struct{ Error string }
	tests := []struct {
		name, path, body string
		want             int
		mention          string
	}{
		{"more replicas than the pod limit", "/api/v1/deployments", fmt.Sprintf(strings.Replace(deployment, "name: web", "name: huge", 1), 1000000), 422, "--max-pods"},
		{"a pod sent as a Deployment", "/api/v1/deployments", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, 400, "Pod"},
		{"a Deployment the apiserver refuses", "/api/v1/deployments", strings.Replace(fmt.Sprintf(deployment, 1), "labels: {app: web}}", "labels: {app: other}}", 1), 422, "selector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := api(t, "POST", tt.path, "application/yaml", []byte(tt.body), &e); code != tt.want || !strings.Contains(e.Error, tt.mention) {
				t.Errorf("got %d %q, want %d mentioning %q", code, e.Error, tt.want, tt.mention)
			}
		})
	}
	if l, err := inst.Client.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Errorf("the refused Deployments changed the cluster: %v, %v", l, err)
	}

	if code := api(t, "DELETE", "/api/v1/deployments/default/web", "", nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete the Deployment: %d", code)
	}
	if code := api(t, "DELETE", "/api/v1/daemonsets/default/nothing", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("delete a DaemonSet that does not exist: %d, want 404", code)
	}
	eventually(t, 2*time.Minute, "the Deployment's pods gone (garbage collector)", func() bool { return owned("ReplicaSet") == 0 })
}

// TestObjectSizeRefused: a node or pod that carries more labels,
// annotations or taints than minisched keeps is refused with a 422 that
// says which, through every door: the REST API, a node's change, an import
// and a scenario. Nothing is created.
func TestObjectSizeRefused(t *testing.T) {
	reset(t)
	var labels []string
	for i := range 2000 {
		labels = append(labels, fmt.Sprintf(`"key-%06d":"value"`, i))
	}
	many := `{` + strings.Join(labels, ",") + `}`
	mustCreate(t, "/api/v1/nodes", nodeJSON("small", "2"))
	tests := []struct {
		name, method, path, contentType, body string
	}{
		{"a node", "POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"big","labels":` + many + `}}`},
		{"a pod", "POST", "/api/v1/pods", "application/json", `{"metadata":{"name":"big","labels":` + many + `},"spec":{"containers":[{"name":"c","image":"pause"}]}}`},
		{"a node's change", "PATCH", "/api/v1/nodes/small", "application/json", `{"labels":` + many + `}`},
		{"a Deployment's pods", "POST", "/api/v1/deployments", "application/json", `{"metadata":{"name":"big"},"spec":{"selector":{"matchLabels":{"key-000000":"value"}},"template":{"metadata":{"labels":` + many + `},"spec":{"containers":[{"name":"c","image":"pause"}]}}}}`},
		{"an import", "POST", "/api/v1/import?replace=true", "application/json", `{` + header + `,"nodes":[{"metadata":{"name":"big","labels":` + many + `}}]}`},
		{"a scenario", "POST", "/api/v1/scenarios", "application/json", `{"apiVersion":"minisched/v1","kind":"Scenario","metadata":{"name":"big"},"spec":{"steps":[{"create":{"manifest":{"apiVersion":"v1","kind":"Node","metadata":{"name":"big","labels":` + many + `}}}}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var answer struct{ Error string }
			code := api(t, tt.method, tt.path, tt.contentType, []byte(tt.body), &answer)
			if code != http.StatusUnprocessableEntity || !strings.Contains(answer.Error, "labels of 300") || !strings.Contains(answer.Error, "bytes, over minisched's limit of 16384") {
				t.Errorf("%d %q, want 422 naming the part and its size", code, answer.Error)
			}
		})
	}
	if nodes, pods := counts(t); nodes != 1 || pods != 0 {
		t.Errorf("after the refusals: %d nodes and %d pods, want the one small node", nodes, pods)
	}
	node, err := inst.Client.CoreV1().Nodes().Get(context.Background(), "small", metav1.GetOptions{})
	if err != nil || len(node.Labels) > 5 {
		t.Errorf("node small after the refused change: %v, %d labels", err, len(node.Labels))
	}
}

// TestChunkedBodyOverTheLimit: a body sent without its length (chunked) is
// cut at the limit all the same: 413, and nothing is created.
func TestChunkedBodyOverTheLimit(t *testing.T) {
	reset(t)
	body := io.MultiReader(strings.NewReader(`{"metadata":{"name":"chunked","labels":{"a":"`), strings.NewReader(strings.Repeat("x", 2<<20)), strings.NewReader(`"}}}`))
	req, err := http.NewRequest("POST", strings.TrimSuffix(inst.URL, "/")+"/api/v1/nodes", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp := resttest.Send(t, req)
	if req.ContentLength != 0 || resp.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB chunked body: %d (length sent %d), want 413 without a length", resp.Code, req.ContentLength)
	}
	if nodes, _ := counts(t); nodes != 0 {
		t.Errorf("%d nodes after the refusal, want none", nodes)
	}
}
