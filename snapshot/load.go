package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/cluster"
	"minisched/minisched/schedconfig"
)

// ErrNotEmpty refuses to load into a cluster that holds objects already,
// unless the load replaces them.
var ErrNotEmpty = errors.New("the cluster is not empty")

// Configurer is the scheduler a document's configuration goes to
// (minisched.Service).
type Configurer interface {
	CheckConfig(*config.KubeSchedulerConfiguration) error
	Restart(*config.KubeSchedulerConfiguration) error
}

// LoadOptions say how Load loads.
type LoadOptions struct {
	// Replace empties a cluster that is not empty first, with Reset (the
	// cluster package's: pods, nodes, PriorityClasses, and the history
	// starts again), then the storage, runtime and device objects.
	Replace bool
	Reset   func(context.Context) error
	// Scheduler, when set, runs with the document's scheduler
	// configuration from before the first pod is created; SchedulerName
	// names its profile when the configuration names none. Nil: the
	// configuration is left as it is.
	Scheduler     Configurer
	SchedulerName string
	// MaxNodes and MaxPods, when set, refuse a document over them.
	MaxNodes, MaxPods int
	// Pause, when set, stops the controllers and kubelets while the
	// objects are created, and returns what starts them again: they then
	// find each workload with all its pods, and nothing to do.
	Pause func() (resume func() error)
}

// Counts say how many objects of each kind a load created.
type Counts struct {
	Namespaces             int `json:"namespaces"`
	PriorityClasses        int `json:"priorityClasses"`
	RuntimeClasses         int `json:"runtimeClasses"`
	StorageClasses         int `json:"storageClasses"`
	PersistentVolumeClaims int `json:"persistentVolumeClaims"`
	PersistentVolumes      int `json:"persistentVolumes"`
	CSINodes               int `json:"csiNodes"`
	DeviceClasses          int `json:"deviceClasses"`
	Nodes                  int `json:"nodes"`
	ResourceSlices         int `json:"resourceSlices"`
	ResourceClaims         int `json:"resourceClaims"`
	Deployments            int `json:"deployments"`
	ReplicaSets            int `json:"replicaSets"`
	StatefulSets           int `json:"statefulSets"`
	DaemonSets             int `json:"daemonSets"`
	PodDisruptionBudgets   int `json:"podDisruptionBudgets"`
	Pods                   int `json:"pods"`
	// BoundPods were created on their node; PendingPods wait for the
	// scheduler.
	BoundPods   int `json:"boundPods"`
	PendingPods int `json:"pendingPods"`
	// SchedulerConfiguration says the scheduler restarted with the
	// document's configuration.
	SchedulerConfiguration bool `json:"schedulerConfiguration"`
}

// workers is how many objects Load creates at once: enough to keep the
// apiserver busy, few enough not to starve the scheduler's own calls.
const workers = 16

