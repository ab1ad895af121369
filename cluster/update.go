package cluster

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// NodeChange is what may be changed of a node where the dashboard shows it:
// each field set replaces that part of the node.
type NodeChange struct {
	// Unschedulable cordons (true) or uncordons (false) the node.
	Unschedulable *bool             `json:"unschedulable,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Taints        *[]v1.Taint       `json:"taints,omitempty"`
	// Allocatable replaces the resources the node offers; its capacity
	// follows where it would fall below.
	Allocatable v1.ResourceList `json:"allocatable,omitempty"`
}

// UpdateNode applies change to the node, trying again if someone else
// changed it meanwhile. On a cluster minisched shares it changes only nodes
// it created.
func (c *Cluster) UpdateNode(ctx context.Context, name string, change NodeChange) (*v1.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	nodes := c.opts.Client.CoreV1().Nodes()
	var updated *v1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.opts.Writes == WritesOwned && node.Labels[OwnerLabel] == "" {
			return &NotOwnedError{fmt.Sprintf("node %s was not created by minisched (no %s label): minisched changes only its own nodes on a real cluster", name, OwnerLabel)}
		}
		if change.Unschedulable != nil || change.Labels != nil || change.Taints != nil {
			if change.Unschedulable != nil {
				node.Spec.Unschedulable = *change.Unschedulable
			}
			if change.Labels != nil {
				if owner, ok := node.Labels[OwnerLabel]; ok {
					change.Labels[OwnerLabel] = owner // the mark stays
				}
				node.Labels = change.Labels
			}
			if change.Taints != nil {
				node.Spec.Taints = *change.Taints
			}
			if node, err = nodes.Update(ctx, node, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		if change.Allocatable != nil {
			node.Status.Allocatable = change.Allocatable.DeepCopy()
			if node.Status.Capacity == nil {
				node.Status.Capacity = v1.ResourceList{}
			}
			for res, q := range change.Allocatable {
				if capacity, ok := node.Status.Capacity[res]; !ok || capacity.Cmp(q) < 0 {
					node.Status.Capacity[res] = q.DeepCopy()
				}
			}
			if node, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		updated = node
		return nil
	})
	return updated, err
}
