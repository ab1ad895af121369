// Package explain answers "why is my pod pending, and what would make it
// fit?": for every node, every Filter plugin that turns the pod away, with
// the reason read out of the plugin's own verdict and the smallest change
// that would make it pass; the nodes ranked by how little would have to
// change; nodes that fail alike grouped; and one sentence on top.
//
// The minisched package runs the real plugins and fills in the failures;
// this package holds the schema (docs/API.md, "Explanations") and the pure
// logic of ranking, grouping and wording, so that other tools can read it.
package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Schema is the version of the explanation's JSON.
const Schema = "minisched.explain/v1"

// Explanation says why a pod does not fit, node by node.
type Explanation struct {
	Schema    string `json:"schema"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Profile   string `json:"profile"`
	// Sentence is the answer in one sentence.
	Sentence string `json:"sentence"`
	// Nodes is how many nodes there are; Fits names those the pod fits
	// on now (it may be waiting for its next attempt).
	Nodes int      `json:"nodes"`
	Fits  []string `json:"fits,omitempty"`
	// PodReason is set when the pod fits no node whatever the node: a
	// PreFilter plugin turned it away.
	PodReason *Failure `json:"podReason,omitempty"`
	// Closest are the nodes with the fewest and smallest changes to make,
	// at most MaxClosest, closest first.
	Closest []Node `json:"closest,omitempty"`
	// Groups gathers the nodes that fail the same way, biggest first.
	Groups []Group `json:"groups,omitempty"`
	// Preemption says whether evicting pods of lower priority would make
	// room: upstream's preemption, evaluated as a dry run (nothing is
	// evicted). Nil when the profile has no preemption plugin.
	Preemption *Preemption `json:"preemption,omitempty"`
	// PodGroup is the pod's group (GenericWorkload): the pod is placed
	// only with enough of the group's pods, whatever node it fits. Nil for
	// a pod alone.
	PodGroup *PodGroup `json:"podGroup,omitempty"`
}

// PodGroup is what the scheduler knows of a pod's group.
type PodGroup struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Missing: the PodGroup does not exist (yet); its pods wait for it.
	Missing bool `json:"missing,omitempty"`
	// MinCount is the gang's minimum, 0 without a gang policy.
	MinCount int32 `json:"minCount,omitempty"`
	// Pods is how many of its pods the scheduler knows, Scheduled how many
	// of them are placed (assumed or bound).
	Pods      int `json:"pods"`
	Scheduled int `json:"scheduled"`
	// TurnedAway is why the group's last cycle failed: the message of the
	// PodGroup's PodGroupInitiallyScheduled condition, when it is False.
	TurnedAway string `json:"turnedAway,omitempty"`
}

// Preemption is the dry run's answer.
type Preemption struct {
	// Helps says it would: on Node, evicting Victims (namespace/name), the
	// candidate upstream would choose of Candidates.
	Helps      bool     `json:"helps"`
	Node       string   `json:"node,omitempty"`
	Victims    []string `json:"victims,omitempty"`
	Candidates int      `json:"candidates,omitempty"`
	// Reason says why it would not.
	Reason string `json:"reason,omitempty"`
}

// Node is one node's failures.
type Node struct {
	Name     string    `json:"name"`
	Failures []Failure `json:"failures"`
	// Distance orders nodes: how many plugins fail, then how big the
	// changes are (see Failure.Size).
	Distance Distance `json:"distance"`
	// Tried says what the real plugins made of this node's changes, all
	// applied on copies of the pod and the node (see Trial); nil when a
	// failure has no change to try.
	Tried *Trial `json:"tried,omitempty"`
}

// Trial is the proof of a node's changes: PreFilter and every Filter
// plugin ran again on the pod and the node with the changes applied (other
// nodes as they are). Fits says the pod then passes every plugin there;
// otherwise Failures says what still fails.
type Trial struct {
	Fits     bool      `json:"fits"`
	Failures []Failure `json:"failures,omitempty"`
}

// Distance is how far a node is from taking the pod.
type Distance struct {
	Plugins int     `json:"plugins"`
	Size    float64 `json:"size"`
}

// Failure is one plugin's verdict on one node (or on the pod, at PreFilter).
type Failure struct {
	Plugin string `json:"plugin"`
	// Code is the status code's name (Unschedulable,
	// UnschedulableAndUnresolvable, Error).
	Code string `json:"code"`
	// Reason is the plugin's own message.
	Reason string `json:"reason"`
	// Detail says what exactly fails, in words (how much CPU is missing,
	// which taint, which label).
	Detail string `json:"detail,omitempty"`
	// Change is the smallest change that would make this plugin pass,
	// when there is one to suggest.
	Change *Change `json:"change,omitempty"`
	// UsedBy names the pods that use the most of what the node lacks
	// ("default/db 1500m"), biggest first, at most MaxUsedBy: where the
	// room went. NodeResourcesFit's only; groups do not tell nodes apart
	// by it.
	UsedBy []string `json:"usedBy,omitempty"`
	// Size measures the change, to rank nodes: for resources the share of
	// the request that is missing (0 to 1), 1 for anything else.
	Size float64 `json:"size"`
}

// Change is a suggestion: what to change, on the pod or on the node.
type Change struct {
	// Kind is reduce-request, add-toleration, add-label, uncordon,
	// free-port or evict.
	Kind string `json:"kind"`
	// On is "pod" or "node".
	On string `json:"on"`
	// Words say it for a person.
	Words string `json:"words"`
	// Key, Value and Effect say it for a tool: the label's or the
	// toleration's. Requests are reduce-request's: for each resource, the
	// most the pod may request in all to fit.
	Key      string            `json:"key,omitempty"`
	Value    string            `json:"value,omitempty"`
	Effect   string            `json:"effect,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
	// Pods are the pods (namespace/name) free-port and evict take away.
	Pods []string `json:"pods,omitempty"`
}

