package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"minisched/app"
	"minisched/internal/resttest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestAttachMode starts one minisched with its embedded control plane and
// two more attached to it through its kubeconfig: the attached ones elect a
// leader, and the leader binds the pods that name minisched, and only those.
func TestAttachMode(t *testing.T) {
	ctx := context.Background()
	home := start(t, nil)
	var attached []*app.Instance
	for i := 0; i < 2; i++ {
		attached = append(attached, start(t, attachTo(home, nil)))
	}
	var leader *app.Instance
	waitUntil(t, 30*time.Second, "one attached replica to lead", func() bool {
		running := 0
		for _, inst := range attached {
			if inst.Scheduler.State().State == "running" {
				running, leader = running+1, inst
			}
		}
		return running == 1
	})

	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	if _, err := home.Cluster.CreateNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	pod := func(name, scheduler string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PodSpec{SchedulerName: scheduler, Containers: []v1.Container{{Name: "c", Image: "pause:3.10"}}}}
	}
	for _, p := range []*v1.Pod{pod("for-minisched", "minisched"), pod("for-someone-else", "other-scheduler"), pod("for-home", "")} {
		if _, err := home.Cluster.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	boundTo := func(name string) string {
		p, err := home.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return p.Spec.NodeName
	}
	waitUntil(t, 30*time.Second, "the minisched pod bound", func() bool { return boundTo("for-minisched") == "node-1" })
	waitUntil(t, 30*time.Second, "the default-scheduler pod bound by the embedded scheduler", func() bool { return boundTo("for-home") == "node-1" })
	// Informers deliver in order: once a pod created after it is bound, the
	// leader has had the pod of another scheduler in hand, and let it be.
	if _, err := home.Cluster.CreatePod(ctx, pod("after-the-others", "minisched")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "a later minisched pod bound", func() bool { return boundTo("after-the-others") == "node-1" })
	if n := boundTo("for-someone-else"); n != "" {
		t.Errorf("a pod of another scheduler was bound to %q", n)
	}
	// The leader's history holds the cycles of its pods, and none of the
	// others. Its node and pod informers are separate watches, so a pod may
	// reach it before node-1 does: that first attempt finds no node, and the
	// node's arrival requeues it. So count pods tried, not cycles.
	tried := map[string]int{}
	for _, c := range leader.Recorder.Cycles("", 100) {
		tried[c.Pod.Name]++
	}
	if tried["for-minisched"] == 0 || tried["after-the-others"] == 0 || len(tried) != 2 {
		t.Errorf("the leader tried %v, want for-minisched and after-the-others only", tried)
	}
	// Attached, minisched only reads: reset, creates, deletes and
	// scenarios are refused; lists come from its informer cache.
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "api/v1/reset", ""},
		{"POST", "api/v1/nodes", `{"metadata":{"name":"intruder"}}`},
		{"DELETE", "api/v1/nodes/node-1", ""},
		{"DELETE", "api/v1/pods/default/for-home", ""},
		{"POST", "api/v1/scenarios?bundled=02-filter", ""},
		{"POST", "api/v1/whatif/reschedule", ""},
	} {
		if code := call(t, tt.method, leader.URL+tt.path, tt.body); code != http.StatusForbidden {
			t.Errorf("%s %s when attached: %d, want 403", tt.method, tt.path, code)
		}
	}
	if _, err := home.Client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{}); err != nil {
		t.Errorf("node-1 after the refused delete: %v", err)
	}
	if code := call(t, "GET", leader.URL+"api/v1/nodes", ""); code != http.StatusOK {
		t.Errorf("list when attached: %d", code)
	}

	// With --allow-writes it writes, and deletes only what it labelled.
	writer := start(t, attachTo(home, func(f *app.Flags) { f.AllowWrites, f.LeaderElect, f.SchedulerName = true, false, "nobody" }))
	if code := call(t, "POST", writer.URL+"api/v1/nodes", `{"metadata":{"name":"mine"}}`); code != http.StatusCreated {
		t.Fatalf("create with --allow-writes: %d", code)
	}
	mine, err := home.Client.CoreV1().Nodes().Get(ctx, "mine", metav1.GetOptions{})
	if err != nil || mine.Labels["minisched.dev/created-by"] != "minisched" {
		t.Fatalf("the created node %v: %v, want the owner label", mine.GetLabels(), err)
	}
	if code := call(t, "DELETE", writer.URL+"api/v1/nodes/node-1", ""); code != http.StatusForbidden {
		t.Errorf("delete of a node minisched did not create: %d, want 403", code)
	}
	if code := call(t, "DELETE", writer.URL+"api/v1/nodes/mine", ""); code != http.StatusNoContent {
		t.Errorf("delete of its own node: %d, want 204", code)
	}
	// What it creates there is held to what a lesson needs.
	podJSON := func(namespace, spec string) string {
		return `{"metadata":{"name":"p","namespace":"` + namespace + `"},"spec":{"containers":[{"name":"c","image":"pause"}]` + spec + `}}`
	}
	refused := []struct{ name, body string }{
		{"another namespace", podJSON("kube-system", "")},
		{"a bound pod", podJSON("default", `,"nodeName":"node-1"`)},
		{"another scheduler", podJSON("default", `,"schedulerName":"default-scheduler"`)},
		{"the host's network", podJSON("default", `,"hostNetwork":true`)},
		{"the host's pids", podJSON("default", `,"hostPID":true`)},
		{"a host path", podJSON("default", `,"volumes":[{"name":"root","hostPath":{"path":"/"}}]`)},
		{"a Deployment's bound pods", `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"pause"}]}}}}`},
	}
	for _, tt := range refused {
		path := "api/v1/pods"
		if strings.Contains(tt.name, "Deployment") {
			path = "api/v1/deployments"
		}
		if code := call(t, "POST", writer.URL+path, tt.body); code != http.StatusForbidden {
			t.Errorf("%s with --allow-writes: %d, want 403", tt.name, code)
		}
	}
	if code := call(t, "POST", writer.URL+"api/v1/pods", podJSON("default", "")); code != http.StatusCreated {
		t.Errorf("a plain pod in default with --allow-writes: %d, want 201", code)
	}
	// Created unbound (a nodeName was refused above), for minisched's own
	// scheduler (nobody), which may have placed it by now.
	created, err := home.Client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil || created.Spec.SchedulerName != "nobody" {
		t.Errorf("the created pod: %v, want it for minisched's scheduler (nobody)", err)
	}
	host := start(t, attachTo(home, func(f *app.Flags) {
		f.AllowWrites, f.LeaderElect, f.SchedulerName, f.AllowWritesIn, f.AllowHostAccess = true, false, "nobody", "default,kube-system", true
	}))
	if code := call(t, "POST", host.URL+"api/v1/pods", podJSON("kube-system", `,"hostNetwork":true`)); code != http.StatusCreated {
		t.Errorf("a host-network pod in kube-system with --allow-writes-in and --allow-host-access: %d, want 201", code)
	}
	// What-if unbinds every pod: never on a real cluster, writes allowed or not.
	if code := call(t, "POST", writer.URL+"api/v1/whatif/reschedule", ""); code != http.StatusForbidden {
		t.Errorf("what-if with --allow-writes: %d, want 403", code)
	}
}

