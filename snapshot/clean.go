package snapshot

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/cluster"
)

// clean strips what the apiserver sets, and what would tie an object to
// the cluster it came from, so that the document loads anywhere and two
// documents of equal clusters are equal.
func (d *Document) clean() {
	d.forgetSource()
	// The phase is the apiserver's (Active, Terminating).
	forEach(d.Namespaces, func(ns *v1.Namespace) { ns.Status = v1.NamespaceStatus{} })
	d.PriorityClasses = dropSystemClasses(d.PriorityClasses)
	// Conditions (Unused, Resizing) are the controllers'; where the copy
	// runs them, they write their own.
	forEach(d.PersistentVolumeClaims, func(pvc *v1.PersistentVolumeClaim) { pvc.Status.Conditions = nil })
	forEach(d.PersistentVolumes, func(pv *v1.PersistentVolume) {
		// The claim gets a new uid where it is loaded; Load fills it in.
		if ref := pv.Spec.ClaimRef; ref != nil {
			ref.UID, ref.ResourceVersion = "", ""
		}
		// The apiserver stamps the time of every phase change.
		pv.Status.LastPhaseTransitionTime = nil
	})
	// reservedFor names pods by uid, which change in the copy; the
	// allocation stays, so that the devices count as taken.
	forEach(d.ResourceClaims, func(c *resourcev1.ResourceClaim) { c.Status.ReservedFor = nil })
	d.cleanWorkloads()
	forEach(d.Pods, func(p *v1.Pod) {
		// The status is the kubelet's and the scheduler's; in the copy
		// minisched writes its own. Ephemeral containers cannot be set on
		// create and take no part in scheduling.
		p.Status = v1.PodStatus{}
		p.Spec.EphemeralContainers = nil
	})
}

// forgetSource keeps, of every object's metadata, what a person sets:
// name, namespace, labels, annotations. Owner references name uids that do
// not exist in the copy (the copy's controllers adopt what they own by
// selector, wholeOwners says); finalizers would hold an object forever
// where no controller runs to remove them. Export does it, and so does
// Load, for documents written by hand or by another tool.
func (d *Document) forgetSource() {
	d.eachMeta(func(_ string, m *metav1.ObjectMeta) {
		*m = metav1.ObjectMeta{
			Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace,
			Labels: m.Labels, Annotations: m.Annotations,
		}
	})
}

// forEach calls f on a pointer to each item.
func forEach[T any](items []T, f func(*T)) {
	for i := range items {
		f(&items[i])
	}
}

// dropSystemClasses leaves out the apiserver's own PriorityClasses: every
// cluster makes them itself.
func dropSystemClasses(classes []schedulingv1.PriorityClass) []schedulingv1.PriorityClass {
	return slices.DeleteFunc(classes, func(pc schedulingv1.PriorityClass) bool { return cluster.SystemPriorityClass(pc.Name) })
}
