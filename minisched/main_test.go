package minisched_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/app"
	"minisched/cluster"
	"minisched/event"
	"minisched/k8sapiserver"
	"minisched/minisched"
	"minisched/minisched/internal/eventlog"
	"minisched/minisched/schedconfig"
)

// One control plane for the package; each test starts its own scheduler on
// an emptied cluster.
var (
	cp     *k8sapiserver.ControlPlane
	client kubernetes.Interface
)

func TestMain(m *testing.M) {
	app.QuietKlog(0)
	var err error
	cp, err = k8sapiserver.Start(context.Background(), k8sapiserver.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the control plane:", err)
		os.Exit(1)
	}
	client = kubernetes.NewForConfigOrDie(cp.RESTConfig())
	code := m.Run()
	_ = cp.Close()
	os.Exit(code)
}

// eventLog is the package's test observer.
type eventLog struct{ eventlog.Log }

// find returns the events of the pod that match.
func (l *eventLog) find(pod string, match func(event.Event) bool) []event.Event {
	return l.Find(ofPod(pod, match))
}

func ofPod(pod string, match func(event.Event) bool) func(event.Event) bool {
	return func(e event.Event) bool { return e.Pod != nil && e.Pod.Name == pod && match(e) }
}

func ofKind(kind event.Kind) func(event.Event) bool {
	return func(e event.Event) bool { return e.Kind == kind }
}

type harness struct {
	t   *testing.T
	svc *minisched.Service
	log *eventLog
	// nodes counts the nodes addNodes created.
	nodes int
}

type harnessOption func(*minisched.ServiceOptions)

// withPlugin registers a plugin of the test's own; the configuration must
// enable it (see multiPoint).
func withPlugin(p fwk.Plugin) harnessOption {
	return func(o *minisched.ServiceOptions) {
		if o.OutOfTree == nil {
			o.OutOfTree = frameworkruntime.Registry{}
		}
		o.OutOfTree[p.Name()] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return p, nil }
	}
}

func withCycleTimeout(d time.Duration) harnessOption {
	return func(o *minisched.ServiceOptions) { o.CycleTimeout = d }
}

// multiPoint is a configuration that enables the plugins, beside the
// default ones, at every extension point they implement.
func multiPoint(plugins ...string) string {
	cfg := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled:
`
	for _, name := range plugins {
		cfg += "      - name: " + name + "\n"
	}
	return cfg
}

// start empties the cluster and runs a scheduler with configYAML (the
// defaults when empty).
func start(t *testing.T, configYAML string, opts ...harnessOption) *harness {
	t.Helper()
	emptyCluster(t, client)
	cfg, err := schedconfig.Default("")
	if configYAML != "" {
		cfg, err = schedconfig.Load([]byte(configYAML), "")
	}
	if err != nil {
		t.Fatalf("configuration: %v", err)
	}
	h := &harness{t: t, log: &eventLog{}}
	so := minisched.ServiceOptions{Client: client, RESTConfig: cp.RESTConfig(), Observer: h.log, Tuning: minisched.Tuning{Seed: 1}}
	for _, o := range opts {
		o(&so)
	}
	h.svc = minisched.NewService(so)
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.svc.Start(ctx, cfg); err != nil {
		t.Fatalf("starting the scheduler: %v", err)
	}
	t.Cleanup(func() {
		h.svc.Stop()
		cancel()
	})
	waitFor(t, 30*time.Second, "the scheduler to sync", h.svc.Ready)
	return h
}

// emptyCluster deletes every pod and node of c and waits until they are gone.
func emptyCluster(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	zero := int64(0)
	if err := c.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "an empty cluster", func() bool {
		pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0 && len(nodes.Items) == 0
	})
}

// waitFor polls cond, a state the test cannot await as an event (the
// apiserver's, the cache's), until it holds; after timeout it fails the test.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting %v for %s: %v", timeout, what, err)
	}
}

// await waits for the first event of the pod that matches and returns it.
func (h *harness) await(pod, what string, match func(event.Event) bool) event.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := h.log.Await(ctx, ofPod(pod, match))
	if err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
	return e
}

// addNodes creates the nodes and waits until the scheduler's cache has them.
func (h *harness) addNodes(nodes ...*v1.Node) {
	h.t.Helper()
	createNodes(h.t, client, nodes...)
	h.nodes += len(nodes)
	waitFor(h.t, 30*time.Second, "the nodes in the cache", func() bool { return h.svc.Scheduler().NodeCount() == h.nodes })
}

// node builds a node with cpu cores and 16Gi; mutators add the rest.
func node(name string, cpu string, mutators ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110"),
		}}}
	n.Status.Capacity = n.Status.Allocatable.DeepCopy()
	for _, m := range mutators {
		m(n)
	}
	return n
}

func createNodes(t *testing.T, c kubernetes.Interface, nodes ...*v1.Node) {
	t.Helper()
	ctx := context.Background()
	for _, n := range nodes {
		status := n.Status
		created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating node %s: %v", n.Name, err)
		}
		created.Status = status
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("writing node %s's status: %v", n.Name, err)
		}
	}
}

// pod builds a pod requesting cpu; mutators add the rest.
func pod(name, cpu string, mutators ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	for _, m := range mutators {
		m(p)
	}
	return p
}

func createPod(t *testing.T, c kubernetes.Interface, p *v1.Pod) {
	t.Helper()
	// A class made a moment ago is refused until admission's informer has it.
	err := cluster.WaitForClass(context.Background(), func() error {
		_, err := c.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating pod %s: %v", p.Name, err)
	}
}

func nodeOf(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	p, err := c.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return p.Spec.NodeName
}

func waitBound(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	var n string
	waitFor(t, 30*time.Second, name+" to be bound", func() bool { n = nodeOf(t, c, name); return n != "" })
	return n
}

// waitUnschedulable waits for the first cycle of the pod that ended
// unschedulable and returns it.
func (h *harness) waitUnschedulable(name string) *event.CycleEnd {
	h.t.Helper()
	return h.await(name, name+" to be found unschedulable", func(e event.Event) bool {
		return e.Kind == event.KindCycleEnd && e.CycleEnd.Result == event.ResultUnschedulable
	}).CycleEnd
}

// waitParked waits for the pod's move into the unschedulable set.
func (h *harness) waitParked(name string) {
	h.t.Helper()
	h.await(name, name+" in the unschedulable set", func(e event.Event) bool {
		return e.Kind == event.KindQueue && e.Queue.To == event.Unschedulable
	})
}

func withBindingTimeout(d time.Duration) harnessOption {
	return func(o *minisched.ServiceOptions) { o.BindingTimeout = d }
}
