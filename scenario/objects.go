package scenario

// A create step's objects: decoded, named, and dry-run against the
// apiserver before the scenario starts.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"minisched/cluster"
	"minisched/manifest"
)

// validateCreate decodes the first and last objects of a create step and
// has the apiserver dry-run them, then records every name it will create.
func (r *Runner) validateCreate(ctx context.Context, path string, c *Create, l Limits, known map[string]map[string]bool) (int, error) {
	if err := checkCount(path+".count", c.Count, l); err != nil {
		return 0, err
	}
	if len(c.Manifest) == 0 {
		return 0, errorf(path+".manifest", "a create step needs a manifest")
	}
	count := max(c.Count, 1)
	for i := 1; i <= count; i++ {
		obj, err := decodeObject(c.Manifest, i)
		if err != nil {
			return 0, errorf(path+".manifest", "%v", err)
		}
		kind, name := describe(obj)
		if i == 1 || i == count {
			if err := cluster.CheckSize(obj); err != nil {
				return 0, errorf(path+".manifest", "%v", err)
			}
			if err := r.env.Cluster.CheckWrite(obj); err != nil {
				return 0, errorf(path+".manifest", "%v", err)
			}
			if err := r.dryRun(ctx, withoutPendingClass(obj, known), known); err != nil {
				return 0, errorf(path+".manifest", "%v", err)
			}
		}
		known[kind][name] = true
	}
	return count, nil
}

// decodeObject expands "{{i}}" and decodes an object of one of the kinds.
func decodeObject(raw json.RawMessage, i int) (object, error) {
	text := expand(string(raw), i)
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(text), &head); err != nil {
		return nil, err
	}
	var obj object
	switch head.Kind {
	case "Node":
		obj = &v1.Node{}
	case "Pod":
		obj = &v1.Pod{}
	case "PriorityClass":
		obj = &schedulingv1.PriorityClass{}
	default:
		r, ok := resources[head.Kind]
		if !ok {
			return nil, fmt.Errorf("kind %q: a scenario creates %s", head.Kind, strings.Join(kinds, ", "))
		}
		obj = r.new()
	}
	if err := manifest.Decode([]byte(text), "application/json", obj); err != nil {
		return nil, err
	}
	if namespacedKind(head.Kind) && obj.GetNamespace() == "" {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	return obj, nil
}

// describe names obj's kind, and its name as steps write it (namespace/name
// for a namespaced kind).
func describe(obj object) (kind, name string) {
	if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil {
		kind = gvks[0].Kind
	}
	if namespacedKind(kind) {
		return kind, obj.GetNamespace() + "/" + obj.GetName()
	}
	return kind, obj.GetName()
}

// withoutPendingClass drops a priority class that an earlier step creates:
// it does not exist yet, and the dry run would refuse the pod for that.
func withoutPendingClass(obj object, known map[string]map[string]bool) object {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.PriorityClassName == "" || !known["PriorityClass"][pod.Spec.PriorityClassName] {
		return obj
	}
	pod = pod.DeepCopy()
	pod.Spec.PriorityClassName, pod.Spec.Priority = "", nil
	return pod
}

// dryRun asks the apiserver whether it would accept obj. An object of a
// namespace an earlier step creates is tried in the default namespace, as
// its own does not exist yet.
func (r *Runner) dryRun(ctx context.Context, obj object, known map[string]map[string]bool) error {
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	obj = obj.DeepCopyObject().(object)
	if ns := obj.GetNamespace(); ns != "" && known["Namespace"][ns] {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	var err error
	switch o := obj.(type) {
	case *v1.Node:
		_, err = r.env.Client.CoreV1().Nodes().Create(ctx, o, opts)
	case *v1.Pod:
		_, err = r.env.Client.CoreV1().Pods(o.Namespace).Create(ctx, o, opts)
	case *schedulingv1.PriorityClass:
		_, err = r.env.Client.SchedulingV1().PriorityClasses().Create(ctx, o, opts)
	default:
		kind, _ := describe(obj)
		err = resources[kind].create(ctx, r.env.Client, obj, opts)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil // an earlier step may delete it first
	}
	return err
}
