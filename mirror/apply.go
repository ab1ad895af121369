package mirror

// Each kind's worker step: read the source object from the informer's
// cache, and make the copy match it (create, update or delete).

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"minisched/cluster"
)

// node makes the copy's node match the source's, in what the scheduler
// reads; it writes only what differs.
func (m *Mirror) node(ctx context.Context, name string) error {
	nodes := m.opts.Copy.CoreV1().Nodes()
	src, err := m.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return ignoreNotFound(nodes.Delete(ctx, name, metav1.DeleteOptions{}))
	}
	if err != nil {
		return err
	}
	cached, err := m.copyNodes.Get(name)
	if apierrors.IsNotFound(err) {
		if err := room(&m.copyNodeCount, m.opts.MaxNodes, "nodes"); err != nil {
			return err
		}
		// The apiserver keeps a node's status on create.
		_, err := nodes.Create(ctx, &v1.Node{ObjectMeta: meta(src.ObjectMeta), Spec: nodeSpec(src), Status: nodeStatus(src)}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	cur := cached.DeepCopy()
	if !equality.Semantic.DeepEqual(cur.Labels, src.Labels) || !equality.Semantic.DeepEqual(cur.Annotations, src.Annotations) ||
		!equality.Semantic.DeepEqual(nodeSpec(cur), nodeSpec(src)) {
		cur.Labels, cur.Annotations = src.Labels, src.Annotations
		cur.Spec.Taints, cur.Spec.Unschedulable = src.Spec.Taints, src.Spec.Unschedulable
		if cur, err = nodes.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if !equality.Semantic.DeepEqual(nodeStatus(cur), nodeStatus(src)) {
		cur.Status.Capacity, cur.Status.Allocatable, cur.Status.Conditions, cur.Status.Images =
			src.Status.Capacity, src.Status.Allocatable, src.Status.Conditions, src.Status.Images
		_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	}
	return err
}

// nodeSpec is what of a node's spec the copy keeps: taints and cordon;
// the rest (podCIDR, providerID) belongs to the source's machines.
func nodeSpec(n *v1.Node) v1.NodeSpec {
	return v1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable}
}

// nodeStatus is what the scheduler reads of a node's status.
func nodeStatus(n *v1.Node) v1.NodeStatus {
	return v1.NodeStatus{Capacity: n.Status.Capacity, Allocatable: n.Status.Allocatable, Conditions: n.Status.Conditions, Images: n.Status.Images}
}

// pod makes the copy's pod follow the source's: created when the source
// has it (unbound if the source showed it pending), deleted when the
// source has not, annotated with the real node once the source binds it.
func (m *Mirror) pod(ctx context.Context, name string) error {
	namespace, podName, err := cache.SplitMetaNamespaceKey(name)
	if err != nil {
		return err
	}
	pods := m.opts.Copy.CoreV1().Pods(namespace)
	src, err := m.sourcePod(namespace, podName)
	if err != nil {
		return err
	}
	cur, err := m.copyPods.Pods(namespace).Get(podName)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	if exists && (src == nil || src.DeletionTimestamp != nil || otherPod(cur, src)) {
		zero := int64(0)
		if err := ignoreNotFound(pods.Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &cur.UID}})); err != nil {
			return err
		}
		exists = false
	}
	if src == nil || src.DeletionTimestamp != nil {
		m.mu.Lock()
		delete(m.pendingSeen, name)
		m.mu.Unlock()
		return nil
	}
	if exists {
		// A pod copied bound at the start sits on the real node already:
		// there is nothing to compare, and nothing to write.
		copiedBound := cur.Annotations[sourceUIDAnnotation] == "" && cur.Annotations[RealNodeAnnotation] == "" && cur.Spec.NodeName == src.Spec.NodeName
		if real := src.Spec.NodeName; real != "" && cur.Annotations[RealNodeAnnotation] != real && !copiedBound {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, RealNodeAnnotation, real)
			_, err := pods.Patch(ctx, podName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		}
		return nil
	}
	if err := room(&m.copyPodCount, m.opts.MaxPods, "pods"); err != nil {
		return err
	}
	if err := m.namespace(ctx, namespace); err != nil {
		return err
	}
	m.mu.Lock()
	unbound := m.pendingSeen[name]
	m.mu.Unlock()
	_, err = pods.Create(ctx, copyPod(src, unbound), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return errors.New("created meanwhile: trying again")
	}
	return err
}

// sourcePod returns the source's pod, nil when it has none (or the
// selector no longer picks it).
func (m *Mirror) sourcePod(namespace, name string) (*v1.Pod, error) {
	for _, l := range m.pods {
		p, err := l.Pods(namespace).Get(name)
		if err == nil && m.selector.Matches(labels.Set(p.Labels)) {
			return p, nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, nil
}

// otherPod says whether the copy's pod stands for another source pod than
// src (one deleted and created again under its name).
func otherPod(cur, src *v1.Pod) bool {
	uid, ok := cur.Annotations[sourceUIDAnnotation]
	return ok && uid != string(src.UID)
}

// copyPod is the pod the copy gets for src: its spec (without the node
// when unbound), labels and annotations, and which pod it stands for.
func copyPod(src *v1.Pod, unbound bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: meta(src.ObjectMeta), Spec: *src.Spec.DeepCopy()}
	p.Annotations = map[string]string{}
	for k, v := range src.Annotations {
		p.Annotations[k] = v
	}
	p.Annotations[sourceUIDAnnotation] = string(src.UID)
	if src.Spec.NodeName != "" {
		p.Annotations[RealNodeAnnotation] = src.Spec.NodeName
	}
	if unbound {
		p.Spec.NodeName = ""
	}
	// Admission works these out from the PriorityClass again, and refuses
	// a pod that states other values; ephemeral containers cannot be set
	// on create.
	p.Spec.Priority, p.Spec.PreemptionPolicy, p.Spec.EphemeralContainers = nil, nil, nil
	return p
}

// namespace creates a namespace of the source in the copy, once.
func (m *Mirror) namespace(ctx context.Context, name string) error {
	_, err := m.opts.Copy.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// priorityClass makes the copy's PriorityClass match the source's; the
// system's own are every cluster's and left alone.
func (m *Mirror) priorityClass(ctx context.Context, name string) error {
	if cluster.SystemPriorityClass(name) {
		return nil
	}
	classes := m.opts.Copy.SchedulingV1().PriorityClasses()
	src, err := m.classes.Get(name)
	if apierrors.IsNotFound(err) {
		return ignoreNotFound(classes.Delete(ctx, name, metav1.DeleteOptions{}))
	}
	if err != nil {
		return err
	}
	cur, err := m.copyClasses.Get(name)
	if apierrors.IsNotFound(err) {
		_, err = classes.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: meta(src.ObjectMeta), Value: src.Value, GlobalDefault: src.GlobalDefault,
			Description: src.Description, PreemptionPolicy: src.PreemptionPolicy}, metav1.CreateOptions{})
		return err
	}
	if err != nil || cur.Value == src.Value {
		return err
	}
	// The value cannot change: the class is made again.
	if err := ignoreNotFound(classes.Delete(ctx, name, metav1.DeleteOptions{})); err != nil {
		return err
	}
	return errors.New("value changed: made again")
}

// meta keeps what a person sets; the source's uids and versions mean
// nothing in the copy.
func meta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations}
}
