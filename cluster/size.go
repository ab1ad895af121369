package cluster

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What one node or pod may carry of what minisched keeps of it (its
// summary holds the labels and taints; every event about it repeats
// them), in bytes, each well below the apiserver's own limits (256 KiB of
// annotations; 1.5 MiB an object in etcd). A node of 60,000 labels is
// valid to the apiserver and costs minisched tens of megabytes.
const (
	// MaxLabelBytes bounds an object's labels, keys and values together.
	MaxLabelBytes = 16 << 10
	// MaxAnnotationBytes bounds an object's annotations.
	MaxAnnotationBytes = 64 << 10
	// MaxTaintBytes bounds a node's taints, keys, values and effects.
	MaxTaintBytes = 16 << 10
	// MaxPodSpecBytes bounds a pod's spec, encoded (a 10,000-container
	// pod fits), whatever body limit brought it.
	MaxPodSpecBytes = 1 << 20
	// DefaultMaxMetaBytes bounds the labels, annotations and taints of
	// all nodes and pods together.
	DefaultMaxMetaBytes = 256 << 20
)

// TooLargeError refuses an object that carries more than the bounds
// above, or would take the cluster's total past its bound.
type TooLargeError struct{ msg string }

func (e *TooLargeError) Error() string { return e.msg }

// CheckSize refuses a node, a pod or a workload's pod template beyond the
// per-object bounds, saying which part and by how much. Other kinds pass.
func CheckSize(obj any) error {
	switch o := obj.(type) {
	case *v1.Node:
		if err := checkMeta("node "+o.Name, &o.ObjectMeta); err != nil {
			return err
		}
		return over("node "+o.Name, "taints", taintBytes(o.Spec.Taints), MaxTaintBytes)
	case *v1.Pod:
		return checkPod("pod "+o.Name, &o.ObjectMeta, &o.Spec)
	case *appsv1.Deployment:
		return checkTemplate("Deployment "+o.Name, &o.ObjectMeta, &o.Spec.Template)
	case *appsv1.DaemonSet:
		return checkTemplate("DaemonSet "+o.Name, &o.ObjectMeta, &o.Spec.Template)
	case *appsv1.StatefulSet:
		return checkTemplate("StatefulSet "+o.Name, &o.ObjectMeta, &o.Spec.Template)
	case *appsv1.ReplicaSet:
		return checkTemplate("ReplicaSet "+o.Name, &o.ObjectMeta, &o.Spec.Template)
	}
	return nil
}

func checkTemplate(what string, m *metav1.ObjectMeta, t *v1.PodTemplateSpec) error {
	if err := checkMeta(what, m); err != nil {
		return err
	}
	return checkPod(what+"'s pod template", &t.ObjectMeta, &t.Spec)
}

func checkPod(what string, m *metav1.ObjectMeta, spec *v1.PodSpec) error {
	if err := checkMeta(what, m); err != nil {
		return err
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("encoding the spec of %s: %w", what, err)
	}
	return over(what, "spec", int64(len(data)), MaxPodSpecBytes)
}

func checkMeta(what string, m *metav1.ObjectMeta) error {
	if err := over(what, "labels", mapBytes(m.Labels), MaxLabelBytes); err != nil {
		return err
	}
	return over(what, "annotations", mapBytes(m.Annotations), MaxAnnotationBytes)
}

func over(what, part string, n, limit int64) error {
	if n > limit {
		return &TooLargeError{fmt.Sprintf("%s: %s of %d bytes, over minisched's limit of %d", what, part, n, limit)}
	}
	return nil
}

// MaxMetaBytes is the bound of the labels, annotations and taints of all
// nodes and pods together.
func (c *Cluster) MaxMetaBytes() int64 { return c.opts.MaxMetaBytes }

// MetaBytes is what a node or a pod counts against the cluster's total:
// its labels, annotations and taints.
func MetaBytes(obj any) int64 {
	switch o := obj.(type) {
	case *v1.Node:
		return mapBytes(o.Labels) + mapBytes(o.Annotations) + taintBytes(o.Spec.Taints)
	case *v1.Pod:
		return mapBytes(o.Labels) + mapBytes(o.Annotations)
	}
	return 0
}

func mapBytes(m map[string]string) int64 {
	var n int64
	for k, v := range m {
		n += int64(len(k) + len(v))
	}
	return n
}

func taintBytes(taints []v1.Taint) int64 {
	var n int64
	for _, t := range taints {
		n += int64(len(t.Key) + len(t.Value) + len(t.Effect))
	}
	return n
}

// checkSize refuses an object beyond the per-object bounds, or one that
// would take the total of labels, annotations and taints past the
// cluster's bound; replaced is what the object counted before a change.
func (c *Cluster) checkSize(what string, obj any, replaced int64) error {
	if err := CheckSize(obj); err != nil {
		return err
	}
	have, n := c.metaBytes.Load(), MetaBytes(obj)-replaced
	if n > 0 && have+n > c.opts.MaxMetaBytes {
		return &TooLargeError{fmt.Sprintf("%s would take the labels, annotations and taints of the cluster's nodes and pods to %d bytes, over the limit of %d: delete some first", what, have+n, c.opts.MaxMetaBytes)}
	}
	return nil
}
