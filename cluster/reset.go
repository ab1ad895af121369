package cluster

import (
	"context"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/minisched/event"
)

// SystemPriorityClass says whether a PriorityClass is the system's own,
// which Reset keeps.
func SystemPriorityClass(name string) bool { return strings.HasPrefix(name, "system-") }

// Reset deletes every pod and node, and the PriorityClasses people made (the
// system's stay), then reports a reset event: the history starts again
// from it, and the dashboards take a fresh snapshot.
func (c *Cluster) Reset(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c.resetMu.Lock()
	hooks := c.onReset
	c.resetMu.Unlock()
	for _, f := range hooks {
		f()
	}
	core := c.opts.Client.CoreV1()
	namespaces, err := core.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ns := range namespaces.Items {
		if err := core.Pods(ns.Name).DeleteCollection(ctx, deleteNow, metav1.ListOptions{}); err != nil {
			return err
		}
	}
	if err := core.Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
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
