package minisched

// What each plugin's failure means on a node: its message, and for the
// plugins whose state or inputs upstream exposes, what exactly fails and the
// change that would make it pass.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	draCEL "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"
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
	// celCache compiles device selectors once, made on first use.
	celCache *draCEL.Cache
}

// cel is the explanation's cache of compiled device selectors, with the
// features the DRA gates enable, as the scheduler's allocator has.
func (r *reading) cel() *draCEL.Cache {
	if r.celCache == nil {
		r.celCache = draCEL.NewCache(64, draCEL.Features{
			EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			EnableListTypeAttributes: utilfeature.DefaultFeatureGate.Enabled(features.DRAListTypeAttributes),
		})
	}
	return r.celCache
}

func newReading(s *Scheduler, logger klog.Logger, pod *v1.Pod, state fwk.CycleState, nodes []fwk.NodeInfo) *reading {
	r := &reading{s: s, logger: logger, pod: pod, state: state, nodes: nodes,
		domains: map[string]map[string][]fwk.NodeInfo{}, matched: map[string][]*v1.Pod{}}
	if pi, err := framework.NewPodInfo(pod); err == nil {
		r.podInfo = pi
	}
	return r
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
		var short v1.ResourceName // the first resource the node lacks
		size := 0.0
		requests := map[string]string{}
		for _, r := range noderesources.Fits(pod, ni, s.dra.sharedManager(), opts) {
			free := r.Capacity - r.Used
			missing := r.Requested - free
			if short == "" {
				short = r.ResourceName
			}
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
			f.UsedBy = usedBy(ni, short)
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
			f.Detail, f.Change = requiredAffinity(pod, node)
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
	case names.DynamicResources:
		f.Detail = r.dynamicResources(node)
	}
	return f
}

// key names a pod namespace/name.
func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

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

// usedBy names the pods on the node that use the most of a resource, with
// the amounts the node counts for them.
func usedBy(ni fwk.NodeInfo, name v1.ResourceName) []string {
	type use struct {
		pod    *v1.Pod
		amount int64
	}
	var uses []use
	for _, pi := range ni.GetPods() {
		r := pi.CalculateResource().Resource
		var amount int64
		switch name {
		case v1.ResourceCPU:
			amount = r.GetMilliCPU()
		case v1.ResourceMemory:
			amount = r.GetMemory()
		case v1.ResourceEphemeralStorage:
			amount = r.GetEphemeralStorage()
		case v1.ResourcePods:
			amount = 1
		default:
			amount = r.GetScalarResources()[name]
		}
		if amount > 0 {
			uses = append(uses, use{pi.GetPod(), amount})
		}
	}
	slices.SortFunc(uses, func(a, b use) int {
		if a.amount != b.amount {
			return cmp.Compare(b.amount, a.amount)
		}
		return strings.Compare(key(a.pod), key(b.pod))
	})
	out := make([]string, 0, min(len(uses), explain.MaxUsedBy))
	for _, u := range uses[:min(len(uses), explain.MaxUsedBy)] {
		out = append(out, key(u.pod)+" "+quantity(name, u.amount))
	}
	return out
}

// requiredAffinity says which requirement of each of the pod's required
// node affinity terms the node fails (the terms are ORed; each one's
// requirements ANDed), with upstream's matcher. When there is one term and
// one requirement of it fails, an In of it is a label to add.
func requiredAffinity(pod *v1.Pod, node *v1.Node) (string, *explain.Change) {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", nil
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var parts []string
	var change *explain.Change
	for i, term := range terms {
		var failing []v1.NodeSelectorRequirement
		for _, req := range term.MatchExpressions {
			one := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{req}}}}
			if ok, _ := v1helper.MatchNodeSelectorTerms(node, one); !ok {
				failing = append(failing, req)
			}
		}
		words := make([]string, len(failing))
		for j, req := range failing {
			words[j] = fmt.Sprintf("%s %s %s; the node has %s", req.Key, req.Operator, strings.Join(req.Values, ","), labelWords(node.Labels, req.Key))
		}
		if len(failing) == 0 {
			words = []string{"its matchFields"}
		}
		prefix := "required node affinity: "
		if len(terms) > 1 {
			prefix = fmt.Sprintf("term %d: ", i+1)
		}
		parts = append(parts, prefix+strings.Join(words, "; and "))
		if len(terms) == 1 && len(failing) == 1 && failing[0].Operator == v1.NodeSelectorOpIn && len(failing[0].Values) > 0 {
			k, v := failing[0].Key, failing[0].Values[0]
			change = &explain.Change{Kind: "add-label", On: "node", Key: k, Value: v, Words: fmt.Sprintf("the label %s=%s", k, v)}
		}
	}
	return strings.Join(parts, " | "), change
}
