package app_test

// The embedded cluster as a real one (controllers, kubelets, kubectl): one
// control plane for the stories below, each a subtest. Over 400 lines
// because the stories share that control plane, and a package pays a link of
// Kubernetes of its own.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/ptr"

	"minisched/app"
	"minisched/cluster"
	"minisched/devices"
	"minisched/kubelet"
	"minisched/provisioner"
)

// TestNodeLeaseDuration: --node-lease-duration reaches the kubelets, which
// renew every quarter of it, and a stopped kubelet's node is still marked
// unreachable (with node lifecycle's grace taken from the same flag).
func TestNodeLeaseDuration(t *testing.T) {
	inst := start(t, func(f *app.Flags) { f.NodeLeaseDuration = 8 * time.Second })
	c := inst.Client
	ctx := context.Background()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "short-lease"}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var renewals []time.Time
	waitUntil(t, 3*time.Minute, "three renewals of the node's Lease", func() bool {
		l, err := c.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return false
		}
		if ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != 8 {
			t.Fatalf("the Lease lasts %vs, want 8", ptr.Deref(l.Spec.LeaseDurationSeconds, 0))
		}
		if n := len(renewals); n == 0 || l.Spec.RenewTime.After(renewals[n-1]) {
			renewals = append(renewals, l.Spec.RenewTime.Time)
		}
		return len(renewals) == 3
	})
	// Renewed every quarter of 8 s: never sooner than 2 s apart.
	for i := 1; i < len(renewals); i++ {
		if gap := renewals[i].Sub(renewals[i-1]); gap < 2*time.Second {
			t.Errorf("renewals %v apart, want at least 2s", gap)
		}
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, kubelet.StateAnnotation, kubelet.StateStopped)
	if _, err := c.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 3*time.Minute, "the unreachable taint", func() bool {
		n, err := c.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeUnreachable })
	})
}

