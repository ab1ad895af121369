package minisched

// What each plugin's failure means on a node: its message, and for the
// plugins whose state or inputs upstream exposes, what exactly fails and the
// change that would make it pass.

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"

	"minisched/explain"
)

// reading is what one explanation reads failures with: the pod, the cycle
// state its PreFilter plugins wrote, and the snapshot's nodes, indexed by
// topology domain as the affinity and spread details need them.
type reading struct {
	s       *Scheduler
	logger  klog.Logger
	pod     *v1.Pod
	state   fwk.CycleState
	nodes   []fwk.NodeInfo
	podInfo fwk.PodInfo
	// domains[key][value] are the nodes labelled key=value, by name, made
	// on first use of a key.
	domains map[string]map[string][]fwk.NodeInfo
	// matched and holders keep what every node of a domain shares.
	matched map[string][]*v1.Pod
	holders *[]holder
}

func newReading(s *Scheduler, logger klog.Logger, pod *v1.Pod, state fwk.CycleState, nodes []fwk.NodeInfo) *reading {
	r := &reading{s: s, logger: logger, pod: pod, state: state, nodes: nodes,
		domains: map[string]map[string][]fwk.NodeInfo{}, matched: map[string][]*v1.Pod{}}
	if pi, err := framework.NewPodInfo(pod); err == nil {
		r.podInfo = pi
	}
	return r
}

// domain is the nodes in the same topology domain as node for key, and
// the domain's value; none when node has no such label.
func (r *reading) domain(node *v1.Node, key string) ([]fwk.NodeInfo, string, bool) {
	value, ok := node.Labels[key]
	if !ok {
		return nil, "", false
	}
	byValue, ok := r.domains[key]
	if !ok {
		byValue = map[string][]fwk.NodeInfo{}
		for _, ni := range r.nodes {
			if v, ok := ni.Node().Labels[key]; ok {
				byValue[v] = append(byValue[v], ni)
			}
		}
		for _, nodes := range byValue {
			slices.SortFunc(nodes, func(a, b fwk.NodeInfo) int { return strings.Compare(a.Node().Name, b.Node().Name) })
		}
		r.domains[key] = byValue
	}
	return byValue[value], value, true
}

// nsLabels are a namespace's labels, for affinity terms with a namespace
// selector; none when the namespace is not known.
func (r *reading) nsLabels(namespace string) k8slabels.Set {
	ns, err := r.s.factory.Core().V1().Namespaces().Lister().Get(namespace)
	if err != nil {
		return nil
	}
	return ns.Labels
}

