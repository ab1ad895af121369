package scenario

import (
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// object is what every typed object of the API is.
type object interface {
	runtime.Object
	metav1.Object
}

// typedAPI is what the typed client of every kind offers.
type typedAPI[T object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// resource is a kind a scenario creates, updates and deletes straight
// through the apiserver: the workloads, budgets, volumes and device
// objects that the controllers, kubelets and drivers then act on, as they
// would on a manifest applied with kubectl. Nodes, pods and PriorityClasses
// go through the cluster package instead (its limits, defaults and owner
// label).
type resource struct {
	namespaced bool
	// makesPods marks a workload: the pods it makes are not named in the
	// scenario, so counts of pods cannot be bounded by the names.
	makesPods bool
	new       func() object
	create    func(ctx context.Context, c kubernetes.Interface, obj object, opts metav1.CreateOptions) error
	patch     func(ctx context.Context, c kubernetes.Interface, namespace, name string, data []byte) error
	delete    func(ctx context.Context, c kubernetes.Interface, namespace, name string) error
}

// kindOf erases a typed client into a resource.
func kindOf[T object](namespaced, makesPods bool, newObj func() T, api func(c kubernetes.Interface, namespace string) typedAPI[T]) resource {
	return resource{
		namespaced: namespaced,
		makesPods:  makesPods,
		new:        func() object { return newObj() },
		create: func(ctx context.Context, c kubernetes.Interface, obj object, opts metav1.CreateOptions) error {
			_, err := api(c, obj.GetNamespace()).Create(ctx, obj.(T), opts)
			return err
		},
		patch: func(ctx context.Context, c kubernetes.Interface, namespace, name string, data []byte) error {
			_, err := api(c, namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{})
			return err
		},
		// As kubectl delete does: in the background, with the object's
		// own grace period; the garbage collector takes what it owned.
		delete: func(ctx context.Context, c kubernetes.Interface, namespace, name string) error {
			return api(c, namespace).Delete(ctx, name, metav1.DeleteOptions{})
		},
	}
}

// resources are the kinds beyond Node, Pod and PriorityClass, by kind.
var resources = map[string]resource{
	"Namespace": kindOf(false, false, func() *v1.Namespace { return &v1.Namespace{} },
		func(c kubernetes.Interface, _ string) typedAPI[*v1.Namespace] { return c.CoreV1().Namespaces() }),
	"Deployment": kindOf(true, true, func() *appsv1.Deployment { return &appsv1.Deployment{} },
		func(c kubernetes.Interface, ns string) typedAPI[*appsv1.Deployment] {
			return c.AppsV1().Deployments(ns)
		}),
	"ReplicaSet": kindOf(true, true, func() *appsv1.ReplicaSet { return &appsv1.ReplicaSet{} },
		func(c kubernetes.Interface, ns string) typedAPI[*appsv1.ReplicaSet] {
			return c.AppsV1().ReplicaSets(ns)
		}),
	"StatefulSet": kindOf(true, true, func() *appsv1.StatefulSet { return &appsv1.StatefulSet{} },
		func(c kubernetes.Interface, ns string) typedAPI[*appsv1.StatefulSet] {
			return c.AppsV1().StatefulSets(ns)
		}),
	"DaemonSet": kindOf(true, true, func() *appsv1.DaemonSet { return &appsv1.DaemonSet{} },
		func(c kubernetes.Interface, ns string) typedAPI[*appsv1.DaemonSet] { return c.AppsV1().DaemonSets(ns) }),
	"Job": kindOf(true, true, func() *batchv1.Job { return &batchv1.Job{} },
		func(c kubernetes.Interface, ns string) typedAPI[*batchv1.Job] { return c.BatchV1().Jobs(ns) }),
	"CronJob": kindOf(true, true, func() *batchv1.CronJob { return &batchv1.CronJob{} },
		func(c kubernetes.Interface, ns string) typedAPI[*batchv1.CronJob] { return c.BatchV1().CronJobs(ns) }),
	"PodDisruptionBudget": kindOf(true, false, func() *policyv1.PodDisruptionBudget { return &policyv1.PodDisruptionBudget{} },
		func(c kubernetes.Interface, ns string) typedAPI[*policyv1.PodDisruptionBudget] {
			return c.PolicyV1().PodDisruptionBudgets(ns)
		}),
	// Served with GenericWorkload=true (spec.runFeatureGates).
	"PodGroup": kindOf(true, false, func() *schedulingv1beta1.PodGroup { return &schedulingv1beta1.PodGroup{} },
		func(c kubernetes.Interface, ns string) typedAPI[*schedulingv1beta1.PodGroup] {
			return c.SchedulingV1beta1().PodGroups(ns)
		}),
	"PersistentVolumeClaim": kindOf(true, false, func() *v1.PersistentVolumeClaim { return &v1.PersistentVolumeClaim{} },
		func(c kubernetes.Interface, ns string) typedAPI[*v1.PersistentVolumeClaim] {
			return c.CoreV1().PersistentVolumeClaims(ns)
		}),
	"PersistentVolume": kindOf(false, false, func() *v1.PersistentVolume { return &v1.PersistentVolume{} },
		func(c kubernetes.Interface, _ string) typedAPI[*v1.PersistentVolume] {
			return c.CoreV1().PersistentVolumes()
		}),
	"StorageClass": kindOf(false, false, func() *storagev1.StorageClass { return &storagev1.StorageClass{} },
		func(c kubernetes.Interface, _ string) typedAPI[*storagev1.StorageClass] {
			return c.StorageV1().StorageClasses()
		}),
	"ResourceClaim": kindOf(true, false, func() *resourcev1.ResourceClaim { return &resourcev1.ResourceClaim{} },
		func(c kubernetes.Interface, ns string) typedAPI[*resourcev1.ResourceClaim] {
			return c.ResourceV1().ResourceClaims(ns)
		}),
	"ResourceClaimTemplate": kindOf(true, false, func() *resourcev1.ResourceClaimTemplate { return &resourcev1.ResourceClaimTemplate{} },
		func(c kubernetes.Interface, ns string) typedAPI[*resourcev1.ResourceClaimTemplate] {
			return c.ResourceV1().ResourceClaimTemplates(ns)
		}),
	"DeviceClass": kindOf(false, false, func() *resourcev1.DeviceClass { return &resourcev1.DeviceClass{} },
		func(c kubernetes.Interface, _ string) typedAPI[*resourcev1.DeviceClass] {
			return c.ResourceV1().DeviceClasses()
		}),
}

// Kinds a scenario may create, update or delete: Node, Pod and
// PriorityClass, then the resources in a fixed order.
var kinds = append([]string{"Node", "Pod", "PriorityClass"}, sortedResources()...)

func sortedResources() []string {
	names := make([]string, 0, len(resources))
	for k := range resources {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// namespacedKind says whether kind's names carry a namespace ("ns/name",
// the default namespace when it has none).
func namespacedKind(kind string) bool {
	return kind == "Pod" || resources[kind].namespaced
}
