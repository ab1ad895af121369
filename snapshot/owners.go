package snapshot

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// owner names a controller in a namespace.
type owner struct{ kind, namespace, name string }

func controllerOf(obj metav1.Object) (owner, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return owner{}, false
	}
	return owner{ref.Kind, obj.GetNamespace(), ref.Name}, true
}

// wholeOwners keeps the workloads whose pods the document holds exactly:
// as many as they want, none being deleted. Loaded while the copy's
// controllers are paused, these find, when they start, every pod they own
// (they adopt them by their selector: owner references, which name the
// source's uids, are not copied) and nothing to create or delete. A
// workload the copy holds only part of (pods filtered out, a rollout or
// a scale under way) is left out, and its pods stay pods of their own,
// which no controller acts on, as copies always were. Jobs and CronJobs
// are left out: their pods' history (completions, the tracking finalizer)
// does not survive the copy.
func (d *Document) wholeOwners() {
	pods := map[owner]int{}
	deleting := map[owner]bool{}
	for i := range d.Pods {
		if o, ok := controllerOf(&d.Pods[i]); ok {
			pods[o]++
			if d.Pods[i].DeletionTimestamp != nil {
				deleting[o] = true
			}
		}
	}
	whole := func(o owner, want int32) bool { return !deleting[o] && pods[o] == int(want) }
	replicas := func(r *int32) int32 {
		if r == nil {
			return 1
		}
		return *r
	}
	// A Deployment goes only with every ReplicaSet it controls.
	partial := map[owner]bool{}
	d.ReplicaSets = slices.DeleteFunc(d.ReplicaSets, func(rs appsv1.ReplicaSet) bool {
		if whole(owner{"ReplicaSet", rs.Namespace, rs.Name}, replicas(rs.Spec.Replicas)) {
			return false
		}
		if o, ok := controllerOf(&rs); ok {
			partial[o] = true
		}
		return true
	})
	d.Deployments = slices.DeleteFunc(d.Deployments, func(dep appsv1.Deployment) bool {
		return partial[owner{"Deployment", dep.Namespace, dep.Name}]
	})
	d.StatefulSets = slices.DeleteFunc(d.StatefulSets, func(s appsv1.StatefulSet) bool {
		return !whole(owner{"StatefulSet", s.Namespace, s.Name}, replicas(s.Spec.Replicas))
	})
	// The source's controller counted the nodes that should run a pod.
	d.DaemonSets = slices.DeleteFunc(d.DaemonSets, func(ds appsv1.DaemonSet) bool {
		return ds.Status.NumberMisscheduled != 0 || !whole(owner{"DaemonSet", ds.Namespace, ds.Name}, ds.Status.DesiredNumberScheduled)
	})
}

// cleanWorkloads drops what the controllers write, as clean does for the
// other kinds: the copy's controllers compute their own.
func (d *Document) cleanWorkloads() {
	forEach(d.Deployments, func(o *appsv1.Deployment) { o.Status = appsv1.DeploymentStatus{} })
	forEach(d.ReplicaSets, func(o *appsv1.ReplicaSet) { o.Status = appsv1.ReplicaSetStatus{} })
	forEach(d.StatefulSets, func(o *appsv1.StatefulSet) { o.Status = appsv1.StatefulSetStatus{} })
	forEach(d.DaemonSets, func(o *appsv1.DaemonSet) { o.Status = appsv1.DaemonSetStatus{} })
	forEach(d.PodDisruptionBudgets, func(o *policyv1.PodDisruptionBudget) { o.Status = policyv1.PodDisruptionBudgetStatus{} })
}
