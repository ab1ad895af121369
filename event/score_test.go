package event

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// rowsOf is s as rows, made with Row.
func rowsOf(s *ScoreResults) scoreRows {
	return scoreRows{Plugins: s.Plugins, Nodes: s.Rows(), Nanos: s.Nanos}
}

// columns reads rows into a ScoreResults the way a recording is read.
func columns(t *testing.T, plugins []ScorePlugin, rows []NodeScore) *ScoreResults {
	t.Helper()
	data, err := json.Marshal(scoreRows{Plugins: plugins, Nodes: rows})
	if err != nil {
		t.Fatal(err)
	}
	var s ScoreResults
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestScoreJSON(t *testing.T) {
	plugins := []ScorePlugin{{Name: "NodeResourcesFit", Weight: 1, NormalizeNanos: 40}, {Name: "TaintToleration", Weight: 3}}
	tests := []struct {
		name string
		s    *ScoreResults
		want string
	}{
		{"weighted and total made from the normalized scores and the weights",
			&ScoreResults{Plugins: plugins, NodeNames: []string{"a", "b"}, Raw: []int64{7, 0, 9, 1}, Normalized: []int64{70, 100, 90, 0}, PluginNanos: []int64{5, 6, 7, 8}, Nanos: 11},
			`{"plugins":[{"name":"NodeResourcesFit","weight":1,"normalizeNanos":40},{"name":"TaintToleration","weight":3}],"nodes":[` +
				`{"node":"a","raw":[7,0],"normalized":[70,100],"weighted":[70,300],"nanos":[5,6],"total":370},` +
				`{"node":"b","raw":[9,1],"normalized":[90,0],"weighted":[90,0],"nanos":[7,8],"total":90}],"nanos":11}`},
		{"Score failed: no normalized scores, none for the node not reached",
			&ScoreResults{Plugins: plugins[1:], NodeNames: []string{"a", ""}, Raw: []int64{4, 0}, PluginNanos: []int64{5, 0}},
			`{"plugins":[{"name":"TaintToleration","weight":3}],"nodes":[` +
				`{"node":"a","raw":[4],"normalized":null,"weighted":null,"nanos":[5],"total":0},` +
				`{"node":"","raw":null,"normalized":null,"weighted":null,"nanos":null,"total":0}],"nanos":0}`},
		{"every plugin skipped",
			NewScoreResults([]ScorePlugin{}, 0),
			`{"plugins":[],"nodes":[],"nanos":0}`},
		{"nil lists", &ScoreResults{}, `{"plugins":null,"nodes":null,"nanos":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("MarshalJSON:\n got %s\nwant %s", got, tt.want)
			}
			if rows, _ := json.Marshal(rowsOf(tt.s)); string(rows) != tt.want {
				t.Errorf("Row disagrees with MarshalJSON:\n got %s\nwant %s", rows, tt.want)
			}
			var back ScoreResults
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(&back); string(again) != tt.want {
				t.Errorf("read back and written again:\n got %s\nwant %s", again, tt.want)
			}
		})
	}
}

// TestScoreJSONRoundTrips reads back what it wrote, on matrices shaped like
// a big cluster's.
func TestScoreJSONRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := range 20 {
		s := randomMatrix(rng, KindScore, 1+rng.Intn(300)).Score
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back ScoreResults
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("matrix %d: %v", i, err)
		}
		if !reflect.DeepEqual(&back, s) {
			t.Fatalf("matrix %d changed on the way back", i)
		}
	}
}

func TestScoreJSONRefusesRowsThatDoNotFit(t *testing.T) {
	tests := []struct {
		name, rows, want string
	}{
		{"too few raw scores", `[{"node":"a","raw":[1],"normalized":[1,2],"nanos":[1,2]}]`, "1 raw scores and 2 timings"},
		{"no timings", `[{"node":"a","raw":[1,2],"normalized":[1,2]}]`, "2 raw scores and 0 timings"},
		{"too many normalized scores", `[{"node":"a","raw":[1,2],"normalized":[1,2,3],"nanos":[1,2]}]`, "3 normalized scores"},
		{"scores for no node", `[{"node":"","raw":[1,2],"nanos":[1,2]}]`, "has scores but no node"},
		{"one row normalized, one not", `[{"node":"a","raw":[1,2],"normalized":[1,2],"nanos":[1,2]},{"node":"b","raw":[1,2],"nanos":[1,2]}]`, "1 of 2 have normalized scores"},
		{"a node not reached in a normalized run", `[{"node":"a","raw":[1,2],"normalized":[1,2],"nanos":[1,2]},{"node":""}]`, "1 of 2 have normalized scores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"plugins":[{"name":"x","weight":1},{"name":"y","weight":1}],"nodes":` + tt.rows + `}`
			var s ScoreResults
			err := json.Unmarshal([]byte(data), &s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
