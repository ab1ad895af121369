package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"minisched/app"
	"minisched/internal/resttest"
)

// One minisched for the package: a control plane costs seconds to start.
// Tests reset the cluster before they begin.
var inst *app.Instance

// scenariosDir is the instance's --scenarios-dir.
var scenariosDir string

func TestMain(m *testing.M) {
	app.QuietKlog(0)
	f := app.DefaultFlags()
	f.Addr = "127.0.0.1:0"
	f.StreamBuffer = 20000
	f.StreamWriteTimeout = 2 * time.Second
	// These tests create pods as fast as they can; the limit has a test of
	// its own.
	f.RateLimit = 5000
	var err error
	if scenariosDir, err = os.MkdirTemp("", "scenarios"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f.ScenariosDir = scenariosDir
	inst, err = app.Start(context.Background(), f, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting minisched:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := inst.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping minisched:", err)
	}
	_ = os.RemoveAll(scenariosDir)
	os.Exit(code)
}

// api calls the REST API and decodes a JSON answer into out (if not nil).
func api(t *testing.T, method, path, contentType string, body []byte, out any) int {
	t.Helper()
	resp := resttest.Call(t, method, strings.TrimSuffix(inst.URL, "/")+path, contentType, body, nil)
	if out != nil && len(resp.Body) > 0 {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", method, path, resp.Body, err)
		}
	}
	return resp.Code
}

func reset(t *testing.T) {
	t.Helper()
	if code := api(t, "POST", "/api/v1/reset", "", nil, nil); code != http.StatusNoContent {
		t.Fatalf("reset: %d", code)
	}
	api(t, "POST", "/api/v1/scheduler/resume", "", nil, nil)
	eventually(t, 30*time.Second, "the cluster to be empty", func() bool {
		nodes, _ := inst.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		pods, _ := inst.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
		return len(nodes.Items) == 0 && len(pods.Items) == 0
	})
}

// eventually polls cond until it holds, and fails the test after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	poll := func(context.Context) (bool, error) { return cond(), nil }
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, poll); err != nil {
		t.Fatalf("waiting %v for %s: %v", timeout, what, err)
	}
}

// kubeletReported waits for the simulated kubelet's first status of node:
// until then a node's status is the one it was made with.
func kubeletReported(t *testing.T, name string) {
	t.Helper()
	eventually(t, time.Minute, "the kubelet of "+name+" to report", func() bool {
		n, err := inst.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady {
				return c.Reason == "KubeletReady"
			}
		}
		return false
	})
}

func nodeJSON(name, cpu string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q},"status":{"allocatable":{"cpu":%q,"memory":"8Gi","pods":"110"}}}`, name, cpu))
}

func podJSON(name, cpu string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{"containers":[{"name":"c","image":"pause:3.10","resources":{"requests":{"cpu":%q}}}]}}`, name, cpu))
}

func mustCreate(t *testing.T, path string, body []byte) {
	t.Helper()
	var e map[string]any
	if code := api(t, "POST", path, "application/json", body, &e); code != http.StatusCreated {
		t.Fatalf("POST %s: %d %v", path, code, e)
	}
}

func boundNode(t *testing.T, name string) string {
	t.Helper()
	pod, err := inst.Client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return pod.Spec.NodeName
}

func counts(t *testing.T) (nodes, pods int) {
	t.Helper()
	var nl struct{ Items []v1.Node }
	var pl struct{ Items []v1.Pod }
	api(t, "GET", "/api/v1/nodes", "", nil, &nl)
	api(t, "GET", "/api/v1/pods", "", nil, &pl)
	return len(nl.Items), len(pl.Items)
}
