// What volume and device failures mean on a node: the claim, its volume
// and its zone or node; each device request, and what each device the node
// publishes is.

package minisched

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	draCEL "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	fwk "k8s.io/kube-scheduler/framework"
)

// claims are the pod's PersistentVolumeClaims with their bound volumes
// (nil when unbound or not found), in the pod's order.
func (r *reading) claims() []claimVolume {
	var out []claimVolume
	core := r.s.factory.Core().V1()
	for _, vol := range r.pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		cv := claimVolume{name: r.pod.Namespace + "/" + vol.PersistentVolumeClaim.ClaimName}
		if pvc, err := core.PersistentVolumeClaims().Lister().PersistentVolumeClaims(r.pod.Namespace).Get(vol.PersistentVolumeClaim.ClaimName); err == nil {
			cv.pvc = pvc
			if pvc.Spec.VolumeName != "" {
				cv.pv, _ = core.PersistentVolumes().Lister().Get(pvc.Spec.VolumeName)
			}
		}
		out = append(out, cv)
	}
	return out
}

type claimVolume struct {
	name string
	pvc  *v1.PersistentVolumeClaim
	pv   *v1.PersistentVolume
}

// zoneLabels are the labels VolumeZone compares, GA and beta.
var zoneLabels = []string{v1.LabelTopologyZone, v1.LabelTopologyRegion, v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion}

// volumeZone names the claim whose volume lies in a zone or region the
// node is not in.
func (r *reading) volumeZone(node *v1.Node) string {
	for _, cv := range r.claims() {
		if cv.pv == nil {
			continue
		}
		for _, k := range zoneLabels {
			want, ok := cv.pv.Labels[k]
			if !ok {
				continue
			}
			have, ok := node.Labels[k]
			if !ok {
				// VolumeZone matches a PV's beta label with the node's GA one.
				ga := strings.Replace(k, "failure-domain.beta.kubernetes.io", "topology.kubernetes.io", 1)
				have, ok = node.Labels[ga]
			}
			zones, err := volumehelpers.LabelZonesToSet(want)
			if err == nil && (!ok || !zones.Has(have)) {
				return fmt.Sprintf("claim %s is bound to PV %s in %s=%s; the node has %s", cv.name, cv.pv.Name, k, want, labelWords(node.Labels, k))
			}
		}
	}
	return ""
}

// volumeBinding says which claim VolumeBinding could not place here.
func (r *reading) volumeBinding(st *fwk.Status, node *v1.Node) string {
	var parts []string
	for _, cv := range r.claims() {
		switch {
		case cv.pvc == nil:
			parts = append(parts, fmt.Sprintf("claim %s does not exist", cv.name))
		case cv.pvc.Spec.VolumeName != "" && cv.pv == nil:
			parts = append(parts, fmt.Sprintf("claim %s is bound to PV %s, which does not exist", cv.name, cv.pvc.Spec.VolumeName))
		case cv.pv != nil && cv.pv.Spec.NodeAffinity != nil && cv.pv.Spec.NodeAffinity.Required != nil:
			if ok, _ := v1helper.MatchNodeSelectorTerms(node, cv.pv.Spec.NodeAffinity.Required); !ok {
				parts = append(parts, fmt.Sprintf("claim %s is bound to PV %s, whose node affinity the node does not match", cv.name, cv.pv.Name))
			}
		case cv.pv == nil:
			class := "no class"
			if cv.pvc.Spec.StorageClassName != nil {
				class = "class " + *cv.pvc.Spec.StorageClassName
			}
			size := cv.pvc.Spec.Resources.Requests[v1.ResourceStorage]
			parts = append(parts, fmt.Sprintf("claim %s (%s, %s) is unbound", cv.name, class, size.String()))
		}
	}
	return strings.Join(parts, "; ")
}

