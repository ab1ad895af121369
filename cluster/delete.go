package cluster

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NotOwnedError refuses to delete, on a cluster minisched shares, an object
// it did not create.
type NotOwnedError struct{ msg string }

func (e *NotOwnedError) Error() string { return e.msg }

// The Delete methods return the object when it stays after the delete,
// with its deletionTimestamp, waiting on finalizers (the apiserver answers
// so too), and nil when it is gone.

// DeleteNode deletes a node.
func (c *Cluster) DeleteNode(ctx context.Context, name string) (metav1.Object, error) {
	return remove(ctx, c, "node", name, c.opts.Client.CoreV1().Nodes(), metav1.DeleteOptions{})
}

// DeletePod deletes a pod at once, as deleteNow says.
func (c *Cluster) DeletePod(ctx context.Context, namespace, name string) (metav1.Object, error) {
	return remove(ctx, c, "pod", name, c.opts.Client.CoreV1().Pods(namespace), deleteNow)
}

// DeletePriorityClass deletes a PriorityClass.
func (c *Cluster) DeletePriorityClass(ctx context.Context, name string) (metav1.Object, error) {
	return remove(ctx, c, "PriorityClass", name, c.opts.Client.SchedulingV1().PriorityClasses(), metav1.DeleteOptions{})
}

// getDeleter is the part of a typed client remove needs.
type getDeleter[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// remove deletes one object; on a shared cluster only one that minisched
// labelled.
func remove[T metav1.Object](ctx context.Context, c *Cluster, kind, name string, client getDeleter[T], opts metav1.DeleteOptions) (metav1.Object, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if c.opts.Writes == WritesOwned {
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if obj.GetLabels()[OwnerLabel] == "" {
			return nil, &NotOwnedError{fmt.Sprintf("%s %s was not created by minisched (no %s label): minisched deletes only its own objects on a real cluster", kind, name, OwnerLabel)}
		}
	}
	if err := client.Delete(ctx, name, opts); err != nil {
		return nil, err
	}
	// The typed client drops the apiserver's answer; a read tells whether
	// the object waits on finalizers.
	obj, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil || obj.GetDeletionTimestamp() == nil {
		return nil, nil
	}
	return obj, nil
}
