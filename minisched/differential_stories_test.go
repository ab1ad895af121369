package minisched_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	volumehelpers "k8s.io/component-helpers/storage/volume"
)

// preemptionStory: two pods fill a 2-CPU node; a high-priority pod that
// may only go there preempts the one of lowest priority.
func (d *diff) preemptionStory() {
	d.place(storyPod("sa-low", "story-low", "1", "story-z"))
	d.place(storyPod("sa-mid", "story-mid", "1", "story-z"))
	mv, uv, mini, up := d.preempt(storyPod("sa-high", "story-high", "1", "story-z"))
	d.t.Logf("seed %d, preemption: victims minisched %v, kube-scheduler %v; preemptor on %s / %s; minisched's queue: %s",
		d.seed, mv, uv, mini["sa-high"].Node, up["sa-high"].Node, d.queuePath("sa-high"))
}

// budgetAndAgeStory: story-w holds three pods of one priority: sd-old and
// sd-young, started three and two hours ago, and sd-guarded, the youngest,
// under a PodDisruptionBudget that allows no disruption (its status written
// as the disruption controller would; none runs here). The preemptor needs
// one victim: the budget's pod is reprieved first, then the older of the
// others (upstream's selectVictimsOnNode), so sd-young goes. Without the
// budget it would be sd-guarded; without start times, the order of the
// node's pods would decide.
func (d *diff) budgetAndAgeStory() {
	ctx := context.Background()
	clients := []kubernetes.Interface{client, d.up.client}
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "sd-guarded", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sd-guarded"}}}}
	for _, c := range clients {
		pdb, err := c.PolicyV1().PodDisruptionBudgets("default").Create(ctx, budget.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			d.t.Fatal(err)
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
		if _, err := c.PolicyV1().PodDisruptionBudgets("default").UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			d.t.Fatal(err)
		}
		defer func() {
			if err := c.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, budget.Name, metav1.DeleteOptions{}); err != nil {
				d.t.Error(err)
			}
		}()
	}
	// One instant for both clusters, whole seconds as the API keeps them.
	now := time.Now().Truncate(time.Second)
	for _, victim := range []struct {
		name string
		age  time.Duration
	}{{"sd-old", 3 * time.Hour}, {"sd-young", 2 * time.Hour}, {"sd-guarded", time.Hour}} {
		d.place(storyPod(victim.name, "story-low", "1", "story-w", withLabels("app", victim.name)))
		started := metav1.NewTime(now.Add(-victim.age))
		for _, c := range clients {
			d.updatePod(c, victim.name, func(p *v1.Pod) { p.Status.StartTime = &started }, true)
		}
	}
	// The preemptor's add comes after the start times on the same watch.
	mv, uv, mini, up := d.preempt(storyPod("sd-high", "story-high", "1", "story-w"))
	if !slices.Equal(uv, []string{"sd-young"}) {
		d.t.Errorf("seed %d: kube-scheduler evicted %v for sd-high, not sd-young: the story no longer tests the budget and the ages", d.seed, uv)
	}
	d.t.Logf("seed %d, budget and ages: victims minisched %v, kube-scheduler %v; preemptor on %s / %s",
		d.seed, mv, uv, mini["sd-high"].Node, up["sd-high"].Node)
}

// nominatedNodeGetsRoomStory: a blocker on story-x keeps the preemptor, by
// required anti-affinity over the rack, off story-x and story-y. Preemption
// evicts the blocker and nominates story-x; its deletion frees both nodes
// at once. story-y, empty and twice as big, scores higher, but the
// nominated node is tried first.
func (d *diff) nominatedNodeGetsRoomStory() {
	d.place(storyPod("sb-blocker", "story-low", "1", "story-x", withLabels("app", "sb-blocker")))
	anti := func(p *v1.Pod) {
		affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: rackLabel, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sb-blocker"}},
		}}}
	}
	mv, uv, mini, up := d.preempt(storyPod("sb-pre", "story-high", "1", "story-x", onStoryNodes("story-x", "story-y"), anti))
	if up["sb-pre"].Node == "story-x" {
		d.stories.nominatedFirst++
	}
	d.t.Logf("seed %d, nominated node gets room: victims minisched %v, kube-scheduler %v; preemptor on %s / %s; minisched's queue: %s",
		d.seed, mv, uv, mini["sb-pre"].Node, up["sb-pre"].Node, d.queuePath("sb-pre"))
}

