package explain

import (
	"fmt"
	"testing"
)

func TestSentence(t *testing.T) {
	cpu := func(words string, size float64) Failure {
		return Failure{Plugin: "NodeResourcesFit", Reason: "Insufficient cpu", Detail: "cpu: " + words, Size: size,
			Change: &Change{Kind: "reduce-request", On: "pod", Words: "the pod to request " + words}}
	}
	taint := Failure{Plugin: "TaintToleration", Reason: "untolerated", Detail: "untolerated taint a=b:NoSchedule", Size: 1,
		Change: &Change{Kind: "add-toleration", On: "pod", Words: "a toleration for a=b:NoSchedule"}}
	many := func(n int, f Failure) []Node {
		out := make([]Node, n)
		for i := range out {
			out[i] = Node{Name: fmt.Sprintf("t-%04d", i), Failures: []Failure{f}}
		}
		return out
	}
	fits := func(*Node) *Trial { return &Trial{Fits: true} }
	tests := []struct {
		name  string
		e     Explanation
		nodes []Node
		fits  []string
		try   func(*Node) *Trial
		want  string
	}{
		{
			name: "no nodes",
			want: "Fits nowhere: there are no nodes.",
		},
		{
			name: "fits somewhere: it waits for its next attempt",
			e:    Explanation{Nodes: 2},
			fits: []string{"a", "b"},
			want: "Fits on 2 nodes (a, b) now: it waits for its next attempt.",
		},
		{
			name: "a PreFilter plugin turns the pod away",
			e:    Explanation{Nodes: 3, PodReason: &Failure{Plugin: "VolumeBinding", Reason: "pod has unbound immediate PersistentVolumeClaims."}},
			want: "Fits nowhere: VolumeBinding turns the pod away before any node is looked at: pod has unbound immediate PersistentVolumeClaims.",
		},
		{
			name:  "the closest first, and the biggest group",
			e:     Explanation{Nodes: 2001},
			nodes: append(many(2000, taint), Node{Name: "small", Failures: []Failure{cpu("200m less cpu", 0.2)}}),
			try:   fits,
			want:  "Fits nowhere. Closest: small needs the pod to request 200m less cpu (tried: it then fits); 2,000 nodes (t-0000, t-0001, t-0002, ...) need a toleration for a=b:NoSchedule.",
		},
		{
			name:  "more nodes as close than the closest list holds: the group counts them",
			e:     Explanation{Nodes: 30},
			nodes: many(30, taint),
			want:  "Fits nowhere. Closest: 30 nodes (t-0000, t-0001, t-0002, ...) need a toleration for a=b:NoSchedule (unproven).",
		},
		{
			name:  "nodes as close that need different things are not counted together",
			e:     Explanation{Nodes: 2},
			nodes: []Node{{Name: "b", Failures: []Failure{taint}}, {Name: "a", Failures: []Failure{{Plugin: "NodeUnschedulable", Reason: "cordoned", Size: 1, Change: &Change{Kind: "uncordon", Words: "to be uncordoned"}}}}},
			want:  "Fits nowhere. Closest: a needs to be uncordoned (unproven); b needs a toleration for a=b:NoSchedule.",
		},
		{
			name:  "nodes as close that need the same are counted together",
			e:     Explanation{Nodes: 2},
			nodes: []Node{{Name: "b", Failures: []Failure{taint}}, {Name: "a", Failures: []Failure{taint}}},
			try:   func(*Node) *Trial { return &Trial{Failures: []Failure{{Plugin: "NodePorts"}}} },
			want:  "Fits nowhere. Closest: 2 nodes (a, b) need a toleration for a=b:NoSchedule (tried: not enough).",
		},
		{
			name:  "preemption would help",
			e:     Explanation{Nodes: 1, Preemption: &Preemption{Helps: true, Node: "a", Victims: []string{"default/low"}, Candidates: 1}},
			nodes: []Node{{Name: "a", Failures: []Failure{cpu("1 less cpu", 1)}}},
			try:   fits,
			want:  "Fits nowhere. Closest: a needs the pod to request 1 less cpu (tried: it then fits). Preemption would make room on a, evicting default/low.",
		},
		{
			name: "a gang's pod whose PodGroup is not there yet",
			e:    Explanation{Nodes: 1, PodGroup: &PodGroup{Namespace: "default", Name: "trio", Missing: true}},
			fits: []string{"a"},
			want: "Fits on a on its own. It belongs to pod group default/trio, which does not exist yet: it waits for it.",
		},
		{
			name: "a gang short of pods",
			e:    Explanation{Nodes: 1, PodGroup: &PodGroup{Namespace: "default", Name: "trio", MinCount: 3, Pods: 2}},
			fits: []string{"a"},
			want: "Fits on a on its own. It is placed only with its pod group default/trio, which has 2 of the 3 pods its minimum needs: GangScheduling holds them back until the others exist.",
		},
		{
			name: "a gang turned away: the pod fits, the group does not",
			e:    Explanation{Nodes: 2, PodGroup: &PodGroup{Namespace: "default", Name: "trio", MinCount: 3, Pods: 3, TurnedAway: "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"}},
			fits: []string{"a", "b"},
			want: "Fits on 2 nodes (a, b) on its own. It is placed only with its pod group default/trio, whose last try failed: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining.",
		},
		{
			name: "a gang complete, not tried yet",
			e:    Explanation{Nodes: 1, PodGroup: &PodGroup{Namespace: "default", Name: "trio", MinCount: 3, Pods: 3}},
			fits: []string{"a"},
			want: "Fits on a on its own. It is placed only with its pod group default/trio, at least 3 of its pods together.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.e
			Assemble(&e, tt.nodes, tt.fits, tt.try)
			if e.Sentence != tt.want {
				t.Errorf("sentence\n got %q\nwant %q", e.Sentence, tt.want)
			}
			if e.Schema != Schema {
				t.Errorf("schema %q", e.Schema)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	var nodes []Node
	for i := range 5000 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("n-%d", i), Failures: []Failure{{Plugin: "P", Reason: fmt.Sprintf("reason %d", i%100), Size: 1}}})
	}
	e := Explanation{Nodes: len(nodes)}
	Assemble(&e, nodes, nil, nil)
	if len(e.Closest) != MaxClosest || len(e.Groups) != MaxGroups {
		t.Fatalf("%d closest, %d groups; want %d, %d", len(e.Closest), len(e.Groups), MaxClosest, MaxGroups)
	}
	for _, g := range e.Groups {
		if g.Count != 50 || len(g.Nodes) != MaxGroupNodes {
			t.Errorf("group of %d with %d names; want 50 with %d", g.Count, len(g.Nodes), MaxGroupNodes)
		}
	}
}