// Group is nodes that fail the same way: the same plugins, for the same
// details.
type Group struct {
	Count int `json:"count"`
	// Nodes names the first MaxGroupNodes of them.
	Nodes    []string  `json:"nodes"`
	Failures []Failure `json:"failures"`
}

// Bounds on what an explanation lists: at 5,000 nodes it stays readable and
// a few hundred KB at most.
const (
	MaxClosest    = 10
	MaxGroupNodes = 20
	MaxGroups     = 50
	// MaxEvict is the most pods an evict change names: more is no small
	// change, and the detail says how many.
	MaxEvict = 20
	// MaxUsedBy is the most pods UsedBy names.
	MaxUsedBy = 5
)

// Assemble ranks and groups the nodes' failures and words the sentence.
// nodes holds every node that does not fit; fits the ones that do. try, when
// set, proves the closest nodes' changes (see Trial).
func Assemble(e *Explanation, nodes []Node, fits []string, try func(*Node) *Trial) {
	e.Schema, e.Fits = Schema, fits
	for i := range nodes {
		nodes[i].Distance = distance(nodes[i].Failures)
	}
	e.Groups = group(nodes)
	slices.SortStableFunc(nodes, func(a, b Node) int {
		if c := cmp.Compare(a.Distance.Plugins, b.Distance.Plugins); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Distance.Size, b.Distance.Size); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	e.Closest = nodes[:min(len(nodes), MaxClosest)]
	if try != nil {
		for i := range e.Closest {
			e.Closest[i].Tried = try(&e.Closest[i])
		}
	}
	e.Sentence = sentence(e) + groupWords(e.PodGroup)
}

// groupWords says what the pod's group adds to its fit, after the sentence.
func groupWords(g *PodGroup) string {
	if g == nil {
		return ""
	}
	key := g.Namespace + "/" + g.Name
	switch {
	case g.Missing:
		return fmt.Sprintf(" It belongs to pod group %s, which does not exist yet: it waits for it.", key)
	case g.MinCount > 0 && int32(g.Pods) < g.MinCount:
		return fmt.Sprintf(" It is placed only with its pod group %s, which has %d of the %d pods its minimum needs: GangScheduling holds them back until the others exist.", key, g.Pods, g.MinCount)
	case g.TurnedAway != "":
		return fmt.Sprintf(" It is placed only with its pod group %s, whose last try failed: %s.", key, strings.TrimSuffix(g.TurnedAway, "."))
	case g.MinCount > 0:
		return fmt.Sprintf(" It is placed only with its pod group %s, at least %d of its pods together.", key, g.MinCount)
	}
	return fmt.Sprintf(" It is placed only with its pod group %s.", key)
}

// Tryable says whether every failure of the node comes with a change.
func (n *Node) Tryable() bool {
	for _, f := range n.Failures {
		if f.Change == nil {
			return false
		}
	}
	return len(n.Failures) > 0
}

func distance(fs []Failure) Distance {
	d := Distance{Plugins: len(fs)}
	for _, f := range fs {
		d.Size += f.Size
	}
	return d
}

// group gathers nodes whose failures read the same (plugin, detail or
// reason), biggest group first.
func group(nodes []Node) []Group {
	byKey := map[string]*Group{}
	var order []string
	for _, n := range nodes {
		parts := make([]string, len(n.Failures))
		for i, f := range n.Failures {
			parts[i] = f.Plugin + ": " + cmp.Or(f.Detail, f.Reason)
		}
		key := strings.Join(parts, " | ")
		g, ok := byKey[key]
		if !ok {
			g = &Group{Failures: n.Failures}
			byKey[key] = g
			order = append(order, key)
		}
		g.Count++
		if len(g.Nodes) < MaxGroupNodes {
			g.Nodes = append(g.Nodes, n.Name)
		}
	}
	groups := make([]Group, 0, len(order))
	for _, k := range order {
		groups = append(groups, *byKey[k])
	}
	slices.SortStableFunc(groups, func(a, b Group) int { return cmp.Compare(b.Count, a.Count) })
	return groups[:min(len(groups), MaxGroups)]
}

// sentence answers in one sentence: where the pod fits, or that it fits
// nowhere and what the closest nodes and the biggest group would need.
func sentence(e *Explanation) string {
	switch {
	case e.PodReason != nil:
		return fmt.Sprintf("Fits nowhere: %s turns the pod away before any node is looked at: %s.", e.PodReason.Plugin, strings.TrimSuffix(e.PodReason.Reason, "."))
	case len(e.Fits) > 0 && e.PodGroup != nil:
		// Its group decides when it goes (groupWords).
		return fmt.Sprintf("Fits on %s on its own.", nodeWords(e.Fits, len(e.Fits)))
	case len(e.Fits) > 0:
		return fmt.Sprintf("Fits on %s now: it waits for its next attempt.", nodeWords(e.Fits, len(e.Fits)))
	case e.Nodes == 0:
		return "Fits nowhere: there are no nodes."
	case len(e.Closest) == 0:
		return "Fits nowhere."
	}
	var parts []string
	// The closest are the nodes as close as the first that need the same:
	// as many plugins to satisfy, changes as big, in the same words.
	best, need := e.Closest[0].Distance, needs(e.Closest[0].Failures)
	var closest []string
	for _, n := range e.Closest {
		if n.Distance == best && needs(n.Failures) == need {
			closest = append(closest, n.Name)
		}
	}
	count := len(closest)
	// The closest list stops at MaxClosest; the group that needs the same
	// counts them all.
	for _, g := range e.Groups {
		if g.Count > count && needs(g.Failures) == need {
			closest, count = g.Nodes, g.Count
			break
		}
	}
	first := "Closest: " + needWords(closest, count, e.Closest[0].Failures)
	switch t := e.Closest[0].Tried; {
	case t == nil:
		first += " (unproven)"
	case t.Fits:
		first += " (tried: it then fits)"
	default:
		first += " (tried: not enough)"
	}
	parts = append(parts, first)
	// The biggest group, unless it needs what the closest need, or it is
	// one node of many that each fail their own way.
	if len(e.Groups) > 0 && needs(e.Groups[0].Failures) != need && (e.Groups[0].Count > 1 || len(e.Groups) == 2) {
		g := e.Groups[0]
		parts = append(parts, needWords(g.Nodes, g.Count, g.Failures))
	}
	out := "Fits nowhere. " + strings.Join(parts, "; ") + "."
	if p := e.Preemption; p != nil && p.Helps {
		out += fmt.Sprintf(" Preemption would make room on %s, evicting %s.", p.Node, strings.Join(p.Victims, ", "))
	}
	return out
}

// needWords says what nodes need: "node-17 needs 200m less cpu", "3 nodes
// (a, b, c) need a toleration for dedicated=batch:NoSchedule".
func needWords(names []string, count int, fs []Failure) string {
	verb := "need"
	if count == 1 {
		verb = "needs"
	}
	return nodeWords(names, count) + " " + verb + " " + needs(fs)
}

// needs says what failures ask for, joined by "and".
func needs(fs []Failure) string {
	words := make([]string, 0, len(fs))
	for _, f := range fs {
		w := strings.TrimSuffix(f.Reason, ".")
		switch {
		case f.Change != nil:
			w = f.Change.Words
		case f.Detail != "":
			w = f.Detail
		}
		// Two plugins may ask for the same (both want a pod gone).
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return strings.Join(words, ", and ")
}

// nodeWords names a few nodes and counts the rest: "node-17", "3 nodes
// (a, b, c)", "2,000 nodes (a, b, c, ...)".
func nodeWords(names []string, count int) string {
	if count == 1 && len(names) == 1 {
		return names[0]
	}
	shown := names[:min(len(names), 3)]
	more := ""
	if count > len(shown) {
		more = ", ..."
	}
	return fmt.Sprintf("%s nodes (%s%s)", thousands(count), strings.Join(shown, ", "), more)
}

// thousands writes n with commas: 2,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
