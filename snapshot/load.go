package snapshot

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
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
	// MaxNodes and MaxPods, when set, refuse a document over them;
	// MaxMetaBytes bounds the labels, annotations and taints of its nodes
	// and pods together (zero: cluster.DefaultMaxMetaBytes). Each node and
	// pod is held to cluster.CheckSize.
	MaxNodes, MaxPods int
	MaxMetaBytes      int64
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
// their node. Of each object's metadata it keeps what a person sets (name,
// namespace, labels, annotations). Everything that can be checked is checked before the first
// write; a failure after it names the object.
func Load(ctx context.Context, client kubernetes.Interface, doc *Document, opts LoadOptions) (counts Counts, err error) {
	if err := doc.Validate(); err != nil {
		return counts, err
	}
	// A document written by hand or by another tool may hold owner
	// references and finalizers, which no controller here would clear.
	doc.forgetSource()
	if opts.MaxNodes > 0 && len(doc.Nodes) > opts.MaxNodes {
		return counts, &InvalidError{fmt.Sprintf("the snapshot holds %d nodes, over the limit of %d (--max-nodes)", len(doc.Nodes), opts.MaxNodes)}
	}
	if opts.MaxPods > 0 && len(doc.Pods) > opts.MaxPods {
		return counts, &InvalidError{fmt.Sprintf("the snapshot holds %d pods, over the limit of %d (--max-pods)", len(doc.Pods), opts.MaxPods)}
	}
	if err := checkSizes(doc, cmp.Or(opts.MaxMetaBytes, cluster.DefaultMaxMetaBytes)); err != nil {
		return counts, err
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

// checkSizes holds each node and pod to the cluster's per-object bounds,
// and all of them to max.
func checkSizes(doc *Document, max int64) error {
	var total int64
	var errs []error
	check := func(obj any) {
		if err := cluster.CheckSize(obj); err != nil && len(errs) < 10 {
			errs = append(errs, err)
		}
		total += cluster.MetaBytes(obj)
	}
	for i := range doc.Nodes {
		check(&doc.Nodes[i])
	}
	for i := range doc.Pods {
		check(&doc.Pods[i])
	}
	if total > max {
		errs = append(errs, fmt.Errorf("the labels, annotations and taints of its nodes and pods take %d bytes, over minisched's limit of %d", total, max))
	}
	if len(errs) > 0 {
		return &InvalidError{"the snapshot cannot be loaded: " + errors.Join(errs...).Error()}
	}
	return nil
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
