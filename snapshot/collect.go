package snapshot

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"sigs.k8s.io/yaml"

	"minisched/minisched/schedconfig"
)

// Pods says which pods Collect takes.
type Pods string

const (
	PodsAll     Pods = "all"
	PodsBound   Pods = "bound"
	PodsPending Pods = "pending"
)

// ParsePods reads a pods filter; empty means all.
func ParsePods(s string) (Pods, error) {
	switch p := Pods(s); p {
	case "":
		return PodsAll, nil
	case PodsAll, PodsBound, PodsPending:
		return p, nil
	}
	return "", fmt.Errorf("pods %q: want bound, pending or all", s)
}

// CollectOptions filter what Collect reads.
type CollectOptions struct {
	// Namespaces, when set, are the only namespaces read (their pods,
	// claims and the namespaces themselves); cluster-wide objects are read
	// whole.
	Namespaces []string
	// Selector, a label selector, picks the pods.
	Selector string
	// Pods picks bound pods, pending ones or all (the default).
	Pods Pods
	// SchedulerConfig, when set, goes into the document.
	SchedulerConfig *config.KubeSchedulerConfiguration
	// WithoutWorkloads leaves Deployments, ReplicaSets, StatefulSets and
	// DaemonSets out: a mirror copies the pods the source's controllers
	// make and delete, which the copy's would undo.
	WithoutWorkloads bool
}

// pageSize bounds each list call: 50,000 pods arrive in pages rather than
// one answer the apiserver builds in memory at once.
const pageSize = 1000

// Collect reads a cluster into a document. It only gets and lists, so a
// read-only identity is enough; a refusal names the permission missing.
func Collect(ctx context.Context, client kubernetes.Interface, opts CollectOptions) (*Document, error) {
	if opts.Pods == "" {
		opts.Pods = PodsAll
	}
	selector, err := labels.Parse(opts.Selector)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %w", opts.Selector, err)
	}
	doc := &Document{APIVersion: APIVersion, Kind: Kind}
	if opts.SchedulerConfig != nil {
		if doc.SchedulerConfiguration, err = versioned(opts.SchedulerConfig); err != nil {
			return nil, err
		}
	}
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		if doc.Namespaces, err = list(ctx, "namespaces", "", client.CoreV1().Namespaces().List, func(l *v1.NamespaceList) []v1.Namespace { return l.Items }); err != nil {
			return nil, err
		}
		namespaces = []string{metav1.NamespaceAll}
	} else {
		for _, name := range namespaces {
			ns, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, permission(err, "get", "namespaces", "", name)
			}
			doc.Namespaces = append(doc.Namespaces, *ns)
		}
	}
	core, storage := client.CoreV1(), client.StorageV1()
	if doc.PriorityClasses, err = list(ctx, "priorityclasses", "", client.SchedulingV1().PriorityClasses().List, func(l *schedulingv1.PriorityClassList) []schedulingv1.PriorityClass { return l.Items }); err != nil {
		return nil, err
	}
	if doc.RuntimeClasses, err = list(ctx, "runtimeclasses", "", client.NodeV1().RuntimeClasses().List, func(l *nodev1.RuntimeClassList) []nodev1.RuntimeClass { return l.Items }); err != nil {
		return nil, err
	}
	if doc.StorageClasses, err = list(ctx, "storageclasses", "", storage.StorageClasses().List, func(l *storagev1.StorageClassList) []storagev1.StorageClass { return l.Items }); err != nil {
		return nil, err
	}
	if doc.PersistentVolumes, err = list(ctx, "persistentvolumes", "", core.PersistentVolumes().List, func(l *v1.PersistentVolumeList) []v1.PersistentVolume { return l.Items }); err != nil {
		return nil, err
	}
	if doc.CSINodes, err = list(ctx, "csinodes", "", storage.CSINodes().List, func(l *storagev1.CSINodeList) []storagev1.CSINode { return l.Items }); err != nil {
		return nil, err
	}
	if doc.Nodes, err = list(ctx, "nodes", "", core.Nodes().List, func(l *v1.NodeList) []v1.Node { return l.Items }); err != nil {
		return nil, err
	}
	dra, err := servesDRA(client)
	if err != nil {
		return nil, err
	}
	if dra {
		res := client.ResourceV1()
		if doc.DeviceClasses, err = list(ctx, "deviceclasses", "", res.DeviceClasses().List, func(l *resourcev1.DeviceClassList) []resourcev1.DeviceClass { return l.Items }); err != nil {
			return nil, err
		}
		if doc.ResourceSlices, err = list(ctx, "resourceslices", "", res.ResourceSlices().List, func(l *resourcev1.ResourceSliceList) []resourcev1.ResourceSlice { return l.Items }); err != nil {
			return nil, err
		}
	}
	for _, ns := range namespaces {
		claims, err := list(ctx, "persistentvolumeclaims", ns, core.PersistentVolumeClaims(ns).List, func(l *v1.PersistentVolumeClaimList) []v1.PersistentVolumeClaim { return l.Items })
		if err != nil {
			return nil, err
		}
		doc.PersistentVolumeClaims = append(doc.PersistentVolumeClaims, claims...)
		if dra {
			claims, err := list(ctx, "resourceclaims", ns, client.ResourceV1().ResourceClaims(ns).List, func(l *resourcev1.ResourceClaimList) []resourcev1.ResourceClaim { return l.Items })
			if err != nil {
				return nil, err
			}
			doc.ResourceClaims = append(doc.ResourceClaims, claims...)
		}
		if err := collectWorkloads(ctx, client, ns, doc, !opts.WithoutWorkloads); err != nil {
			return nil, err
		}
		pods, err := list(ctx, "pods", ns, core.Pods(ns).List, func(l *v1.PodList) []v1.Pod { return l.Items })
		if err != nil {
			return nil, err
		}
		for _, p := range pods {
			if keepPod(&p, opts.Pods, selector) {
				doc.Pods = append(doc.Pods, p)
			}
		}
	}
	doc.wholeOwners()
	doc.clean()
	doc.Sort()
	return doc, nil
}

