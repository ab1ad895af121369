package minisched_test

import (
	"fmt"
	"math/rand"

	"minisched/examples/extender"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// generator makes a seed's cluster and pods.
type generator struct {
	r *rand.Rand
	// regular are the generated nodes pods may use: neither tainted
	// NoSchedule nor unschedulable.
	regular []string
	all     []string
	// profiles, when there are several, are the schedulers the random
	// pods choose from.
	profiles []string
	// extender labels nodes and pods for the example extender.
	extender bool
}

func (g *generator) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g *generator) chance(percent int) bool { return g.r.Intn(100) < percent }

// cluster makes 8 to 12 nodes of varied sizes over three zones, with
// labels, taints, images and maybe one unschedulable node, then the three
// story nodes, tainted so that only the stories' pods go there.
func (g *generator) cluster() []*v1.Node {
	var nodes []*v1.Node
	count := 8 + g.r.Intn(5)
	unschedulable := -1
	if g.chance(60) {
		unschedulable = g.r.Intn(count)
	}
	for i := range count {
		name := fmt.Sprintf("n%02d", i+1)
		z := []string{"a", "b", "c"}[i%3]
		if i >= 3 {
			z = g.pick("a", "b", "c")
		}
		n := node(name, g.pick("2", "4", "4", "8", "8", "16"), zone(z), nodeMemory(g.pick("4Gi", "8Gi", "16Gi", "32Gi")))
		n.Labels[diskLabel] = g.pick("ssd", "hdd")
		if g.chance(50) {
			n.Labels[tierLabel] = g.pick("front", "back")
		}
		usable := true
		switch {
		case g.chance(15):
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule})
			usable = false
		case g.chance(15):
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule})
		}
		if i == unschedulable {
			n.Spec.Unschedulable = true
			usable = false
		}
		if g.extender {
			// A zone of its own: the extender then scores one node at most,
			// and no tie between two is broken at random (upstream's
			// Randomizer), so both schedulers must agree exactly.
			n.Labels[extender.ZoneLabel] = name
			if g.chance(15) {
				n.Labels[extender.ClosedLabel] = "true"
				usable = false
			}
		}
		for _, img := range diffImages {
			if g.chance(30) {
				n.Status.Images = append(n.Status.Images, img)
			}
		}
		nodes = append(nodes, n)
		g.all = append(g.all, name)
		if usable {
			g.regular = append(g.regular, name)
		}
	}
	return append(nodes,
		storyNode("story-x", "4", "8Gi", "r1"),
		storyNode("story-y", "8", "16Gi", "r1"),
		storyNode("story-z", "2", "4Gi", ""),
		storyNode("story-w", "3", "6Gi", ""),
	)
}

// podKind is one entry of the catalog of random pods.
type podKind struct {
	name   string
	weight int
	build  func(g *generator, p *v1.Pod)
}

