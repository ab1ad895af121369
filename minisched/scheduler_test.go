package minisched_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

func unschedulableNode(n *v1.Node) { n.Spec.Unschedulable = true }

// The seed's step-7 story: nine unschedulable nodes; the pod waits in the
// unschedulable set; a tenth node arrives; NodeUnschedulable's hint queues
// the pod, which moves to active and binds to the new node.
func TestNewNodeMovesWaitingPod(t *testing.T) {
	h := start(t, "")
	var nodes []*v1.Node
	for i := 1; i <= 9; i++ {
		nodes = append(nodes, node(fmt.Sprintf("node-%d", i), "4", unschedulableNode))
	}
	h.addNodes(nodes...)
	createPod(t, client, pod("pod-1", "100m"))
	end := h.waitUnschedulable("pod-1")
	if !slices.Contains(end.Plugins, "NodeUnschedulable") || !strings.Contains(end.Message, "9 node(s) were unschedulable") {
		t.Errorf("cycle end %+v, want NodeUnschedulable blamed on 9 nodes", end)
	}
	h.waitParked("pod-1")

	createNodes(t, client, node("node-10", "4"))
	if got := waitBound(t, client, "pod-1"); got != "node-10" {
		t.Errorf("pod-1 bound to %s, want node-10", got)
	}
	moves := h.log.find("pod-1", movedOutOfUnschedulable)
	if len(moves) == 0 || moves[0].Queue.Event != "NodeAdd" || !slices.Contains(moves[0].Queue.Plugins, "NodeUnschedulable") {
		for _, m := range moves {
			t.Logf("move: %+v", *m.Queue)
		}
		t.Fatalf("want the first move out of the unschedulable set caused by NodeAdd through NodeUnschedulable's hint")
	}
}

func movedOutOfUnschedulable(e event.Event) bool {
	return e.Kind == event.KindQueue && e.Queue.Action == event.ActionMove && e.Queue.From == event.Unschedulable
}

// requeuedAfterError: an error, not a rejection, sends a pod to the error
// backoff.
func requeuedAfterError(e event.Event) bool {
	return e.Kind == event.KindQueue && e.Queue.To == event.ErrorBackoffQ && e.Queue.Event == "ScheduleAttemptFailure"
}

func TestRejections(t *testing.T) {
	tests := []struct {
		name        string
		nodes       []*v1.Node
		pod         *v1.Pod
		wantPlugin  string
		wantMessage string
	}{
		{
			name:        "too big for every node",
			nodes:       []*v1.Node{node("n1", "2"), node("n2", "2"), node("n3", "2")},
			pod:         pod("huge", "100"),
			wantPlugin:  "NodeResourcesFit",
			wantMessage: "3 Insufficient cpu",
		},
		{
			name: "taint not tolerated",
			nodes: []*v1.Node{node("gpu", "4", func(n *v1.Node) {
				n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
			})},
			pod:         pod("plain", "100m"),
			wantPlugin:  "TaintToleration",
			wantMessage: "1 node(s) had untolerated taint",
		},
		{
			name:        "required node affinity matches no node",
			nodes:       []*v1.Node{node("a", "4", zone("a")), node("b", "4", zone("b"))},
			pod:         pod("wants-c", "100m", requireZone("c")),
			wantPlugin:  "NodeAffinity",
			wantMessage: "didn't match Pod's node affinity/selector",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, "")
			h.addNodes(tt.nodes...)
			createPod(t, client, tt.pod)
			end := h.waitUnschedulable(tt.pod.Name)
			if !slices.Contains(end.Plugins, tt.wantPlugin) || !strings.Contains(end.Message, tt.wantMessage) {
				t.Errorf("cycle end: plugins %v message %q; want %s and %q", end.Plugins, end.Message, tt.wantPlugin, tt.wantMessage)
			}
			h.waitParked(tt.pod.Name)
		})
	}
}

func zone(z string) func(*v1.Node) {
	return func(n *v1.Node) { n.Labels[v1.LabelTopologyZone] = z }
}

func requireZone(z string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{z}}},
			}}},
		}}
	}
}

func tolerate(key, value string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: v1.TolerationOpEqual, Value: value, Effect: v1.TaintEffectNoSchedule})
	}
}