// TestRealCluster does what a person does on a real cluster, through the
// apiserver alone, and checks that the embedded one answers as a real one
// would: the controllers of kube-controller-manager and the simulated
// kubelets at work. Each story has nodes of its own (a label its pods
// select), so that the stories do not share room.
func TestRealCluster(t *testing.T) {
	inst := start(t, nil)
	c := inst.Client
	stories := []struct {
		name string
		run  func(t *testing.T, s *story)
	}{
		{"a Deployment's pods run and are Ready", func(t *testing.T, s *story) {
			s.node("n1", "4")
			s.create(deployment(s, "web", 3, "100m"))
			s.waitFor("the Deployment available with 3 replicas", func() bool {
				d, err := c.AppsV1().Deployments(s.ns).Get(s.ctx, "web", metav1.GetOptions{})
				return err == nil && d.Status.AvailableReplicas == 3
			})
			for _, p := range s.pods("app=web") {
				if p.Status.Phase != v1.PodRunning || p.Status.PodIP == "" || p.Status.StartTime == nil || p.Status.HostIP == "" {
					t.Errorf("pod %s: phase %s, IP %q, host IP %q, start time %v", p.Name, p.Status.Phase, p.Status.PodIP, p.Status.HostIP, p.Status.StartTime)
				}
				if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "ReplicaSet" {
					t.Errorf("pod %s is owned by %v, want its ReplicaSet", p.Name, p.OwnerReferences)
				}
			}
		}},
		{"deleting a Deployment deletes its ReplicaSet and pods (garbage collector)", func(t *testing.T, s *story) {
			s.node("n1", "4")
			s.create(deployment(s, "gone", 2, "100m"))
			s.waitFor("2 running pods", func() bool { return s.running("app=gone") == 2 })
			if err := c.AppsV1().Deployments(s.ns).Delete(s.ctx, "gone", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			s.waitFor("the ReplicaSet and the pods gone", func() bool {
				rs, err := c.AppsV1().ReplicaSets(s.ns).List(s.ctx, metav1.ListOptions{})
				return err == nil && len(rs.Items) == 0 && len(s.pods("app=gone")) == 0
			})
		}},
		{"a preempted pod with a 30 s grace period ends, and the preemptor binds", func(t *testing.T, s *story) {
			s.node("n1", "2")
			low := s.pod("low", "1500m")
			low.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30) // kubectl's default
			s.create(low)
			s.waitFor("low running", func() bool { return s.phase("low") == v1.PodRunning })
			s.create(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-high"}, Value: 1000})
			vip := s.pod("vip", "1500m")
			vip.Spec.PriorityClassName = s.ns + "-high"
			s.create(vip)
			s.waitFor("vip bound and running in low's place", func() bool {
				p, err := c.CoreV1().Pods(s.ns).Get(s.ctx, "vip", metav1.GetOptions{})
				return err == nil && p.Spec.NodeName == s.nodeName("n1") && p.Status.Phase == v1.PodRunning
			})
			if _, err := c.CoreV1().Pods(s.ns).Get(s.ctx, "low", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("low still exists: %v", err)
			}
		}},
		{"a PodDisruptionBudget's disruptionsAllowed is computed", func(t *testing.T, s *story) {
			s.node("n1", "4")
			s.create(deployment(s, "guarded", 3, "100m"))
			s.create(&policyv1.PodDisruptionBudget{
				ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: s.ns},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
			})
			s.waitFor("disruptionsAllowed 1 of 3 healthy", func() bool {
				pdb, err := c.PolicyV1().PodDisruptionBudgets(s.ns).Get(s.ctx, "guarded", metav1.GetOptions{})
				return err == nil && pdb.Status.CurrentHealthy == 3 && pdb.Status.DisruptionsAllowed == 1
			})
		}},
		{"a Job's pod runs for its time and succeeds, and the Job completes", func(t *testing.T, s *story) {
			s.node("n1", "4")
			job := &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: s.ns},
				Spec: batchv1.JobSpec{Template: v1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kubelet.RunForAnnotation: "1s"}},
					Spec:       s.pod("", "100m").Spec,
				}},
			}
			job.Spec.Template.Spec.RestartPolicy = v1.RestartPolicyNever
			s.create(job)
			s.waitFor("the Job complete", func() bool {
				j, err := c.BatchV1().Jobs(s.ns).Get(s.ctx, "once", metav1.GetOptions{})
				return err == nil && j.Status.Succeeded == 1 && j.Status.CompletionTime != nil
			})
		}},
		{"a node's Lease is renewed and it stays Ready", func(t *testing.T, s *story) {
			name := s.node("n1", "4")
			var first *metav1.MicroTime
			s.waitFor("the node's Lease", func() bool {
				l, err := c.CoordinationV1().Leases("kube-node-lease").Get(s.ctx, name, metav1.GetOptions{})
				if err == nil {
					first = l.Spec.RenewTime
				}
				return err == nil
			})
			// The kubelet renews every quarter of 40 s.
			var lease *coordinationv1.Lease
			s.waitFor("a renewal", func() bool {
				l, err := c.CoordinationV1().Leases("kube-node-lease").Get(s.ctx, name, metav1.GetOptions{})
				lease = l
				return err == nil && l.Spec.RenewTime.After(first.Time)
			})
			if ptr.Deref(lease.Spec.HolderIdentity, "") != name || len(lease.OwnerReferences) != 1 {
				t.Errorf("lease holder %v, owners %v", lease.Spec.HolderIdentity, lease.OwnerReferences)
			}
			node, err := c.CoreV1().Nodes().Get(s.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !ready(node) || node.Status.NodeInfo.KubeletVersion != kubelet.KubeletVersion || len(node.Spec.Taints) != 0 {
				t.Errorf("node: ready %v, kubelet %q, taints %v", ready(node), node.Status.NodeInfo.KubeletVersion, node.Spec.Taints)
			}
		}},
		{"a node made NotReady is tainted, its pods are evicted and replaced elsewhere", func(t *testing.T, s *story) {
			sick := s.node("sick", "4")
			d := deployment(s, "moved", 2, "100m")
			// Let the pods leave at once rather than after the admission's 300 s.
			d.Spec.Template.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists,
				Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](0)}}
			s.create(d)
			s.waitFor("2 running pods on the node", func() bool { return s.running("app=moved") == 2 })
			healthy := s.node("healthy", "4")
			// The dashboard's way: PATCH /nodes/{name} {"kubelet": ...}.
			if code := call(t, "PATCH", inst.URL+"api/v1/nodes/"+sick, `{"kubelet":"Asleep"}`); code != 422 {
				t.Errorf("PATCH kubelet Asleep: %d, want 422", code)
			}
			if code := call(t, "PATCH", inst.URL+"api/v1/nodes/"+sick, `{"kubelet":"NotReady"}`); code != 200 {
				t.Fatalf("PATCH kubelet NotReady: %d", code)
			}
			s.waitFor("the not-ready NoExecute taint", func() bool {
				n, err := c.CoreV1().Nodes().Get(s.ctx, sick, metav1.GetOptions{})
				if err != nil {
					return false
				}
				for _, taint := range n.Spec.Taints {
					if taint.Key == v1.TaintNodeNotReady && taint.Effect == v1.TaintEffectNoExecute {
						return !ready(n)
					}
				}
				return false
			})
			s.waitFor("2 running replacements on the healthy node", func() bool {
				on := 0
				for _, p := range s.pods("app=moved") {
					if p.Spec.NodeName == healthy && p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
						on++
					}
				}
				return on == 2
			})
		}},
		{"a node whose kubelet stops loses its Lease and is marked unreachable", func(t *testing.T, s *story) {
			name := s.node("gone", "4")
			s.waitFor("the node Ready", func() bool {
				n, err := c.CoreV1().Nodes().Get(s.ctx, name, metav1.GetOptions{})
				return err == nil && ready(n)
			})
			// kubectl annotate's way.
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, kubelet.StateAnnotation, kubelet.StateStopped)
			if _, err := c.CoreV1().Nodes().Patch(s.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			// Node lifecycle's grace period is 50 s: the Lease must go stale.
			waitUntil(t, 3*time.Minute, "the unreachable taint", func() bool {
				n, err := c.CoreV1().Nodes().Get(s.ctx, name, metav1.GetOptions{})
				if err != nil {
					return false
				}
				for _, taint := range n.Spec.Taints {
					if taint.Key == v1.TaintNodeUnreachable {
						return true
					}
				}
				return false
			})
		}},
		{"a claim of the default class is provisioned on its pod's node, and its volume goes with it", func(t *testing.T, s *story) {
			s.node("n1", "4")
			claim := s.claim("data", "")
			s.create(claim)
			pvc, err := c.CoreV1().PersistentVolumeClaims(s.ns).Get(s.ctx, "data", metav1.GetOptions{})
			if err != nil || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != provisioner.DefaultClassName {
				t.Fatalf("the claim's class is not the default %q: %v, %v", provisioner.DefaultClassName, pvc, err)
			}
			pod := s.pod("user", "100m")
			pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
			s.create(pod)
			s.waitFor("the pod running and the claim bound", func() bool {
				pvc, err = c.CoreV1().PersistentVolumeClaims(s.ns).Get(s.ctx, "data", metav1.GetOptions{})
				return err == nil && pvc.Status.Phase == v1.ClaimBound && s.phase("user") == v1.PodRunning
			})
			pv, err := c.CoreV1().PersistentVolumes().Get(s.ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			affinity := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
			if affinity.Key != v1.LabelHostname || !slices.Equal(affinity.Values, []string{s.nodeName("n1")}) {
				t.Errorf("the volume's node affinity is %v, want %s in [%s]", affinity, v1.LabelHostname, s.nodeName("n1"))
			}
			if err := c.CoreV1().Pods(s.ns).Delete(s.ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			if err := c.CoreV1().PersistentVolumeClaims(s.ns).Delete(s.ctx, "data", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			s.waitFor("the volume deleted (reclaim policy Delete)", func() bool {
				_, err := c.CoreV1().PersistentVolumes().Get(s.ctx, pv.Name, metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			})
		}},
		{"a static volume binds to its claim (PV controller)", func(t *testing.T, s *story) {
			s.create(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-static"},
				Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
					AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: "manual",
					PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data"}}}})
			s.create(s.claim("static", "manual"))
			s.waitFor("the claim bound to the volume", func() bool {
				pvc, err := c.CoreV1().PersistentVolumeClaims(s.ns).Get(s.ctx, "static", metav1.GetOptions{})
				return err == nil && pvc.Status.Phase == v1.ClaimBound && pvc.Spec.VolumeName == s.ns+"-static"
			})
		}},
		{"an extended resource a DeviceClass names: the pod is placed on a node with devices, and its claim is made at PreBind", func(t *testing.T, s *story) {
			// DRAExtendedResource (GA): no node advertises the resource; a
			// DeviceClass names it, DynamicResources finds a device for it,
			// and creates the pod's claim in PreBind.
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.nodeName("gpu"), Labels: map[string]string{"story": s.ns},
				Annotations: map[string]string{devices.CountAnnotation: "1"}},
				Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}}
			if _, err := inst.Cluster.CreateNode(s.ctx, node); err != nil {
				t.Fatal(err)
			}
			gpu := v1.ResourceName("example.com/gpu-" + s.ns)
			class := devices.Class(nil)
			class.Name, class.Spec.ExtendedResourceName = s.ns+"-gpu", ptr.To(string(gpu))
			s.create(class)
			pod := s.pod("wants-gpu", "100m")
			pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{gpu: resource.MustParse("1")}
			pod.Spec.Containers[0].Resources.Requests[gpu] = resource.MustParse("1")
			s.create(pod)
			s.waitFor("the pod bound to the node with the device", func() bool {
				p, err := c.CoreV1().Pods(s.ns).Get(s.ctx, "wants-gpu", metav1.GetOptions{})
				return err == nil && p.Spec.NodeName == node.Name
			})
			claims, err := c.ResourceV1().ResourceClaims(s.ns).List(s.ctx, metav1.ListOptions{})
			if err != nil || len(claims.Items) != 1 {
				t.Fatalf("claims: %v, %v; want the pod's one", claims, err)
			}
			claim := claims.Items[0]
			alloc := claim.Status.Allocation
			if claim.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" || alloc == nil || len(alloc.Devices.Results) != 1 || alloc.Devices.Results[0].Pool != node.Name {
				t.Errorf("the claim %s: annotations %v, allocation %+v; want the extended resource's, one device from pool %s", claim.Name, claim.Annotations, alloc, node.Name)
			}
			// The one device is taken: a second pod waits, for want of it.
			second := s.pod("wants-gpu-too", "100m")
			second.Spec.Containers[0].Resources = *pod.Spec.Containers[0].Resources.DeepCopy()
			s.create(second)
			s.waitFor("the second pod unschedulable", func() bool {
				p, err := c.CoreV1().Pods(s.ns).Get(s.ctx, "wants-gpu-too", metav1.GetOptions{})
				if err != nil {
					return false
				}
				for _, cond := range p.Status.Conditions {
					if cond.Type == v1.PodScheduled && cond.Reason == v1.PodReasonUnschedulable {
						return true
					}
				}
				return false
			})
		}},
		{"a node's devices are published, a claim template's claim is allocated, and freed with its pod", func(t *testing.T, s *story) {
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.nodeName("gpu"), Labels: map[string]string{"story": s.ns},
				Annotations: map[string]string{devices.CountAnnotation: "2"}},
				Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}}
			if _, err := inst.Cluster.CreateNode(s.ctx, node); err != nil {
				t.Fatal(err)
			}
			s.waitFor("the node's slice with 2 devices", func() bool {
				sl, err := c.ResourceV1().ResourceSlices().Get(s.ctx, devices.SliceName(node.Name), metav1.GetOptions{})
				return err == nil && len(sl.Spec.Devices) == 2
			})
			s.create(&resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: s.ns},
				Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
					Requests: []resourcev1.DeviceRequest{{Name: "dev", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: devices.ClassName}}}}}}})
			pod := s.pod("user", "100m")
			pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "dev", ResourceClaimTemplateName: ptr.To("one")}}
			s.create(pod)
			s.waitFor("the pod running on the node", func() bool {
				return s.phase("user") == v1.PodRunning
			})
			claims, err := c.ResourceV1().ResourceClaims(s.ns).List(s.ctx, metav1.ListOptions{})
			if err != nil || len(claims.Items) != 1 {
				t.Fatalf("claims: %v, %v", claims, err)
			}
			alloc := claims.Items[0].Status.Allocation
			if alloc == nil || len(alloc.Devices.Results) != 1 || alloc.Devices.Results[0].Driver != devices.Driver || alloc.Devices.Results[0].Pool != node.Name {
				t.Errorf("the claim's allocation is %+v, want one device of %s from pool %s", alloc, devices.Driver, node.Name)
			}
			if err := c.CoreV1().Pods(s.ns).Delete(s.ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			s.waitFor("the pod's claim deleted (resourceclaim controller)", func() bool {
				l, err := c.ResourceV1().ResourceClaims(s.ns).List(s.ctx, metav1.ListOptions{})
				return err == nil && len(l.Items) == 0
			})
			// The dashboard's way: PATCH /nodes/{name} {"devices": n}.
			nodeURL := inst.URL + "api/v1/nodes/" + node.Name
			if code := call(t, "PATCH", nodeURL, `{"devices":65}`); code != 422 {
				t.Errorf("PATCH devices 65: %d, want 422", code)
			}
			if code := call(t, "PATCH", nodeURL, `{"devices":3}`); code != 200 {
				t.Fatalf("PATCH devices 3: %d, want 200", code)
			}
			s.waitFor("the slice with 3 devices, a new pool generation", func() bool {
				sl, err := c.ResourceV1().ResourceSlices().Get(s.ctx, devices.SliceName(node.Name), metav1.GetOptions{})
				return err == nil && len(sl.Spec.Devices) == 3 && sl.Spec.Pool.Generation == 2
			})
			bad := fmt.Sprintf(`{"metadata":{"name":%q,"annotations":{%q:"lots"}}}`, s.nodeName("bad"), devices.CountAnnotation)
			if code := call(t, "POST", inst.URL+"api/v1/nodes", bad); code != 422 {
				t.Errorf("POST a node with devices %q: %d, want 422", "lots", code)
			}
			// kubectl annotate's way: the driver publishes nothing and says why.
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"lots"}}}`, devices.CountAnnotation)
			if _, err := c.CoreV1().Nodes().Patch(s.ctx, node.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			s.waitFor("the slice gone, and a Warning Event on the node", func() bool {
				_, err := c.ResourceV1().ResourceSlices().Get(s.ctx, devices.SliceName(node.Name), metav1.GetOptions{})
				events, lerr := c.CoreV1().Events(metav1.NamespaceDefault).List(s.ctx, metav1.ListOptions{
					FieldSelector: "involvedObject.name=" + node.Name + ",reason=InvalidDevices"})
				return apierrors.IsNotFound(err) && lerr == nil && len(events.Items) > 0
			})
		}},
		{"kubectl: create deployment, scale, get, delete", func(t *testing.T, s *story) {
			s.node("n1", "4")
			kubectl := kubectlFor(t, inst)
			// No replica before the node selector: a pod of the first
			// ReplicaSet could land on another story's node, one whose
			// kubelet is stopped, and stay Terminating there, as on a real
			// cluster.
			kubectl("create", "deployment", "kweb", "--image=pause:3.10", "--replicas=0", "-n", s.ns)
			kubectl("patch", "deployment", "kweb", "-n", s.ns, "-p",
				fmt.Sprintf(`{"spec":{"replicas":3,"template":{"spec":{"nodeSelector":{"story":%q}}}}}`, s.ns))
			kubectl("rollout", "status", "deployment/kweb", "-n", s.ns, "--timeout=2m")
			out := kubectl("get", "pods", "-n", s.ns, "-l", "app=kweb", "--no-headers")
			if n := strings.Count(out, "Running"); n != 3 {
				t.Errorf("kubectl get pods shows %d Running, want 3:\n%s", n, out)
			}
			kubectl("scale", "deployment", "kweb", "--replicas=1", "-n", s.ns)
			s.waitFor("1 pod left", func() bool { return len(s.pods("app=kweb")) == 1 })
			// kubectl's delete is graceful (30 s); the kubelet ends it.
			pod := s.pods("app=kweb")[0].Name
			kubectl("delete", "pod", pod, "-n", s.ns, "--wait=true", "--timeout=1m")
			s.waitFor("a replacement running", func() bool {
				pods := s.pods("app=kweb")
				return len(pods) == 1 && pods[0].Name != pod && pods[0].Status.Phase == v1.PodRunning
			})
		}},
	}
	// The stories run side by side (each waits on the cluster most of its
	// time); the reset comes after them all. Under -short (the race
	// detector's pass, where everything runs several times slower) they run
	// one at a time: kubelets starved of CPU for tens of seconds can let
	// their Leases lapse, and node lifecycle, seeing most nodes of a zone
	// not ready, stops tainting and evicting, as upstream does.
	t.Run("stories", func(t *testing.T) {
		for _, st := range stories {
			t.Run(st.name, func(t *testing.T) {
				if !testing.Short() {
					t.Parallel()
				}
				s := newStory(t, inst)
				st.run(t, s)
			})
		}
	})
	t.Run("a reset removes what the controllers made, and they work again after it", func(t *testing.T) {
		ctx := context.Background()
		if err := inst.Cluster.Reset(ctx); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		meta, err := metadata.NewForConfig(inst.RESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, left := range []struct {
			gvr       schema.GroupVersionResource
			namespace string // "": all
		}{
			{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, ""},
			{schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, ""},
			{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, ""},
			{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, ""},
			{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, ""},
			{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, ""},
			{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "kube-node-lease"},
			{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, ""},
			{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, ""},
			{schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}, ""},
			{schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}, ""},
		} {
			l, err := meta.Resource(left.gvr).Namespace(left.namespace).List(ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) != 0 {
				t.Errorf("after the reset: %s left (%v): %v", left.gvr.Resource, err, l)
			}
		}
		if _, err := c.StorageV1().StorageClasses().Get(ctx, provisioner.DefaultClassName, metav1.GetOptions{}); err != nil {
			t.Errorf("the default StorageClass after the reset: %v", err)
		}
		s := newStory(t, inst)
		s.node("n1", "4")
		s.create(deployment(s, "again", 1, "100m"))
		s.waitFor("a running pod after the reset", func() bool { return s.running("app=again") == 1 })
	})
}

// story is one story's namespace and nodes.
type story struct {
	t    *testing.T
	ctx  context.Context
	c    kubernetes.Interface
	inst *app.Instance
	ns   string
}

var storyCount atomic.Int32

func newStory(t *testing.T, inst *app.Instance) *story {
	s := &story{t: t, ctx: context.Background(), c: inst.Client, inst: inst, ns: fmt.Sprintf("story-%d", storyCount.Add(1))}
	s.create(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}})
	return s
}

func (s *story) nodeName(name string) string { return s.ns + "-" + name }

// node creates a node with cpu CPUs through the REST path, labelled for
// this story's pods.
func (s *story) node(name, cpu string) string {
	s.t.Helper()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.nodeName(name), Labels: map[string]string{"story": s.ns}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}
	if _, err := s.inst.Cluster.CreateNode(s.ctx, node); err != nil {
		s.t.Fatalf("creating node %s: %v", node.Name, err)
	}
	return node.Name
}

// claim is a claim for 1Gi of class ("": the default class).
func (s *story) claim(name, class string) *v1.PersistentVolumeClaim {
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if class != "" {
		pvc.Spec.StorageClassName = &class
	}
	return pvc
}

// pod is a pod for this story's nodes, asking for cpu, as kubectl would
// make it (no grace period set: the apiserver's 30 s).
func (s *story) pod(name, cpu string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1.PodSpec{NodeSelector: map[string]string{"story": s.ns}, Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

func deployment(s *story, name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	tmpl := s.pod("", cpu)
	tmpl.Labels = labels
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}}}
}

// create creates any of the objects the stories use, directly with the
// apiserver, as kubectl create does.
func (s *story) create(obj any) {
	s.t.Helper()
	var err error
	switch o := obj.(type) {
	case *v1.Namespace:
		_, err = s.c.CoreV1().Namespaces().Create(s.ctx, o, metav1.CreateOptions{})
	case *v1.Pod:
		// A class made a moment ago is refused until admission's informer has it.
		err = cluster.WaitForClass(s.ctx, func() error {
			_, err := s.c.CoreV1().Pods(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
			return err
		})
	case *appsv1.Deployment:
		_, err = s.c.AppsV1().Deployments(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
	case *appsv1.DaemonSet:
		_, err = s.c.AppsV1().DaemonSets(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
	case *appsv1.StatefulSet:
		_, err = s.c.AppsV1().StatefulSets(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
	case *batchv1.Job:
		_, err = s.c.BatchV1().Jobs(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
	case *v1.PersistentVolumeClaim:
		_, err = s.c.CoreV1().PersistentVolumeClaims(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
	case *v1.PersistentVolume:
		_, err = s.c.CoreV1().PersistentVolumes().Create(s.ctx, o, metav1.CreateOptions{})
	case *resourcev1.ResourceClaimTemplate:
		_, err = s.c.ResourceV1().ResourceClaimTemplates(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
	case *resourcev1.DeviceClass:
		_, err = s.c.ResourceV1().DeviceClasses().Create(s.ctx, o, metav1.CreateOptions{})
	case *policyv1.PodDisruptionBudget:
		_, err = s.c.PolicyV1().PodDisruptionBudgets(o.Namespace).Create(s.ctx, o, metav1.CreateOptions{})
	case *schedulingv1.PriorityClass:
		_, err = s.c.SchedulingV1().PriorityClasses().Create(s.ctx, o, metav1.CreateOptions{})
	default:
		s.t.Fatalf("create: %T", obj)
	}
	if err != nil {
		s.t.Fatalf("creating %T: %v", obj, err)
	}
}

func (s *story) pods(selector string) []v1.Pod {
	s.t.Helper()
	l, err := s.c.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		s.t.Fatal(err)
	}
	return l.Items
}

func (s *story) running(selector string) int {
	n := 0
	for _, p := range s.pods(selector) {
		if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func (s *story) phase(name string) v1.PodPhase {
	p, err := s.c.CoreV1().Pods(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return p.Status.Phase
}

// waitFor waits for what the controllers and kubelets do; the limit is
// far above what a loaded machine needs, and only ends a broken run.
func (s *story) waitFor(what string, cond func() bool) {
	s.t.Helper()
	waitUntil(s.t, 4*time.Minute, what, cond)
}

func ready(node *v1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// kubectlFor returns a function that runs kubectl v1.37.2 against inst
// and returns its output. hack/test.sh builds it from the module cache and
// names it in $KUBECTL; without that, the test builds it itself.
func kubectlFor(t *testing.T, inst *app.Instance) func(args ...string) string {
	t.Helper()
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "kubectl")
		out, err := exec.Command("go", "build", "-o", bin, "k8s.io/kubernetes/cmd/kubectl").CombinedOutput()
		if err != nil {
			t.Fatalf("building kubectl from the module: %v\n%s", err, out)
		}
	}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--kubeconfig", inst.ControlPlane.KubeconfigPath()}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// TestCopyStaysACopy copies a cluster whose pods belong to a Deployment
// and a DaemonSet, under a PodDisruptionBudget, into an embedded cluster
// whose controllers and kubelets run: the copy's pods are the source's, one
// for one, and no controller makes or deletes one. The copy's controllers
// are shown to be at work by a Deployment of its own.
func TestCopyStaysACopy(t *testing.T) {
	source := start(t, nil)
	s := newStory(t, source)
	s.node("a", "4")
	s.node("b", "4")
	s.create(deployment(s, "web", 3, "100m"))
	ds := deployment(s, "agent", 1, "10m")
	s.create(&appsv1.DaemonSet{ObjectMeta: ds.ObjectMeta, Spec: appsv1.DaemonSetSpec{Selector: ds.Spec.Selector, Template: ds.Spec.Template}})
	s.create(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: s.ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
	db := deployment(s, "db", 2, "10m")
	s.create(&appsv1.StatefulSet{ObjectMeta: db.ObjectMeta, Spec: appsv1.StatefulSetSpec{Replicas: db.Spec.Replicas, Selector: db.Spec.Selector, Template: db.Spec.Template}})
	s.waitFor("3 web, 2 agent and 2 db pods running in the source", func() bool {
		return s.running("app=web") == 3 && s.running("app=agent") == 2 && s.running("app=db") == 2
	})
	placements := func(c kubernetes.Interface) []string {
		l, err := c.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Name+"@"+p.Spec.NodeName)
		}
		slices.Sort(out)
		return out
	}
	want := placements(source.Client)

	copied := start(t, func(f *app.Flags) { f.ImportFrom = source.ControlPlane.KubeconfigPath() })
	ctx := context.Background()
	list, err := copied.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := copied.Client.CoreV1().Pods(s.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The copy's kubelets start every copied pod; its controllers make the
	// pods of a Deployment of the copy's own.
	c := newStory(t, copied)
	c.node("own", "1")
	c.create(deployment(c, "sentinel", 1, "10m"))
	waitUntil(t, 2*time.Minute, "the copied pods running and the copy's own Deployment served", func() bool {
		l, err := copied.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, p := range l.Items {
			if p.Status.Phase != v1.PodRunning {
				return false
			}
		}
		d, err := copied.Client.AppsV1().Deployments(c.ns).Get(ctx, "sentinel", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 1
	})
	if got := placements(copied.Client); !slices.Equal(got, want) {
		t.Errorf("the copy's pods are %v, the source's %v", got, want)
	}
	// The workloads came along, and their controllers adopted the copied
	// pods, with nothing to create or delete.
	waitUntil(t, 2*time.Minute, "every copied pod owned by the copy's workloads", func() bool {
		l, err := copied.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, p := range l.Items {
			if metav1.GetControllerOf(&p) == nil {
				return false
			}
		}
		return len(l.Items) == len(want)
	})
	if ds, err := copied.Client.AppsV1().DaemonSets(s.ns).Get(ctx, "agent", metav1.GetOptions{}); err != nil || ds.Status.DesiredNumberScheduled != 2 {
		t.Errorf("the copy's DaemonSet: %+v, %v", ds.Status, err)
	}
	waitUntil(t, 2*time.Minute, "the copied budget computed (disruption controller)", func() bool {
		pdb, err := copied.Client.PolicyV1().PodDisruptionBudgets(s.ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && pdb.Status.CurrentHealthy == 3 && pdb.Status.DisruptionsAllowed == 1
	})
	for {
		select {
		case e := <-w.ResultChan():
			if e.Type == watch.Added || e.Type == watch.Deleted {
				p, _ := e.Object.(*v1.Pod)
				t.Errorf("a copied namespace saw a pod %s: %v", e.Type, p.GetName())
			}
			continue
		default:
		}
		break
	}
}
