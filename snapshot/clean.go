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
	// The phase is the apiserver's (Active, Terminating).
	cleanAll(d.Namespaces, func(ns *v1.Namespace) { ns.Status = v1.NamespaceStatus{} })
	cleanAll(d.PriorityClasses, nil)
	d.PriorityClasses = dropSystemClasses(d.PriorityClasses)
	cleanAll(d.RuntimeClasses, nil)
	cleanAll(d.StorageClasses, nil)
	// Conditions (Unused, Resizing) are the controllers'; where the copy
	// runs them, they write their own.
	cleanAll(d.PersistentVolumeClaims, func(pvc *v1.PersistentVolumeClaim) { pvc.Status.Conditions = nil })
	cleanAll(d.PersistentVolumes, func(pv *v1.PersistentVolume) {
		// The claim gets a new uid where it is loaded; Load fills it in.
		if ref := pv.Spec.ClaimRef; ref != nil {
			ref.UID, ref.ResourceVersion = "", ""
		}
		// The apiserver stamps the time of every phase change.
		pv.Status.LastPhaseTransitionTime = nil
	})
	cleanAll(d.CSINodes, nil)
	cleanAll(d.DeviceClasses, nil)
	cleanAll(d.Nodes, nil)
	cleanAll(d.ResourceSlices, nil)
	// reservedFor names pods by uid, which change in the copy; the
	// allocation stays, so that the devices count as taken.
	cleanAll(d.ResourceClaims, func(c *resourcev1.ResourceClaim) { c.Status.ReservedFor = nil })
	d.cleanWorkloads()
	cleanAll(d.Pods, func(p *v1.Pod) {
		// The status is the kubelet's and the scheduler's; in the copy
		// minisched writes its own. Ephemeral containers cannot be set on
		// create and take no part in scheduling.
		p.Status = v1.PodStatus{}
		p.Spec.EphemeralContainers = nil
	})
}

// cleanAll cleans every object's metadata, then does what else its kind
// needs (also, when not nil).
func cleanAll[T any, P interface {
	*T
	metav1.ObjectMetaAccessor
}](objects []T, also func(P)) {
	for i := range objects {
		obj := P(&objects[i])
		cleanMeta(obj.GetObjectMeta().(*metav1.ObjectMeta))
		if also != nil {
			also(obj)
		}
	}
}

// cleanMeta keeps what a person sets: name, namespace, labels,
// annotations. Owner references name uids that do not exist in the copy
// (the copy's controllers adopt what they own by selector, wholeOwners
// says); finalizers would hold an object forever where no controller runs
// to remove them.
func cleanMeta(m *metav1.ObjectMeta) {
	*m = metav1.ObjectMeta{
		Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace,
		Labels: m.Labels, Annotations: m.Annotations,
	}
}

// dropSystemClasses leaves out the apiserver's own PriorityClasses: every
// cluster makes them itself.
func dropSystemClasses(classes []schedulingv1.PriorityClass) []schedulingv1.PriorityClass {
	return slices.DeleteFunc(classes, func(pc schedulingv1.PriorityClass) bool { return cluster.SystemPriorityClass(pc.Name) })
}
