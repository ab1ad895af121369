package schedperf

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"minisched/k8sapiserver"
)

func TestMain(m *testing.M) {
	// The embedded apiservers' logs would bury the tests' own.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// startCluster starts an embedded apiserver for one test and an executor
// writing to it, reading templates from a directory of the test's.
func startCluster(t *testing.T, templates map[string]string) (*executor, kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cp, err := k8sapiserver.Start(ctx, k8sapiserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dir := t.TempDir()
	for name, text := range templates {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := &executor{tc: &TestCase{Dir: dir}, o: Options{Client: client, RESTConfig: cp.RESTConfig(), Timeout: time.Minute, Progress: func(string) {}},
		expected: map[string]int{}, changed: make(chan struct{}, 1)}
	return e, client
}

// watchPods gives e the pod informer the runner gives it, running until
// the test ends; the context returned ends with it.
func watchPods(t *testing.T, e *executor, client kubernetes.Interface) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, 0)
	e.pods = factory.Core().V1().Pods().Informer()
	factory.Start(ctx.Done())
	// Shutdown waits for the informer, which stops with ctx.
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	return ctx
}

// TestChurn runs churn's two modes against a real apiserver, as upstream's
// runner churns: create makes number objects and stops; recreate keeps at
// most number alive, deleting the oldest in turn, until the workload ends.
func TestChurn(t *testing.T) {
	e, client := startCluster(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: churn-}\ndata: {a: b}\n"})
	ctx := context.Background()
	ns := "churned"
	// Every change to the namespace's ConfigMaps, in order.
	w, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	next := func() (watch.EventType, string) {
		ev := <-w.ResultChan()
		return ev.Type, ev.Object.(*v1.ConfigMap).Name
	}

	t.Run("recreate", func(t *testing.T) {
		if err := e.churn(ctx, 0, &churnOp{Mode: "recreate", Number: 2, IntervalMilliseconds: 1, Namespace: &ns, TemplatePaths: []string{"cm.yaml"}}); err != nil {
			t.Fatal(err)
		}
		// Rounds alternate per slot: two made, then those two deleted
		// oldest first, then two more.
		var made []string
		want := []watch.EventType{watch.Added, watch.Added, watch.Deleted, watch.Deleted, watch.Added, watch.Added}
		for i, wantType := range want {
			typ, name := next()
			if typ != wantType {
				t.Fatalf("change %d: %s %s, want %s", i, typ, name, wantType)
			}
			switch typ {
			case watch.Added:
				made = append(made, name)
			case watch.Deleted:
				if name != made[i-2] {
					t.Errorf("change %d deleted %s, want the oldest, %s", i, name, made[i-2])
				}
			}
		}
		if err := e.stopBackground(); err != nil {
			t.Fatal(err)
		}
		list, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(list.Items); n > 2 {
			t.Errorf("%d ConfigMaps alive, want at most 2", n)
		}
		// Drain what the last round did before it stopped.
		if err := client.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		for range len(list.Items) {
			next()
		}
	})

	t.Run("create", func(t *testing.T) {
		e.background = nil
		if err := e.churn(ctx, 0, &churnOp{Mode: "create", Number: 3, IntervalMilliseconds: 1, Namespace: &ns, TemplatePaths: []string{"cm.yaml"}}); err != nil {
			t.Fatal(err)
		}
		// The goroutine ends by itself after three rounds.
		e.running.Wait()
		list, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(list.Items); n != 3 {
			t.Errorf("%d ConfigMaps, want the 3 of 3 rounds", n)
		}
	})
}

// TestUpdateAny updates a node and its status from a template, as
// upstream's updateAny does (Update, then UpdateStatus), each object
// rendered with its Index.
func TestUpdateAny(t *testing.T) {
	e, client := startCluster(t, map[string]string{
		"node.yaml": "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{{.Index}}\n  labels: {zone: b}\nspec:\n  unschedulable: false\nstatus:\n  capacity: {pods: \"7\"}\n",
	})
	ctx := context.Background()
	for _, name := range []string{"node-0", "node-1"} {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "a"}}, Spec: v1.NodeSpec{Unschedulable: true}}
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	two := 2
	if err := e.updateAny(ctx, &updateAnyOp{TemplatePath: "node.yaml", Count: &two, UpdatePerSecond: 100}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node-0", "node-1"} {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Labels["zone"] != "b" || n.Spec.Unschedulable || n.Status.Capacity.Pods().Value() != 7 {
			t.Errorf("%s: labels %v, unschedulable %t, capacity %v; want the template's", name, n.Labels, n.Spec.Unschedulable, n.Status.Capacity)
		}
	}
	// A namespaced kind without a namespace is refused, as upstream's is.
	if err := e.updateAny(ctx, &updateAnyOp{TemplatePath: "node.yaml", Namespace: "x"}); err == nil {
		t.Error("a namespace for a cluster-scoped kind: no error")
	}
}