// dynamicResources says, for each claim of the pod, why the node cannot
// give it devices: an allocation made for other nodes, or per request what
// it asks for and what each device the node publishes is: allocated
// already, not of the request's class, not matching its selectors, or
// free. Classes and selectors are evaluated with upstream's CEL, as the
// allocator does.
func (r *reading) dynamicResources(node *v1.Node) string {
	m := r.s.dra.sharedManager()
	if m == nil {
		return ""
	}
	allocated, err := m.ResourceClaims().ListAllAllocatedDevices()
	if err != nil {
		return ""
	}
	published, err := m.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return ""
	}
	var here []*resourceapi.ResourceSlice
	for _, s := range published {
		if s.Spec.NodeName != nil && *s.Spec.NodeName == node.Name {
			here = append(here, s)
		}
	}
	var parts []string
	for _, pc := range r.pod.Spec.ResourceClaims {
		name := claimName(r.pod, pc)
		if name == "" {
			parts = append(parts, fmt.Sprintf("claim %s is not made yet", pc.Name))
			continue
		}
		claim, err := m.ResourceClaims().Get(r.pod.Namespace, name)
		if err != nil {
			parts = append(parts, fmt.Sprintf("claim %s/%s does not exist", r.pod.Namespace, name))
			continue
		}
		if a := claim.Status.Allocation; a != nil {
			if a.NodeSelector != nil {
				if ok, _ := v1helper.MatchNodeSelectorTerms(node, a.NodeSelector); !ok {
					parts = append(parts, fmt.Sprintf("claim %s/%s is allocated devices of other nodes", claim.Namespace, claim.Name))
				}
			}
			continue
		}
		for _, req := range claim.Spec.Devices.Requests {
			if w := r.request(m, claim, req, here, allocated); w != "" {
				parts = append(parts, w)
			}
		}
	}
	return strings.Join(parts, "; ")
}

// claimName is the ResourceClaim a pod's claim entry stands for: named, or
// made from a template (the pod's status says which); "" before it is made.
func claimName(pod *v1.Pod, pc v1.PodResourceClaim) string {
	if pc.ResourceClaimName != nil {
		return *pc.ResourceClaimName
	}
	for _, st := range pod.Status.ResourceClaimStatuses {
		if st.Name == pc.Name && st.ResourceClaimName != nil {
			return *st.ResourceClaimName
		}
	}
	return ""
}

// request says what one request asks for and what the node's devices are.
func (r *reading) request(m fwk.SharedDRAManager, claim *resourceapi.ResourceClaim, req resourceapi.DeviceRequest, here []*resourceapi.ResourceSlice, allocated sets.Set[structured.DeviceID]) string {
	prefix := fmt.Sprintf("claim %s/%s, request %s", claim.Namespace, claim.Name, req.Name)
	x := req.Exactly
	if x == nil {
		return fmt.Sprintf("%s: the first available of %d subrequests", prefix, len(req.FirstAvailable))
	}
	want := fmt.Sprintf("%d device(s)", max(x.Count, 1))
	if x.AllocationMode == resourceapi.DeviceAllocationModeAll {
		want = "all devices"
	}
	class, err := m.DeviceClasses().Get(x.DeviceClassName)
	if err != nil {
		return fmt.Sprintf("%s: device class %s does not exist", prefix, x.DeviceClassName)
	}
	var free, notClass, notRequest int
	var taken []string
	for _, s := range here {
		for _, d := range s.Spec.Devices {
			switch {
			case !r.celMatch(s.Spec.Driver, d, class.Spec.Selectors):
				notClass++
			case !r.celMatch(s.Spec.Driver, d, x.Selectors):
				notRequest++
			case allocated.Has(structured.MakeDeviceID(s.Spec.Driver, s.Spec.Pool.Name, d.Name)):
				taken = append(taken, d.Name)
			default:
				free++
			}
		}
	}
	seen := []string{fmt.Sprintf("%d free", free)}
	if len(taken) > 0 {
		seen = append(seen, fmt.Sprintf("%d allocated already (%s)", len(taken), strings.Join(taken[:min(len(taken), 5)], ", ")))
	}
	if notRequest > 0 {
		seen = append(seen, fmt.Sprintf("%d not matching the request's selectors", notRequest))
	}
	if notClass > 0 {
		seen = append(seen, fmt.Sprintf("%d of other classes", notClass))
	}
	return fmt.Sprintf("%s wants %s of class %s; the node's devices: %s", prefix, want, x.DeviceClassName, strings.Join(seen, ", "))
}

// celMatch says whether the device passes every selector, with upstream's
// CEL environment; a selector that does not compile or errs fails it.
func (r *reading) celMatch(driver string, d resourceapi.Device, selectors []resourceapi.DeviceSelector) bool {
	for _, sel := range selectors {
		if sel.CEL == nil {
			continue
		}
		expr := r.cel().GetOrCompile(sel.CEL.Expression)
		if expr.Error != nil {
			return false
		}
		ok, _, err := expr.DeviceMatches(context.Background(), draCEL.Device{Driver: driver, AllowMultipleAllocations: d.AllowMultipleAllocations, Attributes: d.Attributes, Capacity: d.Capacity})
		if err != nil || !ok {
			return false
		}
	}
	return true
}
