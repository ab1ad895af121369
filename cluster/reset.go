package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"minisched/event"
)

// SystemPriorityClass says whether a PriorityClass is the system's own,
// which Reset keeps.
func SystemPriorityClass(name string) bool { return strings.HasPrefix(name, "system-") }

// owned are the kinds a reset deletes before the pods, in this order:
// the controllers' objects (the owners of pods first), then what pods use.
// Pods, nodes and PriorityClasses follow.
var owned = []schema.GroupVersionResource{
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "controllerrevisions"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Version: "v1", Resource: "replicationcontrollers"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"},
}

// afterPods are deleted once the pods are gone: what a running pod holds.
var afterPods = []schema.GroupVersionResource{
	{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	// Served with GenericWorkload only; a kind not served is skipped.
	{Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "podgroups"},
}

// Reset deletes every workload, pod and node, and the PriorityClasses
// people made (the system's stay), then reports a reset event: the history
// starts again from it, and the dashboards take a fresh snapshot. The
// scheduler is held meanwhile, so that no pod is tried again on its way
// out, and the controllers and kubelets are paused, so that nothing makes
// pods again halfway; finalizers no controller would now remove are
// cleared, so that the cluster is empty when Reset returns.
func (c *Cluster) Reset(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c.resetMu.Lock()
	hooks := c.onReset
	c.resetMu.Unlock()
	for _, f := range hooks {
		f()
	}
	if c.opts.Hold != nil {
		defer c.opts.Hold()()
	}
	if c.opts.Pause != nil {
		resume := c.opts.Pause()
		defer func() {
			if rerr := resume(); rerr != nil && err == nil {
				err = fmt.Errorf("starting the controllers again: %w", rerr)
			}
		}()
	}
	core := c.opts.Client.CoreV1()
	namespaces, err := core.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var names []string
	for _, ns := range namespaces.Items {
		names = append(names, ns.Name)
	}
	if err := c.deleteAll(ctx, owned, names); err != nil {
		return err
	}
	for _, ns := range names {
		if err := core.Pods(ns).DeleteCollection(ctx, deleteNow, metav1.ListOptions{}); err != nil {
			return err
		}
	}
	if err := c.deleteAll(ctx, afterPods, names); err != nil {
		return err
	}
	if err := c.deleteAll(ctx, []schema.GroupVersionResource{{Version: "v1", Resource: "persistentvolumes"}}, nil); err != nil {
		return err
	}
	if err := core.Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	// The kubelets' Leases and the DRA drivers' ResourceSlices go with their
	// nodes (the garbage collector would delete them later; the next node
	// of the same name must not find one).
	if err := c.deleteAll(ctx, []schema.GroupVersionResource{{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}},
		[]string{"kube-node-lease"}); err != nil {
		return err
	}
	if err := c.deleteAll(ctx, []schema.GroupVersionResource{{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}}, nil); err != nil {
		return err
	}
	if err := c.clearFinalizers(ctx, []schema.GroupVersionResource{{Version: "v1", Resource: "pods"}, {Version: "v1", Resource: "nodes"}}); err != nil {
		return err
	}
	classes, err := c.opts.Client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, pc := range classes.Items {
		if !SystemPriorityClass(pc.Name) {
			if err := c.opts.Client.SchedulingV1().PriorityClasses().Delete(ctx, pc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	c.opts.Observer.Observe(event.Event{Time: time.Now(), Kind: event.KindReset})
	return nil
}

// deleteAll deletes every object of each kind, in the namespaces given
// (nil: a cluster-scoped kind), then clears the finalizers of what stays.
// Without a metadata client (tests of the HTTP side) it does nothing.
func (c *Cluster) deleteAll(ctx context.Context, kinds []schema.GroupVersionResource, namespaces []string) error {
	if c.opts.Metadata == nil {
		return nil
	}
	for _, gvr := range kinds {
		res := c.opts.Metadata.Resource(gvr)
		if namespaces == nil {
			if err := res.DeleteCollection(ctx, deleteNow, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting the %s: %w", gvr.Resource, err)
			}
		}
		for _, ns := range namespaces {
			if err := res.Namespace(ns).DeleteCollection(ctx, deleteNow, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting the %s of namespace %s: %w", gvr.Resource, ns, err)
			}
		}
	}
	return c.clearFinalizers(ctx, kinds)
}

// clearFinalizers removes the finalizers of every object of these kinds
// that a deletion left waiting on them: with the controllers paused (or
// never run) nothing else would.
func (c *Cluster) clearFinalizers(ctx context.Context, kinds []schema.GroupVersionResource) error {
	if c.opts.Metadata == nil {
		return nil
	}
	noFinalizers := []byte(`{"metadata":{"finalizers":null}}`)
	for _, gvr := range kinds {
		res := c.opts.Metadata.Resource(gvr)
		list, err := res.List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("listing the %s left: %w", gvr.Resource, err)
		}
		for _, obj := range list.Items {
			if obj.DeletionTimestamp == nil || len(obj.Finalizers) == 0 {
				continue
			}
			_, err := res.Namespace(obj.Namespace).Patch(ctx, obj.Name, types.MergePatchType, noFinalizers, metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("clearing the finalizers of %s %s: %w", gvr.Resource, obj.Name, err)
			}
		}
	}
	return nil
}
