package minisched_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"minisched/event"
	"minisched/explain"
	"minisched/minisched"
)

// TestExplain: for a pending pod, every node's failing plugins with the
// reason read from the plugin's own verdict and the change that would make
// it pass; the closest nodes first; one sentence on top.
func TestExplain(t *testing.T) {
	tainted := func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule}}
	}
	withPort := func(port int32) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: port, HostPort: port}}
		}
	}
	tests := []struct {
		name   string
		nodes  []*v1.Node
		before []*v1.Pod   // bound first
		claims []claimOnPV // made first
		setup  func(t *testing.T)
		pod    *v1.Pod
		// want, per node, the plugin and a part of its detail; and the
		// change's kind, key or resource.
		want     map[string][3]string
		sentence string
	}{
		{
			name:     "resources: the shortfall per resource, and the request that would fit",
			nodes:    []*v1.Node{node("small", "1"), node("smaller", "500m")},
			pod:      pod("big", "1500m"),
			want:     map[string][3]string{"small": {"NodeResourcesFit", "cpu: requests 1500m, 1 of 1 free", "reduce-request"}, "smaller": {"NodeResourcesFit", "cpu: requests 1500m, 500m of 500m free", "reduce-request"}},
			sentence: "Closest: small needs the pod to request 500m less cpu",
		},
		{
			name:     "taint: the untolerated taint, and the toleration that would pass",
			nodes:    []*v1.Node{node("batch-1", "4", tainted), node("batch-2", "4", tainted)},
			pod:      pod("plain", "100m"),
			want:     map[string][3]string{"batch-1": {"TaintToleration", "untolerated taint dedicated=batch:NoSchedule", "add-toleration"}},
			sentence: "Closest: 2 nodes (batch-1, batch-2) need a toleration for dedicated=batch:NoSchedule",
		},
		{
			name:     "nodeSelector: the label that fails, and the label to add",
			nodes:    []*v1.Node{node("a", "4", zone("a"))},
			pod:      pod("wants-gpu", "100m", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"gpu": "true"} }),
			want:     map[string][3]string{"a": {"NodeAffinity", "nodeSelector gpu=true; the node has no gpu label", "add-label"}},
			sentence: "a needs the label gpu=true",
		},
		{
			name:     "required node affinity: the requirement that fails, and the label that would pass",
			nodes:    []*v1.Node{node("c1", "4", zone("c"))},
			pod:      pod("east-only", "100m", requireZone("a")),
			want:     map[string][3]string{"c1": {"NodeAffinity", "required node affinity: topology.kubernetes.io/zone In a; the node has topology.kubernetes.io/zone=c", "add-label"}},
			sentence: "c1 needs the label topology.kubernetes.io/zone=a",
		},
		{
			name:  "cordoned: uncordon",
			nodes: []*v1.Node{node("cordoned", "4", unschedulableNode)},
			pod:   pod("patient", "100m"),
			want:  map[string][3]string{"cordoned": {"NodeUnschedulable", "cordoned", "uncordon"}},
		},
		{
			name:  "spread: the skew against maxSkew with the counts per domain, and the matching pods whose going would do",
			nodes: []*v1.Node{node("a1", "4", zone("a")), node("b1", "4", zone("b"), tainted)},
			before: []*v1.Pod{
				diffPod("web-1", "100m", onNode("a1"), labelled("app", "web")),
				diffPod("web-2", "100m", onNode("a1"), labelled("app", "web")),
			},
			pod: pod("web-3", "100m", labelled("app", "web"), func(p *v1.Pod) {
				p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
					WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
			}),
			want: map[string][3]string{
				"a1": {"PodTopologySpread", "topology.kubernetes.io/zone=a would hold 3 matching pods with this one, the fewest in a domain is 0, skew 3 > maxSkew 1 (a: 2, b: 0)", "evict"},
				"b1": {"TaintToleration", "untolerated taint", "add-toleration"},
			},
			sentence: "a1 needs pods default/web-1, default/web-2 gone",
		},
		{
			name:     "inter-pod anti-affinity: the pods it keeps away from, by name",
			nodes:    []*v1.Node{node("n1", "4")},
			before:   []*v1.Pod{diffPod("db", "100m", onNode("n1"), labelled("app", "db"))},
			pod:      pod("apart", "100m", antiAffinity("app", "db", v1.LabelHostname)),
			want:     map[string][3]string{"n1": {"InterPodAffinity", "its anti-affinity (app=db) turns away pod default/db in kubernetes.io/hostname=n1", "evict"}},
			sentence: "n1 needs pod default/db gone",
		},
		{
			name:     "inter-pod anti-affinity of a pod already there: that pod, by name",
			nodes:    []*v1.Node{node("n1", "4", zone("a"))},
			before:   []*v1.Pod{diffPod("loner", "100m", onNode("n1"), antiAffinity("app", "web", v1.LabelTopologyZone))},
			pod:      pod("joiner", "100m", labelled("app", "web")),
			want:     map[string][3]string{"n1": {"InterPodAffinity", "the anti-affinity of default/loner (app=web in topology.kubernetes.io/zone=a) turns it away", "evict"}},
			sentence: "n1 needs pod default/loner gone",
		},
		{
			name:  "inter-pod affinity: the term no pod in the domain matches; no change to suggest",
			nodes: []*v1.Node{node("n1", "4", zone("a"))},
			pod: pod("follower", "100m", func(p *v1.Pod) {
				p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
					TopologyKey: v1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}}}}}
			}),
			want:     map[string][3]string{"n1": {"InterPodAffinity", "its affinity needs a pod matching app=cache in topology.kubernetes.io/zone=a, and there is none", ""}},
			sentence: "n1 needs",
		},
		{
			name:   "volume zone: the claim, its PV and the zone",
			nodes:  []*v1.Node{node("n1", "4", zone("a"))},
			claims: []claimOnPV{{claim: "data-b", pv: "pv-b", labels: map[string]string{v1.LabelTopologyZone: "b"}}},
			pod:    pod("zoned", "100m", withClaim("data-b")),
			want: map[string][3]string{"n1": {"VolumeZone",
				"claim default/data-b is bound to PV pv-b in topology.kubernetes.io/zone=b; the node has topology.kubernetes.io/zone=a", ""}},
			sentence: "n1 needs claim default/data-b is bound to PV pv-b",
		},
		{
			name:   "volume node affinity: the claim and its PV",
			nodes:  []*v1.Node{node("n1", "4")},
			claims: []claimOnPV{{claim: "data-n2", pv: "pv-n2", onNode: "n2"}},
			pod:    pod("local", "100m", withClaim("data-n2")),
			want: map[string][3]string{"n1": {"VolumeBinding",
				"claim default/data-n2 is bound to PV pv-n2, whose node affinity the node does not match", ""}},
			sentence: "n1 needs claim default/data-n2",
		},
		{
			name:   "devices: each request, and what each device of the node is",
			nodes:  []*v1.Node{node("n1", "4")},
			setup:  devices("n1"),
			before: []*v1.Pod{pod("first", "100m", withDeviceClaim("first"))},
			pod:    pod("second", "100m", withDeviceClaim("second")),
			want: map[string][3]string{"n1": {"DynamicResources",
				"claim default/second, request gpu wants 1 device(s) of class explain-gpu; the node's devices: 0 free, 1 allocated already (gpu-0), 1 of other classes", ""}},
			sentence: "n1 needs claim default/second, request gpu wants 1 device(s)",
		},
		{
			name:   "host port: the pod that holds it",
			nodes:  []*v1.Node{node("n1", "4")},
			before: []*v1.Pod{pod("holder", "100m", withPort(8080), onNode("n1"))},
			pod:    pod("wants-8080", "100m", withPort(8080)),
			want:   map[string][3]string{"n1": {"NodePorts", "host port 8080/TCP is taken by pod default/holder", "free-port"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, "")
			h.addNodes(tt.nodes...)
			for _, c := range tt.claims {
				c.make(t)
			}
			if tt.setup != nil {
				tt.setup(t)
			}
			for _, p := range tt.before {
				createPod(t, client, p)
				waitBound(t, client, p.Name)
			}
			createPod(t, client, tt.pod)
			// A cycle that ran before the scheduler's informers had the
			// claim, its PV or the devices fails on "not found"; their
			// arrival tries the pod again.
			h.await(tt.pod.Name, tt.pod.Name+" found unschedulable with every object in the cache", func(e event.Event) bool {
				return e.Kind == event.KindCycleEnd && e.CycleEnd.Result == event.ResultUnschedulable && !strings.Contains(e.CycleEnd.Message, "not found")
			})
			e, err := h.svc.Scheduler().Explain(context.Background(), "default", tt.pod.Name)
			if err != nil {
				t.Fatal(err)
			}
			if e.Schema != explain.Schema || e.Nodes != len(tt.nodes) || len(e.Fits) != 0 {
				t.Errorf("schema %q, %d nodes, fits %v; want %s, %d, none", e.Schema, e.Nodes, e.Fits, explain.Schema, len(tt.nodes))
			}
			got := map[string]explain.Failure{}
			for _, g := range e.Groups {
				for _, n := range g.Nodes {
					for _, f := range g.Failures {
						got[n] = f
					}
				}
			}
			provable := true
			for node, want := range tt.want {
				f, ok := got[node]
				kind := ""
				if f.Change != nil {
					kind = f.Change.Kind
				}
				if !ok || f.Plugin != want[0] || !strings.Contains(f.Detail, want[1]) || kind != want[2] {
					t.Errorf("%s: %+v (change %+v); want %s, a detail with %q, a change %q", node, f, f.Change, want[0], want[1], want[2])
				}
				provable = provable && want[2] != ""
			}
			if !strings.HasPrefix(e.Sentence, "Fits nowhere.") || !strings.Contains(e.Sentence, tt.sentence) {
				t.Errorf("sentence %q, want one with %q", e.Sentence, tt.sentence)
			}
			if len(e.Closest) == 0 {
				t.Fatal("no closest node")
			}
			if !provable {
				if e.Closest[0].Tried != nil || !strings.Contains(e.Sentence, "(unproven)") {
					t.Errorf("nothing to try, yet %+v, sentence %q", e.Closest[0].Tried, e.Sentence)
				}
				return
			}
			if !strings.Contains(e.Sentence, "(tried: it then fits)") {
				t.Errorf("sentence %q, want the closest tried", e.Sentence)
			}
			// The proof: the real plugins passed the closest node with its
			// changes applied on copies...
			closest := e.Closest[0]
			if closest.Tried == nil || !closest.Tried.Fits {
				t.Fatalf("the closest node %s: tried %+v, want it to fit", closest.Name, closest.Tried)
			}
			// ...and made for real, they let the pod bind there.
			name := tt.pod.Name
			for _, f := range closest.Failures {
				name = applyChange(t, f.Change, closest.Name, tt.pod)
			}
			if got := waitBound(t, client, name); got != closest.Name {
				t.Errorf("with the changes made, %s bound to %s, want %s", name, got, closest.Name)
			}
		})
	}
}

