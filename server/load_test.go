package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/scenario"
	"minisched/server/streamtest"
)

// TestLoad: 30 dashboard clients follow a scenario that creates 5,000 pods.
// No client is starved (no gap, no resync), memory stays bounded, and every
// pod is accounted for.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 pods under the race detector take too long; hack/test.sh runs this test without -short first")
	}
	reset(t)
	const clients, nodes, pods = 30, 50, 5000
	url := "ws" + strings.TrimPrefix(strings.TrimSuffix(inst.URL, "/"), "http") + "/api/v1/stream"
	var readers []*streamtest.Follower
	var conns []*websocket.Conn
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		conn, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := &streamtest.Follower{}
		readers, conns = append(readers, f), append(conns, conn)
		wg.Add(1)
		go func() { defer wg.Done(); f.Read(conn) }()
	}
	body := fmt.Sprintf(`apiVersion: minisched/v1
kind: Scenario
metadata: {name: load}
spec:
  steps:
  - create:
      count: %d
      manifest: {apiVersion: v1, kind: Node, metadata: {name: "node-{{i}}"}, status: {allocatable: {cpu: "64", pods: "200"}}}
  - create:
      count: %d
      manifest:
        apiVersion: v1
        kind: Pod
        metadata: {name: "pod-{{i}}"}
        spec: {containers: [{name: c, image: "pause:3.10", resources: {requests: {cpu: 10m}}}]}
  - wait: {for: scheduled, pod: pod-%d, timeout: 10m}
  - wait: {for: settled, timeout: 10m}
  - expect: {scheduledPods: %d, unscheduledPods: 0}
`, nodes, pods, pods, pods)
	begun := time.Now()
	var run scenario.Run
	if code := api(t, "POST", "/api/v1/scenarios?wait=true", "application/yaml", []byte(body), &run); code != http.StatusOK {
		t.Fatalf("scenario: %d", code)
	}
	took := time.Since(begun)
	if run.State != scenario.StatePassed {
		t.Fatalf("scenario %s: %+v", run.State, run.Report.Expectations)
	}

	// Every pod accounted for: bound, or unschedulable with a reason.
	list, err := inst.Client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName == "" {
			reason := ""
			for _, c := range p.Status.Conditions {
				reason = c.Message
			}
			if reason == "" {
				t.Errorf("pod %s is neither bound nor explained", p.Name)
			}
		}
	}
	if len(list.Items) != pods {
		t.Errorf("%d pods in the cluster, want %d", len(list.Items), pods)
	}

	// Every client caught up, with no gap and no resync.
	target := inst.Recorder.LastSeq()
	eventually(t, 2*time.Minute, "every client to catch up", func() bool {
		for _, f := range readers {
			if f.Last() < target {
				return false
			}
		}
		return true
	})
	for i, f := range readers {
		if st := f.Stats(); st.Gaps != 0 || st.Resyncs != 0 {
			t.Errorf("client %d: %d gaps, %d resyncs", i, st.Gaps, st.Resyncs)
		}
	}
	for _, conn := range conns {
		conn.Close()
	}
	wg.Wait()

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := inst.Recorder.Stats()
	if st.Weight > st.MaxWeight {
		t.Errorf("history weight %d over its cap %d", st.Weight, st.MaxWeight)
	}
	t.Logf("%d pods on %d nodes with %d clients in %v; %d events; history %d of %d (dropped %d); heap in use %d MB (with etcd and the apiserver)",
		pods, nodes, clients, took.Round(time.Second), target, st.Weight, st.MaxWeight, st.Dropped, ms.HeapInuse>>20)
}

// TestClientDisconnectsMidStream: a client that drops its connection while
// events flow is cleaned up; the server counts it gone.
func TestClientDisconnectsMidStream(t *testing.T) {
	reset(t)
	before := streamClients(t)
	c := dial(t, "")
	if _, err := c.next(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the client counted", func() bool { return streamClients(t) == before+1 })
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "8"))
	for i := 0; i < 20; i++ {
		mustCreate(t, "/api/v1/pods", podJSON(fmt.Sprintf("p-%d", i), "10m"))
	}
	_ = c.conn.UnderlyingConn().Close() // no close frame: the network just goes
	eventually(t, 90*time.Second, "the server to let the client go", func() bool { return streamClients(t) == before })
}

func streamClients(t *testing.T) int {
	t.Helper()
	return int(metric(t, "minisched_stream_clients"))
}

// metric reads one sample from /metrics, by its name and labels as printed;
// a sample not printed yet is 0.
func metric(t *testing.T, sample string) float64 {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(inst.URL, "/") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := new(bytes.Buffer)
	buf.ReadFrom(resp.Body)
	for _, line := range strings.Split(buf.String(), "\n") {
		if value, ok := strings.CutPrefix(line, sample+" "); ok {
			n, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return n
		}
	}
	return 0
}
