package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/app"
	"minisched/examples/custom-plugins/labelscore"
	"minisched/examples/custom-plugins/licenses"
)

// The test binary doubles as this command, so that the bench can run it as
// the process of each run.
func TestMain(m *testing.M) {
	if os.Getenv("MINISCHED_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestBenchYourPlugin: `minisched bench` from a build with plugins of its
// own runs upstream's workload with them enabled (docs/workshop.md,
// "Benchmark your plugin"): their rows stand beside the in-tree plugins'.
func TestBenchYourPlugin(t *testing.T) {
	t.Setenv("MINISCHED_AS_MAIN", "1")
	var stdout, stderr bytes.Buffer
	err := app.Run(context.Background(), []string{"bench", "--scheduler-config", "scheduler-config.yaml", "--output", "json", "SchedulingBasic/5Nodes"}, &stdout, &stderr,
		app.WithPlugin(labelscore.Name, labelscore.New), app.WithPlugin(licenses.Name, licenses.New))
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Rounds []struct {
			Runs []struct {
				Measures []struct{ Pods, Placed int }
			}
		}
		Plugins []struct {
			Point, Plugin string
			Calls         int64
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the report: %v\n%s", err, stdout.String())
	}
	if len(rep.Rounds) != 1 || len(rep.Rounds[0].Runs) != 1 || len(rep.Rounds[0].Runs[0].Measures) != 1 || rep.Rounds[0].Runs[0].Measures[0].Placed != rep.Rounds[0].Runs[0].Measures[0].Pods {
		t.Fatalf("want one run that placed every measured pod: %+v", rep.Rounds)
	}
	calls := map[string]int64{}
	for _, r := range rep.Plugins {
		calls[r.Point+"/"+r.Plugin] = r.Calls
	}
	for _, want := range []string{"Score/" + labelscore.Name, "Filter/NodeResourcesFit", "Score/NodeResourcesBalancedAllocation"} {
		if calls[want] == 0 {
			t.Errorf("no calls of %s in the report: %v", want, calls)
		}
	}
	var licensed bool
	for key := range calls {
		licensed = licensed || strings.HasSuffix(key, "/"+licenses.Name)
	}
	if !licensed {
		t.Errorf("no row for %s in the report: %v", licenses.Name, calls)
	}
}

func TestCustomPluginsReportLikeAnyOther(t *testing.T) {
	app.QuietKlog(0)
	f := app.DefaultFlags()
	f.Addr, f.SchedulerConfig, f.Seed = "127.0.0.1:0", "scheduler-config.yaml", 1
	ctx := context.Background()
	inst, err := app.Start(ctx, f, slog.New(slog.NewTextHandler(io.Discard, nil)),
		app.WithPlugin(labelscore.Name, labelscore.New), app.WithPlugin(licenses.Name, licenses.New))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()

	for _, n := range []struct{ name, score, licenses string }{{"low", "10", "5"}, {"high", "90", "1"}} {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name,
			Labels:      map[string]string{labelscore.Label: n.score},
			Annotations: map[string]string{licenses.NodeAnnotation: n.licenses}}}
		if _, err := inst.Cluster.CreateNode(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	seen := func(context.Context) (bool, error) { return inst.Scheduler.Scheduler().NodeCount() == 2, nil }
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, seen); err != nil {
		t.Fatalf("waiting for the scheduler to see the nodes: %v", err)
	}
	licensed := func(name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{licenses.PodAnnotation: "true"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	}
	// The first licensed pod goes where LabelScore points: high.
	if _, err := inst.Cluster.CreatePod(ctx, licensed("first")); err != nil {
		t.Fatal(err)
	}
	if got := waitBound(t, inst, "first"); got != "high" {
		t.Fatalf("first bound to %s, want high (LabelScore 90 against 10)", got)
	}
	// The second would too, but high's only licence is taken: Licenses'
	// Filter rules high out, and it goes to low.
	if _, err := inst.Cluster.CreatePod(ctx, licensed("second")); err != nil {
		t.Fatal(err)
	}
	if got := waitBound(t, inst, "second"); got != "low" {
		t.Fatalf("second bound to %s, want low", got)
	}

	var sawScore, sawFilter, sawReserve bool
	entries, _, _ := inst.Recorder.Since(0, 100000)
	for _, e := range entries {
		ev := e.Event
		if ev.Score != nil && ev.Pod.Name == "first" {
			for i, p := range ev.Score.Plugins {
				if p.Name != labelscore.Name {
					continue
				}
				for _, row := range ev.Score.Rows() {
					want := map[string]int64{"low": 10, "high": 90}[row.Node]
					if row.Raw[i] != want || row.Weighted[i] != want*5 {
						t.Errorf("LabelScore on %s: raw %d weighted %d, want %d and %d", row.Node, row.Raw[i], row.Weighted[i], want, want*5)
					}
					sawScore = true
				}
			}
		}
		if ev.Filter != nil && ev.Pod.Name == "second" {
			for _, row := range ev.Filter.Rows() {
				last := len(row.Codes) - 1
				if row.Node == "high" && ev.Filter.Plugins[last] == licenses.Name && row.Codes[last] == int(fwk.Unschedulable) {
					sawFilter = row.Reason == "no licence left (1 of 1 in use)"
				}
			}
		}
		if ev.Point != nil && ev.Point.Point == "Reserve" && ev.Pod.Name == "second" {
			for _, r := range ev.Point.Results {
				sawReserve = sawReserve || r.Plugin == licenses.Name && r.Code == int(fwk.Success)
			}
		}
	}
	if !sawScore {
		t.Error("no LabelScore results on the stream")
	}
	if !sawFilter {
		t.Error("no Licenses rejection of node high at Filter on the stream")
	}
	if !sawReserve {
		t.Error("no Licenses claim at Reserve on the stream")
	}
}

func waitBound(t *testing.T, inst *app.Instance, name string) string {
	t.Helper()
	var node string
	bound := func(ctx context.Context) (bool, error) {
		pod, err := inst.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			node = pod.Spec.NodeName
		}
		return node != "", nil
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, bound); err != nil {
		t.Fatalf("waiting for %s to be bound: %v", name, err)
	}
	return node
}