// start runs a minisched on a free port, closed when the test ends; set
// changes its flags first.
func start(t *testing.T, set func(*app.Flags)) *app.Instance {
	t.Helper()
	app.QuietKlog(0)
	f := app.DefaultFlags()
	f.Addr = "127.0.0.1:0"
	if set != nil {
		set(&f)
	}
	inst, err := app.Start(context.Background(), f, quiet())
	if err != nil {
		t.Fatalf("starting minisched: %v", err)
	}
	t.Cleanup(func() { _ = inst.Close() })
	return inst
}

// attachTo sets flags that attach to home's cluster, then set's.
func attachTo(home *app.Instance, set func(*app.Flags)) func(*app.Flags) {
	return func(f *app.Flags) {
		f.Kubeconfig = home.ControlPlane.KubeconfigPath()
		if set != nil {
			set(f)
		}
	}
}

// call sends a JSON request and returns the status code.
func call(t *testing.T, method, url, body string) int {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	return resttest.Call(t, method, url, contentType, []byte(body), nil).Code
}

// waitUntil polls cond until it holds, and fails the test after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	poll := func(context.Context) (bool, error) { return cond(), nil }
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, poll); err != nil {
		t.Fatalf("waiting %v for %s: %v", timeout, what, err)
	}
}

// TestRegainedLeaseKeepsConfig takes the lease away from an attached leader
// that was given a configuration by PUT: while it stands by, a second PUT is
// kept without starting a scheduler, and when it leads again it schedules
// with the configuration last PUT, not the one it started with.
func TestRegainedLeaseKeepsConfig(t *testing.T) {
	ctx := context.Background()
	home := start(t, nil)
	r := start(t, attachTo(home, func(f *app.Flags) {
		f.Lease = app.LeaseTiming{Duration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
	}))
	running := func() bool { return r.Scheduler.Scheduler() != nil }
	waitUntil(t, 30*time.Second, "the replica to lead", running)

	withScore := func(plugin string) string {
		return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: " + plugin + "\n        weight: 3\n"
	}
	put := func(body string) {
		t.Helper()
		req, _ := http.NewRequest("PUT", r.URL+"api/v1/scheduler/config", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/yaml")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT configuration: %d", resp.StatusCode)
		}
	}
	put(withScore("NodeNumber"))

	// Another holder renews the lease: the replica cannot renew it and
	// stops scheduling until that holder's lease runs out.
	leases := home.Client.CoordinationV1().Leases("default")
	lease, err := leases.Get(ctx, "minisched", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	thief, seconds, now := "another-replica", int32(4), metav1.NewMicroTime(time.Now())
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = &thief, &seconds
	lease.Spec.AcquireTime, lease.Spec.RenewTime = &now, &now
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the replica to stand by", func() bool { return !running() })

	// Standing by, a PUT is kept and starts nothing.
	put(withScore("NodeNumber") + "      disabled:\n      - name: NodeResourcesBalancedAllocation\n")
	if running() {
		t.Fatal("a PUT while standing by started a scheduler")
	}
	waitUntil(t, 60*time.Second, "the replica to lead again", running)
	score := map[string]bool{}
	for _, p := range r.Scheduler.Scheduler().Plugins(r.Scheduler.Scheduler().Profiles()[0]).Score.Enabled {
		score[p.Name] = true
	}
	if !score["NodeNumber"] || score["NodeResourcesBalancedAllocation"] {
		t.Errorf("Score plugins after the lease came back: %v, want the configuration last PUT (NodeNumber, without NodeResourcesBalancedAllocation)", score)
	}
}