func TestPlacements(t *testing.T) {
	tainted := func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	}
	tests := []struct {
		name  string
		nodes []*v1.Node
		pod   *v1.Pod
		want  string
	}{
		{"toleration lets the pod onto the tainted node", []*v1.Node{node("gpu", "4", tainted), node("full", "1", unschedulableNode)},
			pod("tolerant", "100m", tolerate("dedicated", "gpu")), "gpu"},
		{"untolerating pod avoids the tainted node", []*v1.Node{node("gpu", "4", tainted), node("plain", "4")},
			pod("plain-pod", "100m"), "plain"},
		{"required affinity picks the zone", []*v1.Node{node("a", "4", zone("a")), node("b", "4", zone("b"))},
			pod("wants-b", "100m", requireZone("b")), "b"},
		{"resources rule out the small node", []*v1.Node{node("small", "1"), node("large", "8")},
			pod("needs-3", "3"), "large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, "")
			h.addNodes(tt.nodes...)
			createPod(t, client, tt.pod)
			if got := waitBound(t, client, tt.pod.Name); got != tt.want {
				t.Errorf("bound to %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPermitDelaysBinding(t *testing.T) {
	h := start(t, multiPoint("PermitDelay"))
	h.addNodes(node("node-2", "4"))
	created := time.Now()
	createPod(t, client, pod("patient", "100m"))
	waitBound(t, client, "patient")
	if took := time.Since(created); took < 2*time.Second {
		t.Errorf("bound after %v, want at least the node's 2 seconds", took)
	}
	waits := h.log.find("patient", func(e event.Event) bool { return e.Kind == event.KindPermitWait })
	if len(waits) != 1 || waits[0].PermitWait.Plugins["PermitDelay"] <= int64(2*time.Second) {
		t.Fatalf("permit waits %+v, want PermitDelay waiting with a timeout past 2s", waits)
	}
	// The pod is bound before its binding cycle reports its end.
	end := h.await("patient", "the binding's end", ofKind(event.KindBindingEnd))
	if b := end.BindingEnd; !b.Bound || time.Duration(b.PermitNanos) < 2*time.Second {
		t.Errorf("binding end %+v, want bound after 2s at Permit", b)
	}
}

// panicky is a Filter plugin that panics on pods labelled panic=yes.
type panicky struct{}

func (panicky) Name() string { return "Panicky" }
func (panicky) Filter(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ fwk.NodeInfo) *fwk.Status {
	if p.Labels["panic"] == "yes" {
		panic("this plugin has a bug")
	}
	return nil
}

// hangs is a Filter plugin that never returns on pods labelled hang=yes.
type hangs struct{}

func (hangs) Name() string { return "Hangs" }
func (hangs) Filter(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ fwk.NodeInfo) *fwk.Status {
	if p.Labels["hang"] == "yes" {
		select {}
	}
	return nil
}

func TestBrokenPluginFailsOnlyThatCycle(t *testing.T) {
	h := start(t, multiPoint("Panicky", "Hangs"), withPlugin(panicky{}), withPlugin(hangs{}), withCycleTimeout(2*time.Second))
	h.addNodes(node("node-1", "4"))

	for _, tt := range []struct{ label, want string }{{"panic", "panicked"}, {"hang", "did not return within"}} {
		name := tt.label + "-pod"
		createPod(t, client, pod(name, "100m", func(p *v1.Pod) { p.Labels = map[string]string{tt.label: "yes"} }))
		end := h.await(name, name+"'s failed cycle", ofKind(event.KindCycleEnd)).CycleEnd
		if end.Result != event.ResultError || !strings.Contains(end.Message, tt.want) {
			t.Errorf("%s: cycle end %+v, want an error saying %q", name, end, tt.want)
		}
		// An error, not a rejection: the pod waits in the error backoff.
		h.await(name, name+" requeued to the error backoff", requeuedAfterError)
	}
	// The scheduler keeps working for everyone else.
	createPod(t, client, pod("fine", "100m"))
	if got := waitBound(t, client, "fine"); got != "node-1" {
		t.Errorf("fine bound to %q", got)
	}
}

// With the same seed, equally scored nodes are picked the same way.
func TestSeedMakesTieBreakingRepeatable(t *testing.T) {
	run := func() []string {
		h := start(t, "")
		var nodes []*v1.Node
		for i := 0; i < 6; i++ {
			nodes = append(nodes, node(fmt.Sprintf("twin-%d", i), "4"))
		}
		h.addNodes(nodes...)
		var placed []string
		for i := 0; i < 8; i++ {
			name := fmt.Sprintf("p-%d", i)
			createPod(t, client, pod(name, "100m"))
			placed = append(placed, waitBound(t, client, name))
		}
		h.svc.Stop()
		return placed
	}
	first, second := run(), run()
	if strings.Join(first, ",") != strings.Join(second, ",") {
		t.Errorf("same seed, different placements:\n%v\n%v", first, second)
	}
}

// flakyBinder refuses each pod's first binding the way the apiserver does
// on a conflict, then lets DefaultBinder do the work.
type flakyBinder struct{ refused map[string]bool }

func (f *flakyBinder) Name() string { return "FlakyBinder" }
func (f *flakyBinder) Bind(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ string) *fwk.Status {
	if !f.refused[p.Name] {
		f.refused[p.Name] = true
		return fwk.AsStatus(apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, p.Name, errors.New("the object has been modified")))
	}
	return fwk.NewStatus(fwk.Skip)
}

func TestRefusedBindingIsRequeuedNotLost(t *testing.T) {
	cfg := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      disabled: [{name: DefaultBinder}]
    bind:
      enabled: [{name: FlakyBinder}, {name: DefaultBinder}]
`
	fb := &flakyBinder{refused: map[string]bool{}}
	h := start(t, cfg, withPlugin(fb))
	h.addNodes(node("node-1", "4"))
	createPod(t, client, pod("contested", "100m"))
	if got := waitBound(t, client, "contested"); got != "node-1" {
		t.Fatalf("bound to %q", got)
	}
	// The pod is bound before its binding cycle reports its end: wait for
	// that end. The refused binding's end came before the pod was requeued.
	h.await("contested", "the bound binding's end", func(e event.Event) bool {
		return e.Kind == event.KindBindingEnd && e.BindingEnd.Bound
	})
	ends := h.log.find("contested", ofKind(event.KindBindingEnd))
	if len(ends) != 2 || ends[0].BindingEnd.Bound || ends[0].BindingEnd.Plugin != "FlakyBinder" || !ends[1].BindingEnd.Bound {
		t.Fatalf("binding ends %+v, want a refused binding then a bound one", ends)
	}
	// A Bind failure is an error, as upstream: the error backoff.
	requeued := h.log.find("contested", requeuedAfterError)
	if len(requeued) != 1 || !strings.Contains(requeued[0].Queue.Message, "modified") {
		t.Errorf("requeue after the refusal: %+v", requeued)
	}
}

// A pod whose volume claim does not exist yet waits; the claim's creation
// (a PersistentVolumeClaim event, through VolumeBinding's hint) moves it.
func TestVolumeClaimEventMovesPod(t *testing.T) {
	h := start(t, "")
	h.addNodes(node("node-1", "4"))
	ctx := context.Background()
	t.Cleanup(func() {
		_ = client.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data", metav1.DeleteOptions{})
		_ = client.CoreV1().PersistentVolumes().Delete(ctx, "pv-data", metav1.DeleteOptions{})
	})
	createPod(t, client, pod("needs-data", "100m", func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	}))
	end := h.waitUnschedulable("needs-data")
	if !strings.Contains(end.Message, `persistentvolumeclaim "data" not found`) {
		t.Fatalf("cycle end %+v, want the missing claim as the reason", end)
	}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-data"}, Spec: v1.PersistentVolumeSpec{
		Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/data"}},
		ClaimRef:               &v1.ObjectReference{Namespace: "default", Name: "data"},
	}}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	storageClass := ""
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data"}, Spec: v1.PersistentVolumeClaimSpec{
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, VolumeName: "pv-data", StorageClassName: &storageClass,
		Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if _, err := client.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	moved := h.await("needs-data", "a move out of the unschedulable set", movedOutOfUnschedulable)
	if m := moved.Queue; !strings.HasPrefix(m.Event, "PersistentVolume") {
		t.Errorf("first move %+v, want one caused by a PersistentVolume(Claim) event", m)
	}
}
