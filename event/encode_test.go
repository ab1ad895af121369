package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// reference is Event without its MarshalJSON.
type reference Event

// asRows is e for encoding/json to write as MarshalJSON should: its
// matrices as rows. A matrix is the last field of an event that has one
// and no other payload, so it is written last here too.
func asRows(e *Event) any {
	if !e.matrixOnly() {
		return (*reference)(e)
	}
	r := struct {
		*reference
		Filter *filterRows `json:"filter,omitempty"`
		Score  *scoreRows  `json:"score,omitempty"`
	}{reference: (*reference)(e)}
	if f := e.Filter; f != nil {
		r.Filter = &filterRows{Plugins: f.Plugins, Nodes: f.Rows(), Nanos: f.Nanos, NominatedNode: f.NominatedNode, Batch: f.Batch}
	}
	if s := e.Score; s != nil {
		r.Score = &scoreRows{Plugins: s.Plugins, Nodes: s.Rows(), Nanos: s.Nanos, Batch: s.Batch}
	}
	return r
}

// filterOf is rows in columns.
func filterOf(t testing.TB, plugins []string, rows []NodeFilter, nanos int64, nominatedNode bool) *FilterResults {
	t.Helper()
	f, err := FilterFrom(plugins, rows)
	if err != nil {
		t.Fatal(err)
	}
	f.Nanos, f.NominatedNode = nanos, nominatedNode
	return f
}

func TestMarshalJSONMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 6, 40, 1, 123456789, time.FixedZone("CET", 3600))
	pod := &PodRef{Namespace: "default", Name: "web-1", UID: "0f1e"}
	tests := []struct {
		name string
		e    Event
	}{
		{"filter over two nodes, one failing", Event{Seq: 7, Time: at, Kind: KindFilter, Pod: pod, Cycle: 3, Filter: filterOf(t,
			[]string{"NodeUnschedulable", "TaintToleration"}, []NodeFilter{
				{Node: "node-1", Codes: []int{0, 0}, Nanos: []int64{120, 3400}},
				{Node: "node-2", Codes: []int{0, 2}, Nanos: []int64{99, 1}, Reason: "node(s) had untolerated taint {dedicated: gpu}", Nominated: true},
			}, 51234, true)}},
		{"filter with nil and empty lists", Event{Seq: 1, Kind: KindFilter, Filter: filterOf(t, nil, []NodeFilter{{Codes: []int{}, Nanos: []int64{}}}, 0, false)}},
		{"filter with no nodes", Event{Seq: 2, Kind: KindFilter, Pod: &PodRef{}, Filter: filterOf(t, []string{}, []NodeFilter{}, 0, false)}},
		{"names encoding/json escapes", Event{Seq: 3, Kind: KindFilter, Pod: &PodRef{Name: "ünïcode\"<&>"}, Filter: filterOf(t,
			[]string{"a\\b", "tab\there"}, []NodeFilter{{Node: "n\x01", Codes: []int{3}, Nanos: []int64{-1}, Reason: "bad \xff utf-8 \u2028"}}, 0, false)}},
		{"score with a failed plugin", Event{Seq: 9, Time: at, Kind: KindScore, Pod: pod, Cycle: 3, Score: &ScoreResults{
			Plugins:   []ScorePlugin{{Name: "NodeResourcesFit", Weight: 1}, {Name: "ImageLocality", Weight: 2, Code: 1, Reason: "boom"}, {Name: "http://127.0.0.1:8888/", Weight: 3, Extender: true, Nanos: 1500}},
			NodeNames: []string{"node-1", ""}, Raw: []int64{50, 0, 0, 0}, PluginNanos: []int64{800, 12, 0, 0},
			Nanos: 9000}}},
		{"a batch's recheck", Event{Seq: 13, Kind: KindFilter, Pod: pod, Filter: func() *FilterResults {
			f := filterOf(t, []string{"NodeResourcesFit"}, []NodeFilter{{Node: "node-1", Codes: []int{2}, Nanos: []int64{40}, Reason: "Insufficient cpu"}}, 90, false)
			f.Batch = BatchRecheck
			return f
		}()}},
		{"a batch's rescore", Event{Seq: 14, Kind: KindScore, Pod: pod, Score: &ScoreResults{
			Plugins:   []ScorePlugin{{Name: "NodeResourcesFit", Weight: 1}},
			NodeNames: []string{"node-2", "node-1"}, Raw: []int64{50, 40}, Normalized: []int64{50, 40}, PluginNanos: []int64{0, 300},
			Nanos: 700, Batch: BatchRescore}}},
		{"score with nil lists", Event{Seq: 10, Kind: KindScore, Score: &ScoreResults{}}},
		{"a queue move goes through encoding/json", Event{Seq: 11, Time: at, Kind: KindQueue, Pod: pod, Queue: &QueueMove{To: ActiveQ, Plugins: []string{"x"}}}},
		{"a filter event with a summary goes through encoding/json", Event{Seq: 12, Kind: KindFilter, Filter: &FilterResults{}, Summary: &CycleSummary{ID: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(asRows(&tt.e))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tt.e.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("MarshalJSON:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestMarshalJSONMatchesOnRandomMatrices compares the two encoders on
// matrices shaped like a big cluster's.
func TestMarshalJSONMatchesOnRandomMatrices(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		kind := KindFilter
		if i%2 == 1 {
			kind = KindScore
		}
		e := randomMatrix(rng, kind, 1+rng.Intn(300))
		want, _ := json.Marshal(asRows(&e))
		got, err := e.MarshalJSON()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("event %d differs (%v):\n got %s\nwant %s", i, err, got, want)
		}
	}
}

func randomMatrix(rng *rand.Rand, kind Kind, nodes int) Event {
	e := Event{Seq: rng.Uint64(), Time: time.Unix(0, rng.Int63()), Kind: kind, Pod: &PodRef{Namespace: "ns", Name: "p", UID: "u"}, Cycle: rng.Int63()}
	plugins := []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "PodTopologySpread"}
	if kind == KindFilter {
		f := NewFilterResults(plugins, nodes, nodes*len(plugins))
		f.Nanos = rng.Int63()
		for n := 0; n < nodes; n++ {
			k := 1 + rng.Intn(len(plugins))
			codes, nanos := make([]int8, k), make([]int64, k)
			for j := range codes {
				codes[j], nanos[j] = int8(rng.Intn(8)), rng.Int63n(1e6)
			}
			reason := ""
			if rng.Intn(4) == 0 {
				reason = "Insufficient cpu"
			}
			f.AddRow(fmt.Sprintf("node-%05d", n), codes, nanos, reason, rng.Intn(10) == 0)
		}
		e.Filter = f
		return e
	}
	var scorePlugins []ScorePlugin
	for _, p := range plugins[:7] {
		scorePlugins = append(scorePlugins, ScorePlugin{Name: p, Weight: rng.Int63n(10), NormalizeNanos: rng.Int63n(100)})
	}
	s := NewScoreResults(scorePlugins, nodes)
	s.Nanos = rng.Int63()
	for n := range nodes {
		s.NodeNames[n] = fmt.Sprintf("node-%05d", n)
	}
	for i := range s.Raw {
		s.Raw[i], s.Normalized[i], s.PluginNanos[i] = rng.Int63n(100), rng.Int63n(100), rng.Int63n(1e5)
	}
	e.Score = s
	return e
}

// BenchmarkMarshalJSON compares the hand-written encoder with
// encoding/json on a Score event of 500 nodes, the size Score reaches on a
// 5,000-node cluster, as rows: go test ./event -bench MarshalJSON -benchmem
func BenchmarkMarshalJSON(b *testing.B) {
	e := randomMatrix(rand.New(rand.NewSource(2)), KindScore, 500)
	rows := asRows(&e)
	b.Run("by hand", func(b *testing.B) {
		for b.Loop() {
			_, _ = e.MarshalJSON()
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(rows)
		}
	})
}