var podKinds = []podKind{
	{"plain", 18, func(g *generator, p *v1.Pod) {
		if g.chance(40) {
			withLabels("app", g.pick("web", "db", "cache"))(p)
		}
	}},
	{"besteffort", 2, func(g *generator, p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = nil }},
	{"tolerates-gpu", 6, func(g *generator, p *v1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule})
	}},
	{"tolerates-spot", 4, func(g *generator, p *v1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "spot", Operator: v1.TolerationOpExists})
	}},
	{"needs-ssd", 5, func(g *generator, p *v1.Pod) {
		requireNode(p, v1.NodeSelectorRequirement{Key: diskLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}})
	}},
	{"needs-zones", 4, func(g *generator, p *v1.Pod) {
		requireNode(p, v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{g.pick("a", "b", "c")}})
	}},
	{"prefers", 6, func(g *generator, p *v1.Pod) {
		affinity(p).NodeAffinity = &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			{Weight: int32(1 + g.r.Intn(100)), Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{g.pick("a", "b", "c")}}}}},
			{Weight: int32(1 + g.r.Intn(100)), Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: diskLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}}}}},
		}}
	}},
	{"selector", 3, func(g *generator, p *v1.Pod) {
		p.Spec.NodeSelector = map[string]string{tierLabel: g.pick("front", "back")}
	}},
	{"near", 5, func(g *generator, p *v1.Pod) {
		withLabels("app", "near")(p)
		affinity(p).PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick("web", "db", "cache")}},
		}}}
	}},
	{"one-per-node", 6, func(g *generator, p *v1.Pod) {
		withLabels("app", "solo")(p)
		affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}},
		}}}
	}},
	{"soft-affinity", 5, func(g *generator, p *v1.Pod) {
		app := g.pick("web", "db", "cache")
		withLabels("app", app)(p)
		a := affinity(p)
		a.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: int32(1 + g.r.Intn(100)), PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: v1.LabelTopologyZone,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick("web", "db", "cache")}}},
		}}}
		a.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: int32(1 + g.r.Intn(100)), PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: v1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		}}}
	}},
	{"spread-zone", 6, func(g *generator, p *v1.Pod) {
		withLabels("app", "spread")(p)
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
	}},
	{"spread-host", 4, func(g *generator, p *v1.Pod) {
		withLabels("app", "web")(p)
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelHostname,
			WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	}},
	{"image", 6, func(g *generator, p *v1.Pod) {
		p.Spec.Containers[0].Image = diffImages[g.r.Intn(len(diffImages))].Names[0]
	}},
	{"fits-nowhere", 3, func(g *generator, p *v1.Pod) {
		switch g.r.Intn(3) {
		case 0:
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("64")
		case 1:
			p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("256Gi")
		default:
			requireNode(p, v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"z-missing"}})
		}
	}},
	{"priority", 5, func(g *generator, p *v1.Pod) { p.Spec.PriorityClassName = g.pick("batch-low", "batch-high") }},
	{"pinned", 3, func(g *generator, p *v1.Pod) {
		// A matchFields on the node's name makes NodeAffinity narrow the
		// nodes at PreFilter.
		affinity(p).NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
				{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{g.all[g.r.Intn(len(g.all))]}}}}}}}
	}},
	{"host-port", 4, func(g *generator, p *v1.Pod) {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}}
	}},
}

// randomPod draws a kind from the catalog and a size.
func (g *generator) randomPod(i int) *v1.Pod {
	total := 0
	for _, k := range podKinds {
		total += k.weight
	}
	n := g.r.Intn(total)
	k := podKinds[0]
	for _, c := range podKinds {
		if n < c.weight {
			k = c
			break
		}
		n -= c.weight
	}
	p := diffPod(fmt.Sprintf("p%02d-%s", i, k.name), g.pick("100m", "250m", "500m", "500m", "1", "1500m", "2"))
	if g.chance(35) {
		p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse(g.pick("128Mi", "512Mi", "1Gi", "2Gi", "4Gi"))
	}
	k.build(g, p)
	if len(g.profiles) > 1 {
		p.Spec.SchedulerName = g.pick(g.profiles...)
	}
	if g.extender {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		if g.chance(30) {
			p.Labels[extender.AvoidLabel] = g.pick(g.all...)
		}
		if g.chance(30) {
			p.Labels[extender.PreferLabel] = g.pick(g.all...)
		}
	}
	return p
}

// diffPod is a pod that goes at once when deleted: no kubelet runs here,
// and the pods preemption evicts must be gone for the preemptor to fit.
func diffPod(name, cpu string, mutators ...func(*v1.Pod)) *v1.Pod {
	p := pod(name, cpu, mutators...)
	p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(0))
	return p
}

func affinity(p *v1.Pod) *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

func requireNode(p *v1.Pod, r v1.NodeSelectorRequirement) {
	a := affinity(p)
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{r}}},
	}
}

func withLabels(kv ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