// failure reads one plugin's verdict on one node: its message, and for the
// plugins whose state or inputs upstream exposes, what exactly fails and the
// change that would make it pass.
func (r *reading) failure(plugin string, st *fwk.Status, ni fwk.NodeInfo) explain.Failure {
	f := explain.Failure{Plugin: plugin, Code: st.Code().String(), Reason: st.Message(), Size: 1}
	node, pod, logger, s := ni.Node(), r.pod, r.logger, r.s
	switch plugin {
	case names.NodeResourcesFit:
		opts := noderesources.ResourceRequestsOptions{
			EnablePodLevelResources:           utilfeature.DefaultFeatureGate.Enabled(features.PodLevelResources),
			EnableDRAExtendedResource:         utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource),
			EnableDRANodeAllocatableResources: utilfeature.DefaultFeatureGate.Enabled(features.DRANodeAllocatableResources),
		}
		var details, less, other []string
		size := 0.0
		requests := map[string]string{}
		for _, r := range noderesources.Fits(pod, ni, s.dra.sharedManager(), opts) {
			free := r.Capacity - r.Used
			missing := r.Requested - free
			details = append(details, fmt.Sprintf("%s: requests %s, %s of %s free", r.ResourceName,
				quantity(r.ResourceName, r.Requested), quantity(r.ResourceName, max(free, 0)), quantity(r.ResourceName, r.Capacity)))
			if r.Requested > 0 {
				size += min(float64(missing)/float64(r.Requested), 1)
			}
			if r.ResourceName == v1.ResourcePods || free <= 0 {
				other = append(other, fmt.Sprintf("room for it (no %s free)", r.ResourceName))
				continue
			}
			less = append(less, fmt.Sprintf("%s less %s", quantity(r.ResourceName, missing), r.ResourceName))
			requests[string(r.ResourceName)] = quantity(r.ResourceName, free)
		}
		if len(details) > 0 {
			f.Detail, f.Size = strings.Join(details, "; "), max(size, 0.01)
			// Room the node does not have at all is no request to lower.
			if len(requests) > 0 && len(other) == 0 {
				f.Change = &explain.Change{Kind: "reduce-request", On: "pod", Requests: requests, Words: "the pod to request " + strings.Join(less, " and ")}
			}
		}
	case names.TaintToleration:
		taint, untolerated := v1helper.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations,
			helper.DoNotScheduleTaintsFilterFunc(), utilfeature.DefaultFeatureGate.Enabled(features.TaintTolerationComparisonOperators))
		if untolerated {
			f.Detail = fmt.Sprintf("untolerated taint %s", taintWords(taint))
			f.Change = &explain.Change{Kind: "add-toleration", On: "pod", Key: taint.Key, Value: taint.Value, Effect: string(taint.Effect),
				Words: fmt.Sprintf("a toleration for %s", taintWords(taint))}
		}
	case names.NodeUnschedulable:
		f.Detail = "cordoned (spec.unschedulable)"
		f.Change = &explain.Change{Kind: "uncordon", On: "node", Words: "to be uncordoned"}
	case names.NodeAffinity:
		keys := make([]string, 0, len(pod.Spec.NodeSelector))
		for k := range pod.Spec.NodeSelector {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if v := pod.Spec.NodeSelector[k]; node.Labels[k] != v {
				f.Detail = fmt.Sprintf("nodeSelector %s=%s; the node has %s", k, v, labelWords(node.Labels, k))
				f.Change = &explain.Change{Kind: "add-label", On: "node", Key: k, Value: v, Words: fmt.Sprintf("the label %s=%s", k, v)}
				break
			}
		}
		if f.Change == nil {
			f.Detail = "matches none of the pod's required node affinity terms"
		}
	case names.NodePorts:
		for _, holder := range ni.GetPods() {
			if port, ok := sharedHostPort(pod, holder.GetPod()); ok {
				f.Detail = fmt.Sprintf("host port %s is taken by pod %s/%s", port, holder.GetPod().Namespace, holder.GetPod().Name)
				f.Change = &explain.Change{Kind: "free-port", On: "node", Pods: []string{key(holder.GetPod())},
					Words: fmt.Sprintf("host port %s free (pod %s gone)", port, key(holder.GetPod()))}
				break
			}
		}
	case names.PodTopologySpread:
		r.spread(&f, ni)
	case names.InterPodAffinity:
		r.interPodAffinity(&f, st, ni)
	case names.VolumeZone:
		f.Detail = r.volumeZone(node)
	case names.VolumeBinding:
		f.Detail = r.volumeBinding(st, node)
	}
	return f
}

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

// key names a pod namespace/name.
func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// spread reads PodTopologySpread's own PreFilter state: the constraints and
// the matching pods per domain. Its type is unexported but its fields are
// exported (upstream compares them in its tests), so reflection reads them
// without a copy of the plugin's code. The skew is the plugin's rule:
// matching pods in the node's domain, plus the pod itself if it matches,
// minus the fewest in any domain (0 when there are fewer than minDomains).
func (r *reading) spread(f *explain.Failure, ni fwk.NodeInfo) {
	data, err := r.state.Read(fwk.StateKey("PreFilter" + names.PodTopologySpread))
	if err != nil {
		return
	}
	v := reflect.Indirect(reflect.ValueOf(data))
	constraints, paths := v.FieldByName("Constraints"), v.FieldByName("CriticalPaths")
	counts, ok := v.FieldByName("TpValueToMatchNum").Interface().([]map[string]int)
	if !ok || constraints.Len() != len(counts) || paths.Len() != len(counts) {
		return
	}
	node := ni.Node()
	for i := range counts {
		c := constraints.Index(i)
		topologyKey := c.FieldByName("TopologyKey").String()
		maxSkew, minDomains := int(c.FieldByName("MaxSkew").Int()), int(c.FieldByName("MinDomains").Int())
		selector, _ := c.FieldByName("Selector").Interface().(k8slabels.Selector)
		value, has := node.Labels[topologyKey]
		if !has {
			f.Detail = fmt.Sprintf("the node has no %s label, which the constraint spreads over", topologyKey)
			return
		}
		fewest := int(paths.Index(i).Elem().Index(0).FieldByName("MatchNum").Int())
		if len(counts[i]) < minDomains {
			fewest = 0
		}
		self := 0
		if selector != nil && selector.Matches(k8slabels.Set(r.pod.Labels)) {
			self = 1
		}
		skew := counts[i][value] + self - fewest
		if skew <= maxSkew {
			continue
		}
		f.Detail = fmt.Sprintf("spread over %s: %s=%s would hold %d matching pods with this one, the fewest in a domain is %d, skew %d > maxSkew %d (%s)",
			topologyKey, topologyKey, value, counts[i][value]+self, fewest, skew, maxSkew, domainCounts(counts[i]))
		if selector == nil {
			return
		}
		// The smallest change: that many fewer matching pods in this
		// domain, the node's own first.
		matching := r.inDomain(fmt.Sprintf("spread %d", i), node, topologyKey, func(p *v1.Pod) bool {
			return p.Namespace == r.pod.Namespace && p.DeletionTimestamp == nil && selector.Matches(k8slabels.Set(p.Labels))
		})
		if victims := ownFirst(matching, node.Name, skew-maxSkew); len(victims) == skew-maxSkew {
			f.Change = evict(victims)
		}
		return
	}
}