// externalNominationStory: a gated pod is nominated by someone else (its
// status.nominatedNodeName) to the most loaded of the nodes where it fits,
// which the scoring would not choose, then ungated. Both schedulers must
// try that node first.
func (d *diff) externalNominationStory(candidates []string) {
	p := diffPod("sc-held", "500m", func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: holdGate}} })
	d.place(p)
	target := d.mostLoaded(candidates, p.Spec.Containers[0].Resources.Requests.Cpu())
	for _, c := range []kubernetes.Interface{client, d.up.client} {
		d.updatePod(c, p.Name, func(p *v1.Pod) { p.Status.NominatedNodeName = target }, true)
	}
	d.check("after nominating sc-held to " + target)
	for _, c := range []kubernetes.Interface{client, d.up.client} {
		d.updatePod(c, p.Name, func(p *v1.Pod) { p.Spec.SchedulingGates = nil }, false)
	}
	mini, up := d.check("after ungating sc-held")
	if up["sc-held"].Node == target {
		d.stories.nominatedFirst++
	}
	d.t.Logf("seed %d, external nomination to %s: sc-held %s / %s", d.seed, target, describe(mini["sc-held"], true), describe(up["sc-held"], true))
}

// mostLoaded returns the candidate with the largest share of its CPU
// requested that still has room for cpu, as kube-scheduler's cluster
// holds them; the first candidate when none has room.
func (d *diff) mostLoaded(candidates []string, cpu *resource.Quantity) string {
	d.t.Helper()
	ctx := context.Background()
	pods, err := d.up.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	used := map[string]int64{}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			used[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	best, bestShare := candidates[0], -1.0
	for _, name := range candidates {
		n, err := d.up.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			d.t.Fatal(err)
		}
		alloc := n.Status.Allocatable.Cpu().MilliValue()
		if alloc-used[name] < cpu.MilliValue() {
			continue
		}
		if share := float64(used[name]) / float64(alloc); share > bestShare {
			best, bestShare = name, share
		}
	}
	return best
}

func (d *diff) updatePod(c kubernetes.Interface, name string, change func(*v1.Pod), status bool) {
	d.t.Helper()
	ctx := context.Background()
	p, err := c.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	change(p)
	if status {
		_, err = c.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
	} else {
		_, err = c.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{})
	}
	if err != nil {
		d.t.Fatalf("updating %s: %v", name, err)
	}
}

