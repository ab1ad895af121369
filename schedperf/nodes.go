package schedperf

// createNodes, as upstream's node preparer runs it (node_util.go's
// PrepareNodes): the nodes made from the template, each with the hostname
// label and, when only a generateName is given, a name of its own tried up
// to five times; then the op's strategy applied to the nodes at the list
// positions this op's nodes would take, in the apiserver's (name) order,
// which are this op's nodes only when their names sort after the others'.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
)

func (e *executor) createNodes(ctx context.Context, index int, o *createNodesOp) error {
	nodes := make([]*v1.Node, 0, o.Count)
	for i := range o.Count {
		node := baseNode(fmt.Sprintf("node-%d-", index))
		if o.NodeTemplatePath != nil {
			node = &v1.Node{}
			env := maps.Clone(o.TemplateParams)
			if env == nil {
				env = map[string]any{}
			}
			env["Index"], env["Count"] = i, o.Count
			if err := render(e.tc.File(*o.NodeTemplatePath), env, node); err != nil {
				return err
			}
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		nodes = append(nodes, node)
	}
	first := e.nodes
	e.nodes += o.Count
	if err := parallel(ctx, len(nodes), func(i int) error {
		node := nodes[i]
		// Upstream names the node itself, to give it the hostname label
		// in the same request, and tries another name if one is taken.
		named := node.Name != ""
		for try := 1; ; try++ {
			if !named {
				node.Name = node.GenerateName + utilrand.String(5)
			}
			node.Labels[v1.LabelHostname] = node.Name
			_, err := e.o.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
			if err == nil {
				return nil
			}
			if named || !apierrors.IsAlreadyExists(err) || try == 5 {
				return err
			}
		}
	}); err != nil {
		return err
	}
	if o.NodeAllocatableStrategy == nil && o.LabelNodePrepareStrategy == nil && o.UniqueNodeLabelStrategy == nil {
		return nil
	}
	list, err := e.o.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	if len(list.Items) < first+o.Count {
		return fmt.Errorf("%d nodes listed, want at least %d", len(list.Items), first+o.Count)
	}
	targets := list.Items[first : first+o.Count]
	return parallel(ctx, len(targets), func(i int) error {
		return e.prepareNode(ctx, o, targets[i].Name, i)
	})
}

// prepareNode applies the op's strategy to one node, the i-th it prepares.
// NodeAllocatableStrategy's patch of the node's allocatable is not sent:
// upstream sends it to the node, not to its status, and the apiserver
// drops a change of status there, so only its CSINode counts.
func (e *executor) prepareNode(ctx context.Context, o *createNodesOp, node string, i int) error {
	var labels map[string]string
	switch {
	case o.LabelNodePrepareStrategy != nil:
		s := o.LabelNodePrepareStrategy
		if len(s.LabelValues) == 0 {
			return fmt.Errorf("labelNodePrepareStrategy: no labelValues")
		}
		labels = map[string]string{s.LabelKey: s.LabelValues[i%len(s.LabelValues)]}
	case o.UniqueNodeLabelStrategy != nil:
		labels = map[string]string{o.UniqueNodeLabelStrategy.LabelKey: string(uuid.NewUUID())}
	case o.NodeAllocatableStrategy != nil:
		return e.prepareCSINode(ctx, node, o.NodeAllocatableStrategy)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	if _, err := e.o.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("labelling node %s: %w", node, err)
	}
	return nil
}

// prepareCSINode gives a node the strategy's CSI limits: a CSINode made
// with them, or the one it has updated, with the migrated-plugins
// annotation.
func (e *executor) prepareCSINode(ctx context.Context, node string, s *nodeAllocatableStrategy) error {
	csiNodes := e.o.Client.StorageV1().CSINodes()
	c, err := csiNodes.Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c = &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{}}}
	} else if err != nil {
		return fmt.Errorf("reading the CSINode of %s: %w", node, err)
	}
	for driver, allocatable := range s.CsiNodeAllocatable {
		i := slices.IndexFunc(c.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == driver })
		if i < 0 {
			// A new CSINode names the node as the driver's; upstream's
			// update of one adds the driver without.
			d := storagev1.CSINodeDriver{Name: driver}
			if c.ResourceVersion == "" {
				d.NodeID = node
			}
			c.Spec.Drivers, i = append(c.Spec.Drivers, d), len(c.Spec.Drivers)
		}
		c.Spec.Drivers[i].Allocatable = allocatable
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[v1.MigratedPluginsAnnotationKey] = strings.Join(s.MigratedPlugins, ",")
	if c.ResourceVersion == "" {
		_, err = csiNodes.Create(ctx, c, metav1.CreateOptions{})
	} else {
		_, err = csiNodes.Update(ctx, c, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing the CSINode of %s: %w", node, err)
	}
	return nil
}