// applyChange makes a suggested change on the cluster, and returns the
// name of the pod to watch (a pod whose requests change is made again).
func applyChange(t *testing.T, c *explain.Change, node string, p *v1.Pod) string {
	t.Helper()
	ctx := context.Background()
	switch c.Kind {
	case "reduce-request":
		again := p.DeepCopy()
		again.Name += "-smaller"
		for res, q := range c.Requests {
			again.Spec.Containers[0].Resources.Requests[v1.ResourceName(res)] = resource.MustParse(q)
		}
		createPod(t, client, again)
		return again.Name
	case "add-toleration":
		// The scheduler writes the pod's status meanwhile: retry on conflict.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := client.CoreV1().Pods("default").Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.Tolerations = append(cur.Spec.Tolerations, v1.Toleration{Key: c.Key, Operator: v1.TolerationOpEqual, Value: c.Value, Effect: v1.TaintEffect(c.Effect)})
			_, err = client.CoreV1().Pods("default").Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	case "add-label", "uncordon":
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if c.Kind == "add-label" {
				n.Labels[c.Key] = c.Value
			} else {
				n.Spec.Unschedulable = false
			}
			_, err = client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	case "free-port", "evict":
		zero := int64(0)
		for _, name := range c.Pods {
			ns, name, _ := strings.Cut(name, "/")
			if err := client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		}
	default:
		t.Fatalf("no way to apply %+v", c)
	}
	return p.Name
}