// storyPod tolerates the story nodes' taint and may only go to node.
func storyPod(name, class, cpu, node string, mutators ...func(*v1.Pod)) *v1.Pod {
	p := diffPod(name, cpu, onStoryNodes(node))
	p.Spec.PriorityClassName = class
	p.Spec.Tolerations = []v1.Toleration{{Key: storyTaint, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	for _, m := range mutators {
		m(p)
	}
	return p
}

func onStoryNodes(names ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		affinity(p).NodeAffinity = nil
		requireNode(p, v1.NodeSelectorRequirement{Key: storyNodeLabel, Operator: v1.NodeSelectorOpIn, Values: names})
	}
}

func storyNode(name, cpu, mem, rack string) *v1.Node {
	n := node(name, cpu, nodeMemory(mem))
	n.Labels[storyNodeLabel] = name
	if rack != "" {
		n.Labels[rackLabel] = rack
	}
	n.Spec.Taints = []v1.Taint{{Key: storyTaint, Value: "true", Effect: v1.TaintEffectNoSchedule}}
	return n
}

func nodeMemory(q string) func(*v1.Node) {
	return func(n *v1.Node) {
		n.Status.Allocatable[v1.ResourceMemory] = resource.MustParse(q)
		n.Status.Capacity[v1.ResourceMemory] = resource.MustParse(q)
	}
}

// draStory: devices on two story nodes, published as ResourceSlices of a
// driver of the story's own, and a DeviceClass that names an extended
// resource (DRAExtendedResource, GA). A pod with a ResourceClaim of one
// device, then pods asking for the extended resource, one more than there
// are devices left: DynamicResources allocates (and makes the extended
// resource's claims at PreBind) on both sides; the nodes, the devices and
// the last pod's rejection must agree. No controller runs here: the claims
// the story needs are made by it, as the resourceclaim controller would.
func (d *diff) draStory() {
	ctx := context.Background()
	const driver, className, gpu = "story.example.com", "story-gpu", "example.com/story-gpu"
	clients := []kubernetes.Interface{client, d.up.client}
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: className}, Spec: resourcev1.DeviceClassSpec{
		Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`}}},
		ExtendedResourceName: ptrTo(gpu),
	}}
	slice := func(node string, devices int) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-" + driver}, Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: ptrTo(node), Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
		for i := range devices {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)})
		}
		return s
	}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "se-claim", Namespace: "default"}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: className}}}}}}
	for _, c := range clients {
		must := func(_ any, err error) {
			if err != nil {
				d.t.Fatal(err)
			}
		}
		must(c.ResourceV1().DeviceClasses().Create(ctx, class.DeepCopy(), metav1.CreateOptions{}))
		must(c.ResourceV1().ResourceSlices().Create(ctx, slice("story-x", 1), metav1.CreateOptions{}))
		must(c.ResourceV1().ResourceSlices().Create(ctx, slice("story-y", 2), metav1.CreateOptions{}))
		must(c.ResourceV1().ResourceClaims("default").Create(ctx, claim.DeepCopy(), metav1.CreateOptions{}))
	}
	// Both schedulers' DRA caches must have seen the devices and the claim.
	d.settle("the devices")
	onDevices := onStoryNodes("story-x", "story-y")
	d.place(storyPod("se-claimer", "story-low", "100m", "story-x", onDevices, func(p *v1.Pod) {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptrTo("se-claim")}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	}))
	for i := 1; i <= 3; i++ {
		d.place(storyPod(fmt.Sprintf("se-ext-%d", i), "story-low", "100m", "story-x", onDevices, func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[gpu] = resource.MustParse("1")
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{gpu: resource.MustParse("1")}
		}))
	}
	mini, up := d.settle("after the DRA story")
	mine, theirs := allocations(d.t, client), allocations(d.t, d.up.client)
	if !maps.Equal(mine, theirs) {
		d.t.Errorf("seed %d, DRA story: minisched allocated %v, kube-scheduler %v", d.seed, mine, theirs)
	}
	d.t.Logf("seed %d, DRA: allocations %v; se-ext-3 %s / %s", d.seed, mine, describe(mini["se-ext-3"], true), describe(up["se-ext-3"], true))

	// The story ends without a trace: its pods go first, then the claims,
	// the devices and the class, so that no pod meets the devices freed.
	// One at a time, each settled, as every step here: the pods they
	// leave room for must meet the same moves on both sides.
	zero := int64(0)
	for _, name := range []string{"se-claimer", "se-ext-1", "se-ext-2", "se-ext-3"} {
		for _, c := range clients {
			if err := c.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
				d.t.Fatal(err)
			}
		}
		d.settle("after deleting " + name)
	}
	// They were deleted by the story, not by preemption: the figures leave
	// them out.
	d.created = slices.DeleteFunc(d.created, func(name string) bool { return strings.HasPrefix(name, "se-") })
	for _, c := range clients {
		// An allocated claim has the finalizer the resourceclaim controller
		// would take away; none runs here.
		list, err := c.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			d.t.Fatal(err)
		}
		for i := range list.Items {
			if cl := &list.Items[i]; len(cl.Finalizers) > 0 {
				cl.Finalizers = nil
				if _, err := c.ResourceV1().ResourceClaims("default").Update(ctx, cl, metav1.UpdateOptions{}); err != nil {
					d.t.Fatal(err)
				}
			}
		}
		if err := c.ResourceV1().ResourceClaims("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			d.t.Fatal(err)
		}
		if err := c.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.driver=" + driver}); err != nil {
			d.t.Fatal(err)
		}
		if err := c.ResourceV1().DeviceClasses().Delete(ctx, className, metav1.DeleteOptions{}); err != nil {
			d.t.Fatal(err)
		}
	}
	d.settle("the DRA story's objects deleted")
}

// allocations maps each claim of the default namespace, by the pod that
// owns it (an extended resource's claim) or by its name, to the devices
// allocated to it, as pool/device.
func allocations(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	list, err := c.ResourceV1().ResourceClaims("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, cl := range list.Items {
		key := cl.Name
		if len(cl.OwnerReferences) > 0 {
			key = "pod " + cl.OwnerReferences[0].Name
		}
		var devices []string
		if a := cl.Status.Allocation; a != nil {
			for _, r := range a.Devices.Results {
				devices = append(devices, r.Pool+"/"+r.Device)
			}
		}
		slices.Sort(devices)
		out[key] = strings.Join(devices, ",")
	}
	return out
}

// slowVolumeDelay is how long slowVolumeStory's provisioner takes: longer
// than the 30 s at which minisched once cut every extension point, though
// VolumeBinding's PreBind waits up to its bindTimeoutSeconds (600 s).
const slowVolumeDelay = 31 * time.Second

// slowVolumeStory: a claim of a WaitForFirstConsumer class whose volume
// takes over 30 s to appear. Both schedulers pick a node, mark the claim
// with it at PreBind and wait there, as VolumeBinding does, until the
// story, playing the provisioner and the PersistentVolume controller (none
// runs here), makes a volume on that node and binds the claim. Both must
// then bind the pod, on the same node, in its first attempt. It runs on one
// seed only (slowVolumeSeed): it takes over 30 s by design.
func (d *diff) slowVolumeStory() {
	ctx := context.Background()
	const className, claimName, podName = "story-slow", "sv-data", "sv-slow"
	clients := []kubernetes.Interface{client, d.up.client}
	wait1st := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: className},
		Provisioner: "story.example.com/slow", VolumeBindingMode: &wait1st}
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claimName, Namespace: "default"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptrTo(className),
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	for _, c := range clients {
		if _, err := c.StorageV1().StorageClasses().Create(ctx, class.DeepCopy(), metav1.CreateOptions{}); err != nil {
			d.t.Fatal(err)
		}
		if _, err := c.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim.DeepCopy(), metav1.CreateOptions{}); err != nil {
			d.t.Fatal(err)
		}
	}
	d.settle("the slow class and its claim")
	d.create(storyPod(podName, "story-low", "100m", "story-x", onStoryNodes("story-x", "story-y"), func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}}
	}))

	// Each PreBind marks the claim with its node, then waits.
	selected := make([]string, len(clients))
	err := wait.PollUntilContextTimeout(ctx, diffPoll, settleTimeout, true, func(ctx context.Context) (bool, error) {
		for i, c := range clients {
			pvc, err := c.CoreV1().PersistentVolumeClaims("default").Get(ctx, claimName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			selected[i] = pvc.Annotations[volumehelpers.AnnSelectedNode]
		}
		return selected[0] != "" && selected[1] != "", nil
	})
	if err != nil {
		d.t.Fatalf("seed %d, slow volume: the claim was not marked with a node by both (minisched %q, kube-scheduler %q): %v",
			d.seed, selected[0], selected[1], err)
	}
	marked := time.Now()
	time.Sleep(slowVolumeDelay) // the slow provisioner: the story, not a wait for an event
	for i, c := range clients {
		provisionSlowly(d.t, c, claimName, selected[i])
	}
	mini, up := d.check("after the slow volume")
	for who, o := range map[string]outcome{"minisched": mini[podName], "kube-scheduler": up[podName]} {
		if o.pending() {
			d.t.Errorf("seed %d, slow volume: %s left %s pending (%s) after its volume was bound %v after PreBind began",
				d.seed, who, podName, o.Message, time.Since(marked).Round(time.Second))
		}
	}
	d.stories.slowVolumes++
	if m, u := mini[podName], up[podName]; !m.pending() && m.Node == u.Node && selected[0] == selected[1] {
		d.stories.slowVolumesAgree++
	}
	d.t.Logf("seed %d, slow volume: claim marked for %s / %s; bound on %s / %s after waiting %v at PreBind",
		d.seed, selected[0], selected[1], mini[podName].Node, up[podName].Node, slowVolumeDelay)

	// The story ends without a trace: the pod, then the claim, its volume
	// and the class, their protection finalizers taken off as the
	// controllers that would take them off do not run here.
	zero := int64(0)
	for _, c := range clients {
		if err := c.CoreV1().Pods("default").Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			d.t.Fatal(err)
		}
	}
	d.settle("after deleting " + podName)
	d.created = slices.DeleteFunc(d.created, func(name string) bool { return name == podName })
	for _, c := range clients {
		removeVolume(d.t, c, claimName)
		if err := c.StorageV1().StorageClasses().Delete(ctx, className, metav1.DeleteOptions{}); err != nil {
			d.t.Fatal(err)
		}
	}
	d.settle("the slow volume's objects deleted")
}

// provisionSlowly makes the claim's volume on node and binds the two, as
// an external provisioner and the PersistentVolume controller would.
func provisionSlowly(t *testing.T, c kubernetes.Interface, claimName, node string) {
	t.Helper()
	ctx := context.Background()
	pvc, err := c.CoreV1().PersistentVolumeClaims("default").Get(ctx, claimName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + claimName},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      pvc.Spec.Resources.Requests,
			AccessModes:                   pvc.Spec.AccessModes,
			StorageClassName:              *pvc.Spec.StorageClassName,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/slow/" + claimName}},
			ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: storyNodeLabel, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}},
		}}
	if pv, err = c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv.Status.Phase = v1.VolumeBound
	if _, err := c.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volumehelpers.AnnBindCompleted, "yes")
	if pvc, err = c.CoreV1().PersistentVolumeClaims("default").Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc.Status.Phase = v1.ClaimBound
	pvc.Status.AccessModes = pvc.Spec.AccessModes
	pvc.Status.Capacity = pvc.Spec.Resources.Requests
	if _, err := c.CoreV1().PersistentVolumeClaims("default").UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// removeVolume deletes the claim and its volume, finalizers and all.
func removeVolume(t *testing.T, c kubernetes.Interface, claimName string) {
	t.Helper()
	ctx := context.Background()
	unprotect := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := c.CoreV1().PersistentVolumeClaims("default").Patch(ctx, claimName, types.MergePatchType, unprotect, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().PersistentVolumeClaims("default").Delete(ctx, claimName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().PersistentVolumes().Patch(ctx, "pv-"+claimName, types.MergePatchType, unprotect, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().PersistentVolumes().Delete(ctx, "pv-"+claimName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