// collectWorkloads reads a namespace's budgets into doc, and its
// workloads unless told not to. Both are what a copy can do without: an
// identity that may not list them gets a copy without them (their pods
// bare, as copies were before), and LeftOut says so. The workloads come
// all or none: a Deployment copied without its ReplicaSets would make new
// ones.
func collectWorkloads(ctx context.Context, client kubernetes.Interface, ns string, doc *Document, workloads bool) error {
	budgets, err := list(ctx, "poddisruptionbudgets", ns, client.PolicyV1().PodDisruptionBudgets(ns).List,
		func(l *policyv1.PodDisruptionBudgetList) []policyv1.PodDisruptionBudget { return l.Items })
	if err := doc.leaveOut(err, "poddisruptionbudgets"); err != nil {
		return err
	}
	doc.PodDisruptionBudgets = append(doc.PodDisruptionBudgets, budgets...)
	if !workloads || slices.Contains(doc.LeftOut, "workloads") {
		return nil
	}
	apps := client.AppsV1()
	deployments, err := list(ctx, "deployments", ns, apps.Deployments(ns).List, func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items })
	var replicaSets []appsv1.ReplicaSet
	if err == nil {
		replicaSets, err = list(ctx, "replicasets", ns, apps.ReplicaSets(ns).List, func(l *appsv1.ReplicaSetList) []appsv1.ReplicaSet { return l.Items })
	}
	var statefulSets []appsv1.StatefulSet
	if err == nil {
		statefulSets, err = list(ctx, "statefulsets", ns, apps.StatefulSets(ns).List, func(l *appsv1.StatefulSetList) []appsv1.StatefulSet { return l.Items })
	}
	var daemonSets []appsv1.DaemonSet
	if err == nil {
		daemonSets, err = list(ctx, "daemonsets", ns, apps.DaemonSets(ns).List, func(l *appsv1.DaemonSetList) []appsv1.DaemonSet { return l.Items })
	}
	if err != nil {
		doc.Deployments, doc.ReplicaSets, doc.StatefulSets, doc.DaemonSets = nil, nil, nil, nil
		return doc.leaveOut(err, "workloads")
	}
	doc.Deployments = append(doc.Deployments, deployments...)
	doc.ReplicaSets = append(doc.ReplicaSets, replicaSets...)
	doc.StatefulSets = append(doc.StatefulSets, statefulSets...)
	doc.DaemonSets = append(doc.DaemonSets, daemonSets...)
	return nil
}

// leaveOut records a kind the identity may not list, or returns any other
// error.
func (d *Document) leaveOut(err error, kind string) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	if !slices.Contains(d.LeftOut, kind) {
		d.LeftOut = append(d.LeftOut, kind)
	}
	return nil
}

// versioned turns the scheduler's configuration into its versioned form,
// the one a user writes and --scheduler-config reads.
func versioned(cfg *config.KubeSchedulerConfiguration) (*configv1.KubeSchedulerConfiguration, error) {
	data, err := schedconfig.Encode(cfg)
	if err != nil {
		return nil, err
	}
	out := &configv1.KubeSchedulerConfiguration{}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		return nil, fmt.Errorf("reading the encoded scheduler configuration: %w", err)
	}
	return out, nil
}

// keepPod says whether Collect copies a pod. Pods that have finished hold
// no resources (the scheduler ignores them), so they are left out.
func keepPod(p *v1.Pod, which Pods, selector labels.Selector) bool {
	if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed || !selector.Matches(labels.Set(p.Labels)) {
		return false
	}
	bound := p.Spec.NodeName != ""
	return which == PodsAll || which == PodsBound && bound || which == PodsPending && !bound
}

// servesDRA says whether the cluster serves resource.k8s.io/v1; an older
// or a smaller one does not, and its ResourceSlices, DeviceClasses and
// ResourceClaims are skipped.
func servesDRA(client kubernetes.Interface) (bool, error) {
	_, err := client.Discovery().ServerResourcesForGroupVersion(resourcev1.SchemeGroupVersion.String())
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, permission(err, "get", "the discovery document of", "", resourcev1.SchemeGroupVersion.String())
}

// listPage is a typed client's List.
type listPage[L any] func(context.Context, metav1.ListOptions) (L, error)

// list reads every object of a resource, a page at a time.
func list[L interface{ GetContinue() string }, T any](ctx context.Context, resource, namespace string, page listPage[L], items func(L) []T) ([]T, error) {
	var out []T
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		l, err := page(ctx, opts)
		if err != nil {
			return nil, permission(err, "list", resource, namespace, "")
		}
		out = append(out, items(l)...)
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// permission names what a refusal of the source cluster's lacks, so that
// whoever grants the identity knows what to add: "needs list on pods in
// namespace x". Other errors say what was being read.
func permission(err error, verb, resource, namespace, name string) error {
	what := resource
	if name != "" {
		what += " " + name
	}
	where := ""
	if namespace != "" {
		where = " in namespace " + namespace
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("the cluster refused to let this identity %s %s%s: needs %s on %s%s: %w", verb, what, where, verb, resource, where, err)
	}
	return fmt.Errorf("%s %s%s: %w", verb, what, where, err)
}
