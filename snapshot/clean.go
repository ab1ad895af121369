package snapshot

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/cluster"
)

// clean strips what the apiserver sets, and what would tie an object to
// the cluster it came from, so that the document loads anywhere and two
// documents of equal clusters are equal.
func (d *Document) clean() {
	for i := range d.Namespaces {
		cleanMeta(&d.Namespaces[i].ObjectMeta)
		// The phase is the apiserver's (Active, Terminating).
		d.Namespaces[i].Status = v1.NamespaceStatus{}
	}
	for i := range d.PriorityClasses {
		cleanMeta(&d.PriorityClasses[i].ObjectMeta)
	}
	d.PriorityClasses = dropSystemClasses(d.PriorityClasses)
	for i := range d.RuntimeClasses {
		cleanMeta(&d.RuntimeClasses[i].ObjectMeta)
	}
	for i := range d.StorageClasses {
		cleanMeta(&d.StorageClasses[i].ObjectMeta)
	}
	for i := range d.PersistentVolumeClaims {
		cleanMeta(&d.PersistentVolumeClaims[i].ObjectMeta)
		// Conditions (Unused, Resizing) are the controllers'; where the
		// copy runs them, they write their own.
		d.PersistentVolumeClaims[i].Status.Conditions = nil
	}
	for i := range d.PersistentVolumes {
		pv := &d.PersistentVolumes[i]
		cleanMeta(&pv.ObjectMeta)
		// The claim gets a new uid where it is loaded; Load fills it in.
		if ref := pv.Spec.ClaimRef; ref != nil {
			ref.UID, ref.ResourceVersion = "", ""
		}
		// The apiserver stamps the time of every phase change.
		pv.Status.LastPhaseTransitionTime = nil
	}
	for i := range d.CSINodes {
		cleanMeta(&d.CSINodes[i].ObjectMeta)
	}
	for i := range d.DeviceClasses {
		cleanMeta(&d.DeviceClasses[i].ObjectMeta)
	}
	for i := range d.Nodes {
		cleanMeta(&d.Nodes[i].ObjectMeta)
	}
	for i := range d.ResourceSlices {
		cleanMeta(&d.ResourceSlices[i].ObjectMeta)
	}
	for i := range d.ResourceClaims {
		c := &d.ResourceClaims[i]
		cleanMeta(&c.ObjectMeta)
		// reservedFor names pods by uid, which change in the copy; the
		// allocation stays, so that the devices count as taken.
		c.Status.ReservedFor = nil
	}
	d.cleanWorkloads()
	for i := range d.Pods {
		p := &d.Pods[i]
		cleanMeta(&p.ObjectMeta)
		// The status is the kubelet's and the scheduler's; in the copy
		// minisched writes its own. Ephemeral containers cannot be set
		// on create and take no part in scheduling.
		p.Status = v1.PodStatus{}
		p.Spec.EphemeralContainers = nil
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
