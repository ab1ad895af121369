package cluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// CreateDeployment creates a Deployment, in the default namespace unless it
// names one; the embedded cluster's controllers then make its pods. Its
// replicas must fit under the pod limit, as pods made one by one must.
func (c *Cluster) CreateDeployment(ctx context.Context, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	if err := c.roomForPods(int64(ptr.Deref(d.Spec.Replicas, 1)), "Deployment "+d.Name); err != nil {
		return nil, err
	}
	if err := CheckSize(d); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	defaultNamespace(d)
	c.Own(d)
	if err := c.CheckWrite(d); err != nil {
		return nil, err
	}
	return c.opts.Client.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
}

// CreateDaemonSet creates a DaemonSet, in the default namespace unless it
// names one: a pod per node, which must fit under the pod limit.
func (c *Cluster) CreateDaemonSet(ctx context.Context, ds *appsv1.DaemonSet) (*appsv1.DaemonSet, error) {
	if err := c.roomForPods(c.nodeCount.Load(), "DaemonSet "+ds.Name); err != nil {
		return nil, err
	}
	if err := CheckSize(ds); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	defaultNamespace(ds)
	c.Own(ds)
	if err := c.CheckWrite(ds); err != nil {
		return nil, err
	}
	return c.opts.Client.AppsV1().DaemonSets(ds.Namespace).Create(ctx, ds, metav1.CreateOptions{})
}

// DeleteDeployment deletes a Deployment; the garbage collector takes its
// ReplicaSets and pods.
func (c *Cluster) DeleteDeployment(ctx context.Context, namespace, name string) (metav1.Object, error) {
	return remove(ctx, c, "Deployment", name, c.opts.Client.AppsV1().Deployments(namespace), metav1.DeleteOptions{})
}

// DeleteDaemonSet deletes a DaemonSet and, through the garbage collector,
// its pods.
func (c *Cluster) DeleteDaemonSet(ctx context.Context, namespace, name string) (metav1.Object, error) {
	return remove(ctx, c, "DaemonSet", name, c.opts.Client.AppsV1().DaemonSets(namespace), metav1.DeleteOptions{})
}

// roomForPods refuses a workload whose pods would pass the pod limit.
func (c *Cluster) roomForPods(n int64, what string) error {
	if have := c.podCount.Load(); have+n > int64(c.opts.MaxPods) {
		return &LimitError{fmt.Sprintf("%s would make %d pods; the cluster holds %d of at most %d (--max-pods): delete some first", what, n, have, c.opts.MaxPods)}
	}
	return nil
}

func defaultNamespace(obj metav1.Object) {
	if obj.GetNamespace() == "" {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
}