// Load creates the document's objects, in the order they depend on each
// other: namespaces, classes, storage, nodes, then pods, bound pods on
// their node. Everything that can be checked is checked before the first
// write; a failure after it names the object.
func Load(ctx context.Context, client kubernetes.Interface, doc *Document, opts LoadOptions) (counts Counts, err error) {
	if err := doc.Validate(); err != nil {
		return counts, err
	}
	if opts.MaxNodes > 0 && len(doc.Nodes) > opts.MaxNodes {
		return counts, &InvalidError{fmt.Sprintf("the snapshot holds %d nodes, over the limit of %d (--max-nodes)", len(doc.Nodes), opts.MaxNodes)}
	}
	if opts.MaxPods > 0 && len(doc.Pods) > opts.MaxPods {
		return counts, &InvalidError{fmt.Sprintf("the snapshot holds %d pods, over the limit of %d (--max-pods)", len(doc.Pods), opts.MaxPods)}
	}
	var cfg *config.KubeSchedulerConfiguration
	if opts.Scheduler != nil {
		var err error
		if cfg, err = doc.SchedulerConfig(opts.SchedulerName); err != nil {
			return counts, err
		}
		if cfg != nil {
			if err := opts.Scheduler.CheckConfig(cfg); err != nil {
				return counts, fmt.Errorf("the snapshot's scheduler configuration: %w", err)
			}
		}
	}
	dra, err := servesDRA(client)
	if err != nil {
		return counts, err
	}
	held, err := contents(ctx, client, dra)
	if err != nil {
		return counts, err
	}
	if len(held) > 0 {
		if !opts.Replace {
			return counts, fmt.Errorf("%w: it holds %s; load with replace to empty it first", ErrNotEmpty, strings.Join(held, ", "))
		}
		if err := opts.Reset(ctx); err != nil {
			return counts, fmt.Errorf("emptying the cluster: %w", err)
		}
		if err := purge(ctx, client, dra); err != nil {
			return counts, fmt.Errorf("emptying the cluster: %w", err)
		}
	}
	if cfg != nil {
		if err := opts.Scheduler.Restart(cfg); err != nil {
			return counts, fmt.Errorf("restarting the scheduler with the snapshot's configuration: %w", err)
		}
	}
	if len(doc.ResourceSlices)+len(doc.DeviceClasses)+len(doc.ResourceClaims) > 0 && !dra {
		return counts, &InvalidError{"the snapshot holds ResourceSlices, DeviceClasses or ResourceClaims, and this cluster does not serve resource.k8s.io/v1"}
	}
	// The copy's classes are the source's: minisched's built-in ones would
	// be classes the source does not have.
	builtIn := metav1.ListOptions{LabelSelector: cluster.BuiltInLabel}
	if len(doc.StorageClasses) > 0 {
		if err := client.StorageV1().StorageClasses().DeleteCollection(ctx, metav1.DeleteOptions{}, builtIn); err != nil {
			return counts, fmt.Errorf("deleting the built-in StorageClass: %w", err)
		}
	}
	if len(doc.DeviceClasses) > 0 && dra {
		if err := client.ResourceV1().DeviceClasses().DeleteCollection(ctx, metav1.DeleteOptions{}, builtIn); err != nil {
			return counts, fmt.Errorf("deleting the built-in DeviceClass: %w", err)
		}
	}
	l := &loader{client: client, classes: map[string]bool{}}
	for _, pc := range doc.PriorityClasses {
		l.classes[pc.Name] = true
	}
	if opts.Pause != nil {
		resume := opts.Pause()
		defer func() {
			if rerr := resume(); rerr != nil && err == nil {
				err = fmt.Errorf("starting the controllers again: %w", rerr)
			}
		}()
	}
	counts, err = l.load(ctx, doc)
	counts.SchedulerConfiguration = cfg != nil
	return counts, err
}

// SchedulerConfig returns the document's scheduler configuration, checked
// and defaulted as --scheduler-config's, or nil when it has none.
func (d *Document) SchedulerConfig(schedulerName string) (*config.KubeSchedulerConfiguration, error) {
	if d.SchedulerConfiguration == nil {
		return nil, nil
	}
	data, err := json.Marshal(d.SchedulerConfiguration)
	if err != nil {
		return nil, fmt.Errorf("encoding the snapshot's scheduler configuration: %w", err)
	}
	cfg, err := schedconfig.Load(data, schedulerName)
	if err != nil {
		return nil, fmt.Errorf("the snapshot's scheduler configuration: %w", err)
	}
	return cfg, nil
}

type loader struct {
	client kubernetes.Interface
	// classes names the PriorityClasses this load created: a pod naming
	// one may be refused for a moment (cluster.WaitForClass).
	classes map[string]bool
	// claims maps each PersistentVolumeClaim created to its new uid, which
	// the PersistentVolume bound to it names; created keeps the claims
	// whose status is written once their volumes exist.
	claimsMu sync.Mutex
	claims   map[string]types.UID
	created  []v1.PersistentVolumeClaim
}

