package minisched_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"minisched/k8sapiserver"
	"minisched/minisched/event"
	"minisched/minisched/schedconfig"
)

// upstream runs the real kube-scheduler (pkg/scheduler) in this process
// against its own control plane.
type upstream struct {
	client kubernetes.Interface
	sched  *scheduler.Scheduler
}

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cpB, err := k8sapiserver.Start(ctx, k8sapiserver.Config{})
	if err != nil {
		t.Fatalf("starting the second control plane: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cpB.Close()
	})
	c := kubernetes.NewForConfigOrDie(cpB.RESTConfig())
	cfg, err := schedconfig.Default("")
	if err != nil {
		t.Fatal(err)
	}
	factory := scheduler.NewInformerFactory(c, 0, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.EventsV1()})
	sched, err := scheduler.New(ctx, c, factory, nil, profile.NewRecorderFactory(broadcaster), scheduler.WithProfiles(cfg.Profiles...))
	if err != nil {
		t.Fatalf("building kube-scheduler: %v", err)
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go sched.Run(ctx)
	return &upstream{client: c, sched: sched}
}

// rebind moves the pod to node on the upstream cluster, so that both clusters
// stay identical after the schedulers broke a tie differently.
func (u *upstream) rebind(t *testing.T, p *v1.Pod, node string) {
	t.Helper()
	ctx := context.Background()
	zero := int64(0)
	if err := u.client.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, p.Name+" gone upstream", func() bool {
		_, err := u.client.CoreV1().Pods("default").Get(ctx, p.Name, metav1.GetOptions{})
		return err != nil
	})
	again := p.DeepCopy()
	again.Spec.NodeName = node
	createPod(t, u.client, again)
	waitFor(t, 10*time.Second, p.Name+" in kube-scheduler's cache on "+node, func() bool {
		info := u.sched.Cache.Dump().Nodes[node]
		if info == nil {
			return false
		}
		for _, pi := range info.GetPods() {
			if pi.GetPod().Name == p.Name && pi.GetPod().UID != p.UID {
				return true
			}
		}
		return false
	})
}

// best returns the nodes minisched scored highest for the pod's last cycle;
// when only one node was feasible there is no score and it is the one.
func best(h *harness, name, chosen string) []string {
	scores := h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindScore })
	if len(scores) == 0 {
		return []string{chosen}
	}
	rows := scores[len(scores)-1].Score.Nodes
	var top int64 = -1
	var out []string
	for _, r := range rows {
		switch {
		case r.Total > top:
			top, out = r.Total, []string{r.Node}
		case r.Total == top:
			out = append(out, r.Node)
		}
	}
	return out
}

func withImage(name string, bytes int64) func(*v1.Node) {
	return func(n *v1.Node) {
		n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{name}, SizeBytes: bytes})
	}
}

func memory(q string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse(q) }
}

func labels(kv ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func image(name string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Image = name }
}

func preferNodeLabel(key, value string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
			Weight: 50, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}}},
		}}}}
	}
}

func spreadOverZones(app string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
}

func avoidSameHost(app string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: v1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		}}}}
	}
}

func nearApp(app string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}}}}
	}
}

// TestAgreesWithUpstream feeds the same cluster and the same pods to
// minisched and to kube-scheduler, one pod at a time, and checks that
// kube-scheduler's choice is always among the nodes minisched scored best.
func TestAgreesWithUpstream(t *testing.T) {
	h := start(t, "")
	up := startUpstream(t)
	tainted := func(key, value string, effect v1.TaintEffect) func(*v1.Node) {
		return func(n *v1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
		}
	}
	sized := func(mem string) func(*v1.Node) {
		return func(n *v1.Node) {
			n.Status.Allocatable[v1.ResourceMemory] = resource.MustParse(mem)
			n.Status.Capacity[v1.ResourceMemory] = resource.MustParse(mem)
		}
	}
	ssd := func(n *v1.Node) { n.Labels["disk"] = "ssd" }
	nodes := []*v1.Node{
		node("n1", "4", zone("a"), sized("8Gi"), withImage("example.com/web:1.0", 600<<20)),
		node("n2", "8", zone("a"), sized("16Gi")),
		node("n3", "2", zone("b"), sized("4Gi"), tainted("spot", "true", v1.TaintEffectPreferNoSchedule)),
		node("n4", "16", zone("b"), sized("32Gi"), ssd),
		node("n5", "4", zone("c"), sized("8Gi"), unschedulableNode),
		node("n6", "6", zone("c"), sized("12Gi"), tainted("dedicated", "gpu", v1.TaintEffectNoSchedule)),
		node("n7", "3", zone("c"), sized("6Gi")),
	}
	createNodes(t, client, nodes...)
	createNodes(t, up.client, nodes...)
	waitFor(t, 10*time.Second, "the nodes in minisched's cache", func() bool { return h.svc.Scheduler().NodeCount() == len(nodes) })
	waitFor(t, 10*time.Second, "the nodes in kube-scheduler's cache", func() bool { return len(up.sched.Cache.Dump().Nodes) == len(nodes) })

	var workload []*v1.Pod
	workload = append(workload,
		pod("plain", "500m", memory("512Mi")),
		pod("web-image", "1", image("example.com/web:1.0")),
		pod("likes-ssd", "1", preferNodeLabel("disk", "ssd")),
		pod("gpu-job", "2", tolerate("dedicated", "gpu")),
		pod("mem-heavy", "1", memory("20Gi")),
		pod("big", "10"),
	)
	for i := 0; i < 3; i++ {
		workload = append(workload, pod(fmt.Sprintf("web-%d", i), "500m", labels("app", "web"), avoidSameHost("web")))
	}
	for i := 0; i < 4; i++ {
		workload = append(workload, pod(fmt.Sprintf("spread-%d", i), "250m", labels("app", "spread"), spreadOverZones("spread")))
	}
	workload = append(workload,
		pod("near-web", "250m", nearApp("web")),
		pod("small-1", "100m", memory("128Mi")),
		pod("small-2", "1500m", memory("3Gi")),
	)

	agreedExactly := 0
	for _, p := range workload {
		createPod(t, client, p.DeepCopy())
		createPod(t, up.client, p.DeepCopy())
		mine := waitBound(t, client, p.Name)
		theirs := waitBound(t, up.client, p.Name)
		top := best(h, p.Name, mine)
		if !hasString(top, mine) {
			t.Fatalf("%s: minisched bound it to %s, not one of its best nodes %v", p.Name, mine, top)
		}
		if !contains(top, theirs) {
			t.Errorf("%s: kube-scheduler chose %s, minisched's best nodes were %v (it chose %s)", p.Name, theirs, top, mine)
		}
		if theirs == mine {
			agreedExactly++
			continue
		}
		current, err := up.client.CoreV1().Pods("default").Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		up.rebind(t, current, mine)
	}
	t.Logf("%d pods: kube-scheduler chose minisched's node %d times, another of the equally best nodes the other times", len(workload), agreedExactly)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