// TestDeletePods deletes the pods a selector matches, as upstream's runner
// does: at a rate, one by one, or all in one request; in the background
// when told to skip waiting, until the workload ends.
func TestDeletePods(t *testing.T) {
	e, client := startCluster(t, nil)
	ctx := watchPods(t, e, client)
	if _, err := e.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { e.signal() },
		DeleteFunc: func(any) { e.signal() },
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		op   deletePodsOp
	}{
		{"at a rate", deletePodsOp{DeletePodsPerSecond: 100}},
		{"all at once", deletePodsOp{}},
		{"at a rate, in the background", deletePodsOp{DeletePodsPerSecond: 100, SkipWaitToCompletion: true}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := fmt.Sprintf("del-%d", i)
			if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// Three pods to delete and one the selector spares; unbound,
			// so the apiserver deletes them at once.
			for j, role := range []string{"go", "go", "go", "stay"} {
				p := basePod()
				p.Name, p.Labels = fmt.Sprintf("p-%d", j), map[string]string{"role": role}
				if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			cache.WaitForCacheSync(ctx.Done(), e.pods.HasSynced)
			inStore := func() int {
				n := 0
				for _, obj := range e.pods.GetStore().List() {
					if obj.(*v1.Pod).Namespace == ns {
						n++
					}
				}
				return n
			}
			if err := e.wait(ctx, "the pods made", func() bool { return inStore() == 4 }); err != nil {
				t.Fatal(err)
			}
			op := tt.op
			op.Namespace, op.LabelSelector = ns, map[string]string{"role": "go"}
			if err := e.deletePods(ctx, &op); err != nil {
				t.Fatal(err)
			}
			// In the background too, the three go before the workload ends.
			if err := e.wait(ctx, "the pods deleted", func() bool { return inStore() == 1 }); err != nil {
				t.Fatal(err)
			}
			if err := e.stopBackground(); err != nil {
				t.Fatal(err)
			}
			e.background = nil
			pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(pods.Items) != 1 || pods.Items[0].Name != "p-3" {
				t.Errorf("%d pods left, want p-3 alone: %v", len(pods.Items), pods.Items)
			}
		})
	}
}

// TestPodsWithVolumes makes pods as upstream's runner does from PV and
// PVC templates: each pod's claim and volume bound to each other, the
// claim the pod's one volume; and CSINodes with the strategy's limits.
func TestPodsWithVolumes(t *testing.T) {
	e, client := startCluster(t, map[string]string{
		"pv.yaml":  "apiVersion: v1\nkind: PersistentVolume\nspec:\n  accessModes: [ReadOnlyMany]\n  capacity: {storage: 1Gi}\n  csi: {driver: ebs.csi.aws.com}\n  persistentVolumeReclaimPolicy: Retain\n",
		"pvc.yaml": "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  annotations: {pv.kubernetes.io/bind-completed: \"true\"}\nspec:\n  accessModes: [ReadOnlyMany]\n  resources: {requests: {storage: 1Gi}}\n",
	})
	ctx := context.Background()
	pv, pvc := "pv.yaml", "pvc.yaml"
	ns := "vols"
	op := &createPodsOp{Count: 2, Namespace: &ns, SkipWaitToCompletion: true, SignatureBatchSize: 1,
		PersistentVolumeTemplatePath: &pv, PersistentVolumeClaimTemplatePath: &pvc}
	if err := e.createPods(ctx, 0, op); err != nil {
		t.Fatal(err)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claimed := map[string]bool{}
	for _, p := range pods.Items {
		if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].PersistentVolumeClaim == nil {
			t.Fatalf("pod %s: volumes %+v, want one claim", p.Name, p.Spec.Volumes)
		}
		claimed[p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName] = true
	}
	for i := range 2 {
		name := fmt.Sprintf("pvc-%d", i)
		c, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !claimed[name] || c.Status.Phase != v1.ClaimBound || v.Status.Phase != v1.VolumeBound || v.Spec.ClaimRef == nil ||
			v.Spec.ClaimRef.Name != name || v.Spec.CSI.VolumeHandle != v.Name || v.Name != fmt.Sprintf("vols-vol-%d", i) {
			t.Errorf("claim %s (%s, claimed by a pod %t) and volume %s (%s, claim %v, handle %s): want bound to each other",
				name, c.Status.Phase, claimed[name], v.Name, v.Status.Phase, v.Spec.ClaimRef, v.Spec.CSI.VolumeHandle)
		}
	}

	limit := int32(20)
	nodes := &createNodesOp{Count: 2, NodeAllocatableStrategy: &nodeAllocatableStrategy{
		NodeAllocatable:    map[v1.ResourceName]string{"attachable-volumes-csi-ebs.csi.aws.com": "20"},
		CsiNodeAllocatable: map[string]*storagev1.VolumeNodeResources{"ebs.csi.aws.com": {Count: &limit}},
		MigratedPlugins:    []string{"kubernetes.io/aws-ebs"},
	}}
	if err := e.createNodes(ctx, 1, nodes); err != nil {
		t.Fatal(err)
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("%d nodes, want 2", len(list.Items))
	}
	for _, n := range list.Items {
		c, err := client.StorageV1().CSINodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d := c.Spec.Drivers
		if len(d) != 1 || d[0].Name != "ebs.csi.aws.com" || d[0].Allocatable == nil || *d[0].Allocatable.Count != 20 ||
			c.Annotations[v1.MigratedPluginsAnnotationKey] != "kubernetes.io/aws-ebs" || n.Labels[v1.LabelHostname] != n.Name {
			t.Errorf("node %s (labels %v): CSINode drivers %+v, annotations %v", n.Name, n.Labels, d, c.Annotations)
		}
	}
}

