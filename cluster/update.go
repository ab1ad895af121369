package cluster

import (
	"context"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"minisched/devices"
	"minisched/kubelet"
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
	// Kubelet says what the node's simulated kubelet does: Ready,
	// NotReady (it reports Ready=False) or Stopped (it stops reporting, as
	// a node cut off); it sets the node's kubelet.StateAnnotation.
	Kubelet string `json:"kubelet,omitempty"`
	// Devices is how many devices the built-in DRA driver publishes for
	// the node (0 to devices.MaxDevices, 0 for none); it sets the node's
	// devices.CountAnnotation.
	Devices *int `json:"devices,omitempty"`
}

// InvalidChangeError refuses a change that names no valid value.
type InvalidChangeError struct{ msg string }

func (e *InvalidChangeError) Error() string { return e.msg }

// UpdateNode applies change to the node, trying again if someone else
// changed it meanwhile. On a cluster minisched shares it changes only nodes
// it created.
func (c *Cluster) UpdateNode(ctx context.Context, name string, change NodeChange) (*v1.Node, error) {
	switch change.Kubelet {
	case "", kubelet.StateReady, kubelet.StateNotReady, kubelet.StateStopped:
	default:
		return nil, &InvalidChangeError{fmt.Sprintf("kubelet %q: want %s, %s or %s", change.Kubelet, kubelet.StateReady, kubelet.StateNotReady, kubelet.StateStopped)}
	}
	if d := change.Devices; d != nil && (*d < 0 || *d > devices.MaxDevices) {
		return nil, &InvalidChangeError{fmt.Sprintf("devices %d: want 0 to %d", *d, devices.MaxDevices)}
	}
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
		if change.Unschedulable != nil || change.Labels != nil || change.Taints != nil || change.Kubelet != "" || change.Devices != nil {
			before := MetaBytes(node)
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
			switch change.Kubelet {
			case "":
			case kubelet.StateReady:
				delete(node.Annotations, kubelet.StateAnnotation)
			default:
				annotate(node, kubelet.StateAnnotation, change.Kubelet)
			}
			switch d := change.Devices; {
			case d == nil:
			case *d == 0:
				delete(node.Annotations, devices.CountAnnotation)
			default:
				annotate(node, devices.CountAnnotation, strconv.Itoa(*d))
			}
			if err := c.checkSize("node "+name, node, before); err != nil {
				return err
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

func annotate(node *v1.Node, key, value string) {
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[key] = value
}