// domainCounts writes the matching pods per domain, most first.
func domainCounts(counts map[string]int) string {
	values := slices.Collect(maps.Keys(counts))
	slices.SortFunc(values, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, min(len(values), 8))
	for _, v := range values[:min(len(values), 8)] {
		parts = append(parts, fmt.Sprintf("%s: %d", v, counts[v]))
	}
	if len(values) > 8 {
		parts = append(parts, fmt.Sprintf("%d more domains", len(values)-8))
	}
	return strings.Join(parts, ", ")
}

// inDomain is every pod in node's topology domain for key that matches,
// by node name, then by pod. The answer is the same for every node of the
// domain, so it is kept under id (what match stands for) and the domain.
func (r *reading) inDomain(id string, node *v1.Node, topologyKey string, match func(*v1.Pod) bool) []*v1.Pod {
	nodes, value, ok := r.domain(node, topologyKey)
	if !ok {
		return nil
	}
	cacheKey := id + "\x00" + topologyKey + "\x00" + value
	if pods, ok := r.matched[cacheKey]; ok {
		return pods
	}
	var out []*v1.Pod
	for _, ni := range nodes {
		from := len(out)
		for _, pi := range ni.GetPods() {
			if match(pi.GetPod()) {
				out = append(out, pi.GetPod())
			}
		}
		slices.SortFunc(out[from:], func(a, b *v1.Pod) int { return strings.Compare(key(a), key(b)) })
	}
	r.matched[cacheKey] = out
	return out
}

// ownFirst takes n of pods (all when n < 0), those on node first.
func ownFirst(pods []*v1.Pod, node string, n int) []*v1.Pod {
	if n < 0 || n > len(pods) {
		n = len(pods)
	}
	out := make([]*v1.Pod, 0, n)
	for _, own := range []bool{true, false} {
		for _, p := range pods {
			if len(out) == n {
				return out
			}
			if (p.Spec.NodeName == node) == own {
				out = append(out, p)
			}
		}
	}
	return out
}

// interPodAffinity names the pods: those in the node's domain that the
// pod's anti-affinity turns away, those whose own anti-affinity turns the
// pod away, or the affinity term no pod in the domain matches. The terms
// and the matching are upstream's (PodInfo's parsed terms, AffinityTerm.Matches).
func (r *reading) interPodAffinity(f *explain.Failure, st *fwk.Status, ni fwk.NodeInfo) {
	if r.podInfo == nil {
		return
	}
	node := ni.Node()
	switch st.Message() {
	case interpodaffinity.ErrReasonAntiAffinityRulesNotMatch:
		for i, term := range r.podInfo.GetRequiredAntiAffinityTerms() {
			pods := r.inDomain(fmt.Sprintf("anti-affinity %d", i), node, term.TopologyKey, func(p *v1.Pod) bool { return term.Matches(p, r.nsLabels(p.Namespace)) })
			if len(pods) > 0 {
				pods = ownFirst(pods, node.Name, -1)
				_, value, _ := r.domain(node, term.TopologyKey)
				f.Detail = fmt.Sprintf("its anti-affinity (%s) turns away %s in %s=%s", term.Selector, podWords(pods), term.TopologyKey, value)
				f.Change = evict(pods)
				return
			}
		}
	case interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch:
		var holders []*v1.Pod
		var words []string
		for _, h := range r.antiAffinityHolders() {
			if value, ok := node.Labels[h.term.TopologyKey]; ok && value == h.value {
				holders = append(holders, h.pod)
				words = append(words, fmt.Sprintf("%s (%s in %s=%s)", key(h.pod), h.term.Selector, h.term.TopologyKey, value))
			}
		}
		if len(holders) > 0 {
			f.Detail = "the anti-affinity of " + strings.Join(words, ", ") + " turns it away"
			f.Change = evict(holders)
		}
	case interpodaffinity.ErrReasonAffinityRulesNotMatch:
		for i, term := range r.podInfo.GetRequiredAffinityTerms() {
			value, ok := node.Labels[term.TopologyKey]
			if !ok {
				f.Detail = fmt.Sprintf("its affinity (%s) needs a %s label, which the node lacks", term.Selector, term.TopologyKey)
				return
			}
			match := func(p *v1.Pod) bool { return term.Matches(p, r.nsLabels(p.Namespace)) }
			if len(r.inDomain(fmt.Sprintf("affinity %d", i), node, term.TopologyKey, match)) == 0 {
				f.Detail = fmt.Sprintf("its affinity needs a pod matching %s in %s=%s, and there is none", term.Selector, term.TopologyKey, value)
				return
			}
		}
	}
}

