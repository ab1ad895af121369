// Package compare sets two runs of one scenario side by side, each under
// its own scheduler configuration: where each pod went, which plugins'
// weighted scores made it go elsewhere, how full each node ended up, and
// which pods only one configuration could not place.
package compare

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minisched/event"
)

// Side is what one run left behind.
type Side struct {
	// Config names the configuration (its file).
	Config string
	Pods   map[string]Pod // by namespace/name
	Nodes  map[string]Usage
}

// Pod is one pod at the end of a run.
type Pod struct {
	// Node is where it is bound; "" when it is not.
	Node string `json:"node"`
	// Reason says why it has no node.
	Reason string `json:"reason,omitempty"`
	// Scores holds its last scored attempt: node -> plugin -> weighted score.
	Scores map[string]map[string]int64 `json:"scores"`
	// Filtered holds, for the same attempt, the nodes Filter turned away
	// and why.
	Filtered map[string]string `json:"filtered"`
}

// Usage is how full a node is: what its pods request over what it offers,
// in percent.
type Usage struct {
	CPU    float64 `json:"cpu"`
	Memory float64 `json:"memory"`
	Pods   int     `json:"pods"`
}

// Report is the comparison.
type Report struct {
	A string `json:"a"`
	B string `json:"b"`
	// Pods lists every pod of either run, by name.
	Pods  []PodDiff  `json:"pods"`
	Nodes []NodeDiff `json:"nodes"`
	// Moved counts pods placed on different nodes; UnschedulableOnlyA and
	// UnschedulableOnlyB name the pods only one configuration left unplaced.
	Moved              int      `json:"moved"`
	UnschedulableOnlyA []string `json:"unschedulableOnlyA"`
	UnschedulableOnlyB []string `json:"unschedulableOnlyB"`
}

// PodDiff is one pod under both configurations.
type PodDiff struct {
	Pod   string `json:"pod"`
	NodeA string `json:"nodeA"`
	NodeB string `json:"nodeB"`
	Same  bool   `json:"same"`
	// Plugins lists, for a pod placed on two different nodes, how much
	// each plugin's weighted score favoured A's node over B's node, under
	// A and under B; the plugins that changed their minds most come first.
	// Plugins that scored the two nodes alike under both are left out.
	Plugins []PluginMargin `json:"plugins,omitempty"`
	// Notes say what the scores cannot: a node that failed Filter or was
	// not scored, a pod left unplaced and why.
	Notes []string `json:"notes,omitempty"`
}

// PluginMargin is a plugin's weighted score of A's node minus B's node.
type PluginMargin struct {
	Plugin string `json:"plugin"`
	// UnderA and UnderB are nil where a node was not scored.
	UnderA *int64 `json:"underA"`
	UnderB *int64 `json:"underB"`
}

// NodeDiff is one node's utilisation under both.
type NodeDiff struct {
	Node string `json:"node"`
	A    Usage  `json:"a"`
	B    Usage  `json:"b"`
}

// Differ reports whether the configurations placed anything differently.
func (r *Report) Differ() bool {
	return r.Moved > 0 || len(r.UnschedulableOnlyA) > 0 || len(r.UnschedulableOnlyB) > 0
}

// Compare sets a and b side by side.
func Compare(a, b Side) Report {
	r := Report{A: a.Config, B: b.Config, UnschedulableOnlyA: []string{}, UnschedulableOnlyB: []string{}}
	for _, key := range union(a.Pods, b.Pods) {
		pa, pb := a.Pods[key], b.Pods[key]
		d := PodDiff{Pod: key, NodeA: pa.Node, NodeB: pb.Node, Same: pa.Node == pb.Node}
		switch {
		case d.Same:
		case pa.Node == "":
			r.UnschedulableOnlyA = append(r.UnschedulableOnlyA, key)
			d.Notes = append(d.Notes, "unschedulable under A: "+orUnknown(pa.Reason))
		case pb.Node == "":
			r.UnschedulableOnlyB = append(r.UnschedulableOnlyB, key)
			d.Notes = append(d.Notes, "unschedulable under B: "+orUnknown(pb.Reason))
		default:
			r.Moved++
			d.Plugins, d.Notes = margins(pa, pb)
		}
		r.Pods = append(r.Pods, d)
	}
	for _, node := range union(a.Nodes, b.Nodes) {
		r.Nodes = append(r.Nodes, NodeDiff{Node: node, A: a.Nodes[node], B: b.Nodes[node]})
	}
	return r
}