// TestExplainRefusals: a pod that is bound, gone, or of no profile gets no
// explanation, and says why.
func TestExplainRefusals(t *testing.T) {
	h := start(t, "")
	h.addNodes(node("n1", "4"))
	createPod(t, client, pod("placed", "100m"))
	waitBound(t, client, "placed")
	if _, err := h.svc.Scheduler().Explain(context.Background(), "default", "placed"); !errors.Is(err, minisched.ErrNotPending) {
		t.Errorf("a bound pod: %v, want ErrNotPending", err)
	}
	if _, err := h.svc.Scheduler().Explain(context.Background(), "default", "nobody"); !apierrors.IsNotFound(err) {
		t.Errorf("a pod that is not there: %v, want NotFound", err)
	}
	createPod(t, client, pod("elsewhere", "100m", func(p *v1.Pod) { p.Spec.SchedulerName = "other" }))
	waitFor(t, 30*time.Second, "the informer to have the pod", func() bool {
		_, err := h.svc.Scheduler().Explain(context.Background(), "default", "elsewhere")
		return !apierrors.IsNotFound(err)
	})
	if _, err := h.svc.Scheduler().Explain(context.Background(), "default", "elsewhere"); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `schedulerName is "other"`) {
		t.Errorf("a pod of no profile: %v, want a bad request naming its schedulerName", err)
	}
}