// holder is a pod whose required anti-affinity term matches the pod: the
// pod may not go into the term's domain, value.
type holder struct {
	pod   *v1.Pod
	term  fwk.AffinityTerm
	value string
}

// antiAffinityHolders finds, once, the pods whose required anti-affinity
// keeps the pod out of a domain.
func (r *reading) antiAffinityHolders() []holder {
	if r.holders != nil {
		return *r.holders
	}
	var out []holder
	ns := r.nsLabels(r.pod.Namespace)
	for _, ni := range r.nodes {
		for _, pi := range ni.GetPodsWithRequiredAntiAffinity() {
			for _, term := range pi.GetRequiredAntiAffinityTerms() {
				if value, ok := ni.Node().Labels[term.TopologyKey]; ok && term.Matches(r.pod, ns) {
					out = append(out, holder{pod: pi.GetPod(), term: term, value: value})
					break
				}
			}
		}
	}
	r.holders = &out
	return out
}

// evict is the change that frees a node of pods; none past
// explain.MaxEvict, which is no small change.
func evict(pods []*v1.Pod) *explain.Change {
	if len(pods) > explain.MaxEvict {
		return nil
	}
	c := &explain.Change{Kind: "evict", On: "node", Words: podWords(pods) + " gone"}
	for _, p := range pods {
		c.Pods = append(c.Pods, key(p))
	}
	return c
}

// podWords names pods: "pod default/a", "pods default/a, default/b", "12
// pods (default/a, ...)".
func podWords(pods []*v1.Pod) string {
	names := make([]string, 0, min(len(pods), 5))
	for _, p := range pods[:min(len(pods), 5)] {
		names = append(names, key(p))
	}
	switch {
	case len(pods) == 1:
		return "pod " + names[0]
	case len(pods) <= 5:
		return "pods " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("%d pods (%s, ...)", len(pods), strings.Join(names, ", "))
}

// quantity writes an amount of a resource as Kubernetes writes it: CPU in
// millicores, the rest as a quantity (16Gi, 3).
func quantity(name v1.ResourceName, v int64) string {
	if name == v1.ResourceCPU {
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	}
	if name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage {
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}

func taintWords(t v1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	return s + ":" + string(t.Effect)
}

func labelWords(labels map[string]string, key string) string {
	if v, ok := labels[key]; ok {
		return fmt.Sprintf("%s=%s", key, v)
	}
	return "no " + key + " label"
}

// sharedHostPort finds a host port of pod that holder uses too, on the same
// protocol and a clashing IP (upstream's NodePorts rule).
func sharedHostPort(pod, holder *v1.Pod) (string, bool) {
	for _, c := range pod.Spec.Containers {
		for _, want := range c.Ports {
			if want.HostPort == 0 {
				continue
			}
			for _, hc := range holder.Spec.Containers {
				for _, have := range hc.Ports {
					if have.HostPort != want.HostPort || protocol(have) != protocol(want) {
						continue
					}
					if ipClash(have.HostIP, want.HostIP) {
						return fmt.Sprintf("%d/%s", want.HostPort, protocol(want)), true
					}
				}
			}
		}
	}
	return "", false
}

func protocol(p v1.ContainerPort) v1.Protocol {
	if p.Protocol == "" {
		return v1.ProtocolTCP
	}
	return p.Protocol
}

func ipClash(a, b string) bool {
	wildcard := func(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }
	return wildcard(a) || wildcard(b) || a == b
}
