package scenario

// The steps that change the cluster: create, update and delete, and the
// wait for the scheduler to have seen what they wrote.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"minisched/cluster"
)

func (u *run) create(ctx context.Context, i int, c *Create) error {
	count := max(c.Count, 1)
	var written []written
	defer func() { u.awaitWatches(ctx, written) }()
	for j := 1; j <= count; j++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		obj, err := decodeObject(c.Manifest, j)
		if err != nil {
			return err
		}
		switch o := obj.(type) {
		case *v1.Node:
			var node *v1.Node
			if node, err = u.r.env.Cluster.CreateNode(ctx, o); err == nil {
				written = append(written, wrote("Node", node))
			}
		case *v1.Pod:
			var pod *v1.Pod
			if pod, err = u.createPod(ctx, o); err == nil {
				written = append(written, wrote("Pod", pod))
			}
		case *schedulingv1.PriorityClass:
			_, err = u.r.env.Cluster.CreatePriorityClass(ctx, o)
		default:
			kind, _ := describe(obj)
			u.r.env.Cluster.Own(obj)
			err = resources[kind].create(ctx, u.r.env.Client, obj, metav1.CreateOptions{})
		}
		if err != nil {
			kind, name := describe(obj)
			return fmt.Errorf("creating %s %s: %w", kind, name, err)
		}
		if count >= 100 && j%100 == 0 {
			u.r.progress(u.id, u.sc, i+1, "running", fmt.Sprintf("created %d of %d", j, count))
		}
	}
	return nil
}

// createPod creates a pod, waiting while the apiserver's admission has not
// yet seen a PriorityClass an earlier step created (validation made sure
// the class exists or is created first).
func (u *run) createPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	var created *v1.Pod
	err := cluster.WaitForClass(ctx, func() error {
		var err error
		created, err = u.r.env.Cluster.CreatePod(ctx, pod.DeepCopy())
		return err
	})
	return created, err
}

// written names a node or pod a step wrote, and the resourceVersion the
// write gave it ("" for a delete).
type written struct {
	kind, namespace, name, resourceVersion string
}

func wrote(kind string, obj metav1.Object) written {
	return written{kind, obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion()}
}

// awaitWatches waits (up to 10s) until the scheduler's informers, and the
// cluster's watch that tells the dashboards, have handled every write of a
// step, so that the next step never races them: a lesson replays the same
// way every time, and its recording holds each step's objects before the
// next step is told.
func (u *run) awaitWatches(ctx context.Context, writes []written) {
	deadline := time.Now().Add(10 * time.Second)
	for _, w := range writes {
		for ctx.Err() == nil && time.Now().Before(deadline) {
			if s := u.r.env.Scheduler.Scheduler(); s != nil && s.Seen(w.kind, w.namespace, w.name, w.resourceVersion) &&
				u.r.env.Cluster.Seen(w.kind, w.namespace, w.name, w.resourceVersion) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (u *run) update(ctx context.Context, up *Update) error {
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(up.Patch, &patch); err != nil {
		return err
	}
	status, hasStatus := patch["status"]
	delete(patch, "status")
	rest, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	c := u.r.env.Client.CoreV1()
	ns, name := "", up.Name
	if namespacedKind(up.Kind) {
		ns, name, _ = strings.Cut(podKey(up.Name), "/")
	}
	var last metav1.Object
	patchOne := func(body []byte, subresources ...string) (err error) {
		switch up.Kind {
		case "Node":
			last, err = c.Nodes().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, subresources...)
		case "Pod":
			last, err = c.Pods(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, subresources...)
		case "PriorityClass":
			if len(subresources) > 0 {
				return errors.New("a PriorityClass has no status")
			}
			_, err = u.r.env.Client.SchedulingV1().PriorityClasses().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		default:
			if len(subresources) > 0 {
				return fmt.Errorf("the status of a %s is what its controllers write", up.Kind)
			}
			err = resources[up.Kind].patch(ctx, u.r.env.Client, ns, name, body)
		}
		return err
	}
	if len(patch) > 0 {
		if err := patchOne(rest); err != nil {
			return fmt.Errorf("patching %s %s: %w", up.Kind, up.Name, err)
		}
	}
	if hasStatus {
		body, _ := json.Marshal(map[string]json.RawMessage{"status": status})
		if err := patchOne(body, "status"); err != nil {
			return fmt.Errorf("patching the status of %s %s: %w", up.Kind, up.Name, err)
		}
	}
	if last != nil {
		u.awaitWatches(ctx, []written{wrote(up.Kind, last)})
	}
	return nil
}

func (u *run) delete(ctx context.Context, d *Delete) error {
	zero := int64(0)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	var gone []written
	defer func() { u.awaitWatches(ctx, gone) }()
	for j := 1; j <= max(d.Count, 1); j++ {
		name := d.Name
		if d.Count > 0 {
			name = expand(d.Name, j)
		}
		var err error
		switch d.Kind {
		case "Node":
			err = u.r.env.Client.CoreV1().Nodes().Delete(ctx, name, opts)
			gone = append(gone, written{kind: d.Kind, name: name})
		case "Pod":
			ns, n, _ := strings.Cut(podKey(name), "/")
			err = u.r.env.Client.CoreV1().Pods(ns).Delete(ctx, n, opts)
			gone = append(gone, written{kind: d.Kind, namespace: ns, name: n})
		case "PriorityClass":
			err = u.r.env.Client.SchedulingV1().PriorityClasses().Delete(ctx, name, opts)
		default:
			ns, n := "", name
			if namespacedKind(d.Kind) {
				ns, n, _ = strings.Cut(podKey(name), "/")
			}
			err = resources[d.Kind].delete(ctx, u.r.env.Client, ns, n)
		}
		if err != nil {
			return fmt.Errorf("deleting %s %s: %w", d.Kind, name, err)
		}
	}
	return nil
}