// margins explains a pod that went to node x under A and to y under B.
func margins(a, b Pod) ([]PluginMargin, []string) {
	x, y := a.Node, b.Node
	var notes []string
	marginOf := func(side string, p Pod) map[string]int64 {
		sx, okx := p.Scores[x]
		sy, oky := p.Scores[y]
		for _, n := range []struct {
			node string
			ok   bool
		}{{x, okx}, {y, oky}} {
			switch reason, filtered := p.Filtered[n.node]; {
			case n.ok:
			case filtered:
				notes = append(notes, fmt.Sprintf("under %s, %s failed Filter: %s", side, n.node, reason))
			default:
				notes = append(notes, fmt.Sprintf("under %s, %s was not scored (Filter stops once enough nodes fit, or only one did)", side, n.node))
			}
		}
		if !okx || !oky {
			return nil
		}
		m := map[string]int64{}
		for plugin, v := range sx {
			m[plugin] += v
		}
		for plugin, v := range sy {
			m[plugin] -= v
		}
		return m
	}
	ma, mb := marginOf("A", a), marginOf("B", b)
	var out []PluginMargin
	for _, plugin := range union(ma, mb) {
		pm := PluginMargin{Plugin: plugin}
		if ma != nil {
			v := ma[plugin]
			pm.UnderA = &v
		}
		if mb != nil {
			v := mb[plugin]
			pm.UnderB = &v
		}
		if deref(pm.UnderA) == 0 && deref(pm.UnderB) == 0 {
			continue // a plugin that scored both nodes alike under both explains nothing
		}
		out = append(out, pm)
	}
	change := func(m PluginMargin) int64 {
		if m.UnderA == nil || m.UnderB == nil {
			return 0
		}
		return abs(*m.UnderA - *m.UnderB)
	}
	slices.SortStableFunc(out, func(p, q PluginMargin) int { return cmp.Compare(change(q), change(p)) })
	return out, notes
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "A: %s\nB: %s\n\n", r.A, r.B)
	fmt.Fprintf(w, "pods placed differently: %d of %d; unschedulable under A only: %d, under B only: %d\n",
		r.Moved, len(r.Pods), len(r.UnschedulableOnlyA), len(r.UnschedulableOnlyB))
	for _, p := range r.Pods {
		if p.Same {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s under A, %s under B\n", p.Pod, orNone(p.NodeA), orNone(p.NodeB))
		if len(p.Plugins) > 0 {
			fmt.Fprintf(w, "  weighted score of %s minus %s, per plugin:\n", p.NodeA, p.NodeB)
			fmt.Fprintf(w, "  %-32s %8s %8s\n", "plugin", "under A", "under B")
			var ta, tb int64
			for _, m := range p.Plugins {
				fmt.Fprintf(w, "  %-32s %8s %8s\n", m.Plugin, signed(m.UnderA), signed(m.UnderB))
				ta, tb = ta+deref(m.UnderA), tb+deref(m.UnderB)
			}
			fmt.Fprintf(w, "  %-32s %8s %8s\n", "total", signed(&ta), signed(&tb))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	fmt.Fprintf(w, "\nnodes (requested over allocatable):\n  %-24s %16s %16s\n", "node", "A cpu/mem/pods", "B cpu/mem/pods")
	for _, n := range r.Nodes {
		fmt.Fprintf(w, "  %-24s %16s %16s\n", n.Node, usage(n.A), usage(n.B))
	}
	if r.Differ() {
		fmt.Fprintln(w, "\nthe configurations differ")
	} else {
		fmt.Fprintln(w, "\nthe configurations place every pod alike")
	}
}

func usage(u Usage) string { return fmt.Sprintf("%.0f%%/%.0f%%/%d", u.CPU, u.Memory, u.Pods) }

func signed(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+d", *v)
}

func deref(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func orNone(node string) string {
	if node == "" {
		return "unschedulable"
	}
	return node
}

func orUnknown(reason string) string {
	if strings.TrimSpace(reason) == "" {
		return "no reason recorded"
	}
	return reason
}

// union returns the keys of both maps, sorted.
func union[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ReadSide builds a Side from the nodes and pods the apiserver holds: the
// watch caches may trail a binding the run has already seen reported.
func ReadSide(ctx context.Context, client kubernetes.Interface, config string, lastScored func(pod string) []event.Event) (Side, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Side{}, fmt.Errorf("listing the nodes: %w", err)
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return Side{}, fmt.Errorf("listing the pods: %w", err)
	}
	ns := make([]event.NodeSummary, len(nodes.Items))
	for i := range nodes.Items {
		ns[i] = event.SummarizeNode(&nodes.Items[i])
	}
	ps := make([]event.PodSummary, len(pods.Items))
	for i := range pods.Items {
		ps[i] = event.SummarizePod(&pods.Items[i])
	}
	return SideFrom(config, ns, ps, lastScored), nil
}

// SideFrom builds a Side from a run's cluster and, per pod, its last scored
// attempt's events (nil when none is recorded).
func SideFrom(config string, nodes []event.NodeSummary, pods []event.PodSummary, lastScored func(pod string) []event.Event) Side {
	s := Side{Config: config, Pods: map[string]Pod{}, Nodes: map[string]Usage{}}
	requested := map[string]map[string]int64{}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		pod := Pod{Node: p.NodeName, Scores: map[string]map[string]int64{}, Filtered: map[string]string{}}
		if p.NodeName == "" {
			pod.Reason = p.Message
		} else {
			if requested[p.NodeName] == nil {
				requested[p.NodeName] = map[string]int64{}
			}
			for r, v := range p.Requests {
				requested[p.NodeName][r] += v
			}
			requested[p.NodeName]["pods"]++
		}
		for _, e := range lastScored(key) {
			switch {
			case e.Filter != nil:
				f := e.Filter
				for i, node := range f.NodeNames {
					if at := f.FailedAt(i); at >= 0 && at < len(f.Plugins) {
						pod.Filtered[node] = strings.TrimSpace(f.Plugins[at] + ": " + f.Reasons[i])
					}
				}
			case e.Score != nil:
				for _, row := range e.Score.Rows() {
					m := map[string]int64{}
					for i, plugin := range e.Score.Plugins {
						if i < len(row.Weighted) {
							m[plugin.Name] = row.Weighted[i]
						}
					}
					pod.Scores[row.Node] = m
				}
			}
		}
		s.Pods[key] = pod
	}
	for _, n := range nodes {
		req := requested[n.Name]
		s.Nodes[n.Name] = Usage{CPU: percent(req["cpu"], n.Allocatable["cpu"]), Memory: percent(req["memory"], n.Allocatable["memory"]), Pods: int(req["pods"])}
	}
	return s
}

func percent(used, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * float64(used) / float64(total)
}
