// What PodTopologySpread and InterPodAffinity failures mean on a node: the
// skew and the counts per domain, the pods in the way, by name; the pods
// whose going would do.

package minisched

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	"minisched/explain"
)

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