// TestNodeStrategies applies createNodes' strategies as upstream's node
// preparer does: to the nodes at the list positions the op's nodes would
// take, in name order. Here the nodes made later sort first, so the
// strategies land on the nodes of the first op, as they would upstream.
func TestNodeStrategies(t *testing.T) {
	e, client := startCluster(t, map[string]string{"node.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: '{{.prefix}}-{{.Index}}'}\n"})
	ctx := context.Background()
	tmpl := "node.yaml"
	op := func(prefix string) *createNodesOp {
		return &createNodesOp{Count: 2, NodeTemplatePath: &tmpl, TemplateParams: map[string]any{"prefix": prefix}}
	}
	steps := []*createNodesOp{op("z"), op("m"), op("a"), op("b")}
	steps[1].LabelNodePrepareStrategy = &labelNodeStrategy{LabelKey: "zone", LabelValues: []string{"x", "y"}}
	steps[2].UniqueNodeLabelStrategy = &uniqueNodeLabelStrategy{LabelKey: "unique"}
	steps[3].NodeAllocatableStrategy = &nodeAllocatableStrategy{NodeAllocatable: map[v1.ResourceName]string{"example.com/foo": "3"},
		MigratedPlugins: []string{"kubernetes.io/aws-ebs"}}
	// The ops' nodes take positions 2-3, 4-5 and 6-7 of the lists
	// [m-0 m-1 z-0 z-1], [a-0 a-1 m-0 m-1 z-0 z-1] and [a-0 ... z-0 z-1]:
	// z-0 and z-1 each time.
	for i, o := range steps {
		if err := e.createNodes(ctx, i, o); err != nil {
			t.Fatal(err)
		}
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's would divide by zero.
	noValues := op("c")
	noValues.LabelNodePrepareStrategy = &labelNodeStrategy{LabelKey: "zone"}
	if err := e.createNodes(ctx, len(steps), noValues); err == nil || !strings.Contains(err.Error(), "no labelValues") {
		t.Errorf("a label strategy without values: %v", err)
	}
	unique := map[string]bool{}
	for _, n := range list.Items {
		wantZone := map[string]string{"z-0": "x", "z-1": "y"}[n.Name]
		if n.Labels["zone"] != wantZone {
			t.Errorf("%s: zone %q, want %q", n.Name, n.Labels["zone"], wantZone)
		}
		u := n.Labels["unique"]
		if (u != "") != strings.HasPrefix(n.Name, "z-") || unique[u] {
			t.Errorf("%s: unique label %q (seen before: %t)", n.Name, u, unique[u])
		}
		if u != "" {
			unique[u] = true
		}
		// The allocatable upstream patches onto the node, not its status,
		// which the apiserver drops.
		if _, ok := n.Status.Allocatable["example.com/foo"]; ok {
			t.Errorf("%s: allocatable %v", n.Name, n.Status.Allocatable)
		}
		c, err := client.StorageV1().CSINodes().Get(ctx, n.Name, metav1.GetOptions{})
		switch {
		case strings.HasPrefix(n.Name, "z-") && (err != nil || c.Annotations[v1.MigratedPluginsAnnotationKey] != "kubernetes.io/aws-ebs"):
			t.Errorf("%s: CSINode %+v, %v", n.Name, c, err)
		case !strings.HasPrefix(n.Name, "z-") && !apierrors.IsNotFound(err):
			t.Errorf("%s has a CSINode: %v", n.Name, err)
		}
	}
}