func (l *loader) load(ctx context.Context, doc *Document) (Counts, error) {
	var c Counts
	core, storage, res, apps := l.client.CoreV1(), l.client.StorageV1(), l.client.ResourceV1(), l.client.AppsV1()
	create := metav1.CreateOptions{}
	steps := []func() error{
		func() error {
			return each(ctx, doc.Namespaces, &c.Namespaces, "namespace", func(ctx context.Context, ns *v1.Namespace) error {
				return l.namespace(ctx, ns)
			})
		},
		func() error {
			return each(ctx, doc.PriorityClasses, &c.PriorityClasses, "PriorityClass", creator(l.client.SchedulingV1().PriorityClasses().Create))
		},
		func() error {
			return each(ctx, doc.RuntimeClasses, &c.RuntimeClasses, "RuntimeClass", creator(l.client.NodeV1().RuntimeClasses().Create))
		},
		func() error {
			return each(ctx, doc.StorageClasses, &c.StorageClasses, "StorageClass", creator(storage.StorageClasses().Create))
		},
		func() error {
			return each(ctx, doc.DeviceClasses, &c.DeviceClasses, "DeviceClass", creator(res.DeviceClasses().Create))
		},
		func() error {
			l.claims = map[string]types.UID{}
			return each(ctx, doc.PersistentVolumeClaims, &c.PersistentVolumeClaims, "PersistentVolumeClaim", func(ctx context.Context, pvc *v1.PersistentVolumeClaim) error {
				claims := core.PersistentVolumeClaims(pvc.Namespace)
				created, err := claims.Create(ctx, pvc, create)
				if err != nil {
					return err
				}
				l.claimsMu.Lock()
				l.claims[pvc.Namespace+"/"+pvc.Name] = created.UID
				if pvc.Status.Phase != "" {
					created.Status = pvc.Status
					l.created = append(l.created, *created)
				}
				l.claimsMu.Unlock()
				return nil
			})
		},
		func() error {
			return each(ctx, doc.PersistentVolumes, &c.PersistentVolumes, "PersistentVolume", func(ctx context.Context, pv *v1.PersistentVolume) error {
				if ref := pv.Spec.ClaimRef; ref != nil {
					ref.UID = l.claims[ref.Namespace+"/"+ref.Name]
				}
				created, err := core.PersistentVolumes().Create(ctx, pv, create)
				if err != nil || pv.Status.Phase == "" {
					return err
				}
				return writeStatus(ctx, core.PersistentVolumes(), created, func(v *v1.PersistentVolume) { v.Status = pv.Status })
			})
		},
		func() error {
			// A claim says Bound only once its volume exists: the
			// persistentvolume controller marks a Bound claim whose
			// volume it cannot find Lost.
			var none int
			return each(ctx, l.created, &none, "PersistentVolumeClaim status", func(ctx context.Context, created *v1.PersistentVolumeClaim) error {
				status := created.Status
				return writeStatus(ctx, core.PersistentVolumeClaims(created.Namespace), created, func(c *v1.PersistentVolumeClaim) { c.Status = status })
			})
		},
		func() error {
			return each(ctx, doc.CSINodes, &c.CSINodes, "CSINode", creator(storage.CSINodes().Create))
		},
		func() error {
			// The apiserver keeps a node's status on create, as the
			// cluster package's CreateNode says.
			return each(ctx, doc.Nodes, &c.Nodes, "node", creator(core.Nodes().Create))
		},
		func() error {
			return each(ctx, doc.ResourceSlices, &c.ResourceSlices, "ResourceSlice", creator(res.ResourceSlices().Create))
		},
		func() error {
			return each(ctx, doc.ResourceClaims, &c.ResourceClaims, "ResourceClaim", func(ctx context.Context, claim *resourcev1.ResourceClaim) error {
				claims := res.ResourceClaims(claim.Namespace)
				created, err := claims.Create(ctx, claim, create)
				if err != nil || claim.Status.Allocation == nil {
					return err
				}
				return writeStatus(ctx, claims, created, func(c *resourcev1.ResourceClaim) { c.Status = claim.Status })
			})
		},
		func() error {
			return each(ctx, doc.Deployments, &c.Deployments, "Deployment", inNamespace(func(ns string) func(context.Context, *appsv1.Deployment, metav1.CreateOptions) (*appsv1.Deployment, error) {
				return apps.Deployments(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.ReplicaSets, &c.ReplicaSets, "ReplicaSet", inNamespace(func(ns string) func(context.Context, *appsv1.ReplicaSet, metav1.CreateOptions) (*appsv1.ReplicaSet, error) {
				return apps.ReplicaSets(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.StatefulSets, &c.StatefulSets, "StatefulSet", inNamespace(func(ns string) func(context.Context, *appsv1.StatefulSet, metav1.CreateOptions) (*appsv1.StatefulSet, error) {
				return apps.StatefulSets(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.DaemonSets, &c.DaemonSets, "DaemonSet", inNamespace(func(ns string) func(context.Context, *appsv1.DaemonSet, metav1.CreateOptions) (*appsv1.DaemonSet, error) {
				return apps.DaemonSets(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.PodDisruptionBudgets, &c.PodDisruptionBudgets, "PodDisruptionBudget", inNamespace(func(ns string) func(context.Context, *policyv1.PodDisruptionBudget, metav1.CreateOptions) (*policyv1.PodDisruptionBudget, error) {
				return l.client.PolicyV1().PodDisruptionBudgets(ns).Create
			}))
		},
		func() error {
			// Bound pods first: a pending pod the scheduler places while
			// they are still coming would be placed on half the picture.
			var bound, pending []v1.Pod
			for _, p := range doc.Pods {
				if p.Spec.NodeName != "" {
					bound = append(bound, p)
				} else {
					pending = append(pending, p)
				}
			}
			err := each(ctx, bound, &c.BoundPods, "pod", l.pod)
			if err == nil {
				err = each(ctx, pending, &c.PendingPods, "pod", l.pod)
			}
			c.Pods = c.BoundPods + c.PendingPods
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// statusClient is the part of a typed client writeStatus needs.
type statusClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// writeStatus writes the status of an object just created, a call of its
// own (status is a subresource). A controller may have changed the object
// in between (the persistentvolume controller marks a claim at once), so a
// conflict reads it again and sets the status on the newer one.
func writeStatus[T metav1.Object](ctx context.Context, client statusClient[T], created T, set func(T)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set(created)
		_, err := client.UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if latest, getErr := client.Get(ctx, created.GetName(), metav1.GetOptions{}); getErr == nil {
				created = latest
			}
		}
		return err
	})
}

// pod creates a pod; one with spec.nodeName is created bound (the
// apiserver accepts nodeName on create, and the scheduler leaves such a pod
// alone).
func (l *loader) pod(ctx context.Context, pod *v1.Pod) error {
	// Priority admission works both out from the pod's PriorityClass, and
	// refuses a pod that states other values than the class's.
	pod.Spec.Priority, pod.Spec.PreemptionPolicy = nil, nil
	create := func() error {
		_, err := l.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}
	if l.classes[pod.Spec.PriorityClassName] {
		// A class this load created a moment ago may not have reached
		// the Priority admission's cache yet.
		return cluster.WaitForClass(ctx, create)
	}
	return create()
}

// namespace creates a namespace, or, for one every cluster has (default,
// kube-system), gives it the document's labels and annotations: rules
// such as pod affinity's namespaceSelector read them.
func (l *loader) namespace(ctx context.Context, ns *v1.Namespace) error {
	namespaces := l.client.CoreV1().Namespaces()
	_, err := namespaces.Create(ctx, ns, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	current, err := namespaces.Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	current.Labels, current.Annotations = ns.Labels, ns.Annotations
	_, err = namespaces.Update(ctx, current, metav1.UpdateOptions{})
	return err
}

// creator adapts a typed client's Create to each.
// inNamespace is creator for a namespaced kind: the object's namespace
// picks the client.
func inNamespace[T any, P metaObject[T]](create func(namespace string) func(context.Context, *T, metav1.CreateOptions) (*T, error)) func(context.Context, *T) error {
	return func(ctx context.Context, obj *T) error {
		_, err := create(P(obj).GetNamespace())(ctx, obj, metav1.CreateOptions{})
		return err
	}
}

func creator[T any](create func(context.Context, *T, metav1.CreateOptions) (*T, error)) func(context.Context, *T) error {
	return func(ctx context.Context, obj *T) error {
		_, err := create(ctx, obj, metav1.CreateOptions{})
		return err
	}
}

// each runs do on every item, a few at a time, counts those done, and
// stops at the first failure, which it names.
func each[T any, P metaObject[T]](ctx context.Context, items []T, count *int, kind string, do func(context.Context, P) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var done atomic.Int64
	next := make(chan P)
	var wg sync.WaitGroup
	for range min(workers, len(items)) {
		wg.Go(func() {
			for obj := range next {
				if err := do(ctx, obj); err != nil {
					name := obj.GetName()
					if ns := obj.GetNamespace(); ns != "" {
						name = ns + "/" + name
					}
					cancel(fmt.Errorf("creating %s %s: %w", kind, name, err))
					continue
				}
				done.Add(1)
			}
		})
	}
feed:
	for i := range items {
		select {
		case next <- P(&items[i]):
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	*count = int(done.Load())
	return context.Cause(ctx)
}

// contents names the kinds of objects a cluster holds that a load would
// collide with or mix with; none means the cluster is empty. The
// namespaces and PriorityClasses every cluster has, and minisched's
// built-in StorageClass and DeviceClass, do not count.
func contents(ctx context.Context, client kubernetes.Interface, dra bool) ([]string, error) {
	one := metav1.ListOptions{Limit: 1}
	core, storage, res := client.CoreV1(), client.StorageV1(), client.ResourceV1()
	kinds := []struct {
		kind string
		list func() (runtime.Object, error)
	}{
		{"nodes", func() (runtime.Object, error) { return core.Nodes().List(ctx, one) }},
		{"pods", func() (runtime.Object, error) { return core.Pods("").List(ctx, one) }},
		{"PriorityClasses", func() (runtime.Object, error) {
			l, err := client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			l.Items = dropSystemClasses(l.Items)
			return l, nil
		}},
		{"PersistentVolumeClaims", func() (runtime.Object, error) { return core.PersistentVolumeClaims("").List(ctx, one) }},
		{"PersistentVolumes", func() (runtime.Object, error) { return core.PersistentVolumes().List(ctx, one) }},
		{"StorageClasses", func() (runtime.Object, error) {
			return storage.StorageClasses().List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "!" + cluster.BuiltInLabel})
		}},
		{"CSINodes", func() (runtime.Object, error) { return storage.CSINodes().List(ctx, one) }},
		{"RuntimeClasses", func() (runtime.Object, error) { return client.NodeV1().RuntimeClasses().List(ctx, one) }},
		{"Deployments", func() (runtime.Object, error) { return client.AppsV1().Deployments("").List(ctx, one) }},
		{"ReplicaSets", func() (runtime.Object, error) { return client.AppsV1().ReplicaSets("").List(ctx, one) }},
		{"StatefulSets", func() (runtime.Object, error) { return client.AppsV1().StatefulSets("").List(ctx, one) }},
		{"DaemonSets", func() (runtime.Object, error) { return client.AppsV1().DaemonSets("").List(ctx, one) }},
		{"PodDisruptionBudgets", func() (runtime.Object, error) { return client.PolicyV1().PodDisruptionBudgets("").List(ctx, one) }},
	}
	if dra {
		kinds = append(kinds, []struct {
			kind string
			list func() (runtime.Object, error)
		}{
			{"DeviceClasses", func() (runtime.Object, error) {
				return res.DeviceClasses().List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "!" + cluster.BuiltInLabel})
			}},
			{"ResourceSlices", func() (runtime.Object, error) { return res.ResourceSlices().List(ctx, one) }},
			{"ResourceClaims", func() (runtime.Object, error) { return res.ResourceClaims("").List(ctx, one) }},
		}...)
	}
	var held []string
	for _, k := range kinds {
		l, err := k.list()
		if err != nil {
			return nil, fmt.Errorf("looking for %s: %w", k.kind, err)
		}
		if meta.LenList(l) > 0 {
			held = append(held, k.kind)
		}
	}
	return held, nil
}

// purge deletes, after the cluster package's reset, the kinds it leaves:
// storage, runtime and device objects. Finalizers go first: no controller
// runs here to remove them, and an object holding one would never go.
func purge(ctx context.Context, client kubernetes.Interface, dra bool) error {
	core, storage, res := client.CoreV1(), client.StorageV1(), client.ResourceV1()
	type kind struct {
		name   string
		list   func() (runtime.Object, error)
		delete func(namespace, name string) error
		patch  func(namespace, name string, data []byte) error
	}
	all := metav1.ListOptions{}
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	pt, po := types.MergePatchType, metav1.PatchOptions{}
	kinds := []kind{
		{"PersistentVolumeClaim",
			func() (runtime.Object, error) { return core.PersistentVolumeClaims("").List(ctx, all) },
			func(ns, n string) error { return core.PersistentVolumeClaims(ns).Delete(ctx, n, now) },
			func(ns, n string, d []byte) error {
				_, err := core.PersistentVolumeClaims(ns).Patch(ctx, n, pt, d, po)
				return err
			}},
		{"PersistentVolume",
			func() (runtime.Object, error) { return core.PersistentVolumes().List(ctx, all) },
			func(_, n string) error { return core.PersistentVolumes().Delete(ctx, n, now) },
			func(_, n string, d []byte) error {
				_, err := core.PersistentVolumes().Patch(ctx, n, pt, d, po)
				return err
			}},
		{"StorageClass",
			func() (runtime.Object, error) { return storage.StorageClasses().List(ctx, all) },
			func(_, n string) error { return storage.StorageClasses().Delete(ctx, n, now) },
			func(_, n string, d []byte) error {
				_, err := storage.StorageClasses().Patch(ctx, n, pt, d, po)
				return err
			}},
		{"CSINode",
			func() (runtime.Object, error) { return storage.CSINodes().List(ctx, all) },
			func(_, n string) error { return storage.CSINodes().Delete(ctx, n, now) },
			func(_, n string, d []byte) error { _, err := storage.CSINodes().Patch(ctx, n, pt, d, po); return err }},
		{"RuntimeClass",
			func() (runtime.Object, error) { return client.NodeV1().RuntimeClasses().List(ctx, all) },
			func(_, n string) error { return client.NodeV1().RuntimeClasses().Delete(ctx, n, now) },
			func(_, n string, d []byte) error {
				_, err := client.NodeV1().RuntimeClasses().Patch(ctx, n, pt, d, po)
				return err
			}},
	}
	if dra {
		kinds = append(kinds, []kind{
			{"ResourceClaim",
				func() (runtime.Object, error) { return res.ResourceClaims("").List(ctx, all) },
				func(ns, n string) error { return res.ResourceClaims(ns).Delete(ctx, n, now) },
				func(ns, n string, d []byte) error {
					_, err := res.ResourceClaims(ns).Patch(ctx, n, pt, d, po)
					return err
				}},
			{"ResourceSlice",
				func() (runtime.Object, error) { return res.ResourceSlices().List(ctx, all) },
				func(_, n string) error { return res.ResourceSlices().Delete(ctx, n, now) },
				func(_, n string, d []byte) error { _, err := res.ResourceSlices().Patch(ctx, n, pt, d, po); return err }},
			{"DeviceClass",
				func() (runtime.Object, error) { return res.DeviceClasses().List(ctx, all) },
				func(_, n string) error { return res.DeviceClasses().Delete(ctx, n, now) },
				func(_, n string, d []byte) error { _, err := res.DeviceClasses().Patch(ctx, n, pt, d, po); return err }},
		}...)
	}
	noFinalizers := []byte(`{"metadata":{"finalizers":null}}`)
	for _, k := range kinds {
		l, err := k.list()
		if err != nil {
			return fmt.Errorf("listing %ss: %w", k.name, err)
		}
		objs, err := meta.ExtractList(l)
		if err != nil {
			return fmt.Errorf("reading the list of %ss: %w", k.name, err)
		}
		for _, obj := range objs {
			o, err := meta.Accessor(obj)
			if err != nil {
				return fmt.Errorf("reading a %s: %w", k.name, err)
			}
			if len(o.GetFinalizers()) > 0 {
				if err := k.patch(o.GetNamespace(), o.GetName(), noFinalizers); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("removing the finalizers of %s %s: %w", k.name, o.GetName(), err)
				}
			}
			if err := k.delete(o.GetNamespace(), o.GetName()); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s: %w", k.name, o.GetName(), err)
			}
		}
	}
	return nil
}