// TestExplainPreemption: when the pod fits nowhere, the explanation says
// whether upstream's preemption would make room, as a dry run: the node and
// the victims it would choose, or why it would not. The proof is the real
// preemption that follows: it evicts exactly those victims.
func TestExplainPreemption(t *testing.T) {
	ensurePriorityClasses(t, client)
	on := func(node, class string) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.NodeName, p.Spec.PriorityClassName = node, class }
	}
	class := func(name string) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.PriorityClassName = name } }
	tests := []struct {
		name    string
		pod     *v1.Pod
		helps   bool
		victims []string // when it helps; on node n2
		reason  string   // when it does not
	}{
		{
			name:    "helps: the node whose victims are of the lowest priority",
			pod:     pod("urgent", "1", class("story-high")),
			helps:   true,
			victims: []string{"default/low-on-n2"},
		},
		{
			name:   "preemptionPolicy Never: not eligible",
			pod:    pod("polite", "1", class("batch-high")),
			reason: "preemptionPolicy=Never",
		},
		{
			name:   "no pod of lower priority in the way",
			pod:    pod("humble", "1", class("story-low")),
			reason: "no pod of lower priority runs on the 2 nodes where evicting could help",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, "")
			h.addNodes(node("n1", "2"), node("n2", "2"))
			for _, p := range []*v1.Pod{diffPod("mid-on-n1", "1500m", on("n1", "story-mid")), diffPod("low-on-n2", "1500m", on("n2", "story-low"))} {
				createPod(t, client, p)
				waitBound(t, client, p.Name)
			}
			if tt.helps {
				// Held before its cycle, or the real preemption would come
				// first.
				h.svc.Pause()
			}
			createPod(t, client, tt.pod)
			if !tt.helps {
				h.waitUnschedulable(tt.pod.Name)
			}
			var e *explain.Explanation
			waitFor(t, 30*time.Second, "the informer to have the pod", func() bool {
				var err error
				e, err = h.svc.Scheduler().Explain(context.Background(), "default", tt.pod.Name)
				return !apierrors.IsNotFound(err)
			})
			p := e.Preemption
			if p == nil {
				t.Fatalf("no preemption in %+v", e)
			}
			if !tt.helps {
				if p.Helps || !strings.Contains(p.Reason, tt.reason) {
					t.Errorf("preemption %+v, want no help because %q", p, tt.reason)
				}
				return
			}
			if !p.Helps || p.Node != "n2" || !slices.Equal(p.Victims, tt.victims) || p.Candidates != 2 {
				t.Fatalf("preemption %+v, want n2 evicting %v of 2 candidates", p, tt.victims)
			}
			if want := "Preemption would make room on n2, evicting default/low-on-n2."; !strings.Contains(e.Sentence, want) {
				t.Errorf("sentence %q, want %q", e.Sentence, want)
			}
			// Where the room went: the pods using the CPU the node lacks.
			for _, n := range e.Closest {
				if want := map[string]string{"n1": "default/mid-on-n1 1500m", "n2": "default/low-on-n2 1500m"}[n.Name]; !slices.Equal(n.Failures[0].UsedBy, []string{want}) {
					t.Errorf("%s: used by %v, want %s", n.Name, n.Failures[0].UsedBy, want)
				}
			}
			// The real preemption evicts what the dry run named, and only.
			h.svc.Resume()
			if got := waitBound(t, client, tt.pod.Name); got != "n2" {
				t.Errorf("%s bound to %s, want n2", tt.pod.Name, got)
			}
			if nodeOf(t, client, "low-on-n2") != "" {
				t.Error("low-on-n2 is still there; the dry run named it the victim")
			}
			if nodeOf(t, client, "mid-on-n1") != "n1" {
				t.Error("mid-on-n1 is gone; the dry run did not name it")
			}
		})
	}
}

func onNode(name string) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.NodeName = name } }

// antiAffinity keeps the pod away from pods labelled key=value in the
// topology domain.
func antiAffinity(key, value, topologyKey string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}}}}}
	}
}

// claimOnPV is a claim bound to a PV, both made as the PV controller leaves
// them: the PV's claimRef, the claim's volumeName and bind-completed.
type claimOnPV struct {
	claim, pv string
	labels    map[string]string // the PV's
	onNode    string            // the PV's node affinity, by hostname
}

func (c claimOnPV) make(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: c.pv, Labels: c.labels}, Spec: v1.PersistentVolumeSpec{
		Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data/" + c.pv}},
		ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: c.claim},
		PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
	}}
	if c.onNode != "" {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{c.onNode}}}}}}}
	}
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: c.claim,
		Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}}, Spec: v1.PersistentVolumeClaimSpec{
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, VolumeName: c.pv, StorageClassName: ptrTo(""),
		Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().PersistentVolumeClaims("default").Delete(ctx, c.claim, metav1.DeleteOptions{})
		_ = client.CoreV1().PersistentVolumes().Delete(ctx, c.pv, metav1.DeleteOptions{})
	})
}

func withClaim(name string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: name,
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
	}
}

// devices publishes on node one device of class explain-gpu (gpu-0) and
// one of another driver, and makes the claims first and second, one
// device of the class each.
func devices(node string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		ctx := context.Background()
		const driver = "explain.example.com"
		class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "explain-gpu"}, Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`}}}}}
		slice := func(driver, device string) *resourcev1.ResourceSlice {
			return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-" + driver}, Spec: resourcev1.ResourceSliceSpec{
				Driver: driver, NodeName: ptrTo(node), Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
				Devices: []resourcev1.Device{{Name: device}}}}
		}
		must := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}))
		must(client.ResourceV1().ResourceSlices().Create(ctx, slice(driver, "gpu-0"), metav1.CreateOptions{}))
		must(client.ResourceV1().ResourceSlices().Create(ctx, slice("other.example.com", "nic-0"), metav1.CreateOptions{}))
		for _, name := range []string{"first", "second"} {
			must(client.ResourceV1().ResourceClaims("default").Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
				Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
					Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name}}}}}}, metav1.CreateOptions{}))
		}
		t.Cleanup(func() {
			// The pods go first (emptyCluster), then the claims without
			// the finalizer no resourceclaim controller takes away here.
			emptyCluster(t, client)
			for _, name := range []string{"first", "second"} {
				_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
					cl, err := client.ResourceV1().ResourceClaims("default").Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						return nil
					}
					cl.Finalizers = nil
					_, err = client.ResourceV1().ResourceClaims("default").Update(ctx, cl, metav1.UpdateOptions{})
					return err
				})
				_ = client.ResourceV1().ResourceClaims("default").Delete(ctx, name, metav1.DeleteOptions{})
			}
			_ = client.ResourceV1().ResourceSlices().Delete(ctx, node+"-"+driver, metav1.DeleteOptions{})
			_ = client.ResourceV1().ResourceSlices().Delete(ctx, node+"-other.example.com", metav1.DeleteOptions{})
			_ = client.ResourceV1().DeviceClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
		})
	}
}

func withDeviceClaim(claim string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptrTo(claim)}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	}
}
