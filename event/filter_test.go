package event

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func TestFilterJSON(t *testing.T) {
	tests := []struct {
		name string
		f    *FilterResults
		want string
	}{
		{"rows of their own lengths, the failing one with its reason",
			filterOf(t, []string{"NodeName", "NodeResourcesFit"}, []NodeFilter{
				{Node: "a", Codes: []int{0, 2}, Nanos: []int64{5, 6}, Reason: "Insufficient cpu"},
				{Node: "b", Codes: []int{3}, Nanos: []int64{7}, Reason: "node(s) didn't match the requested node name", Nominated: true},
				{Node: "c", Codes: []int{0, 0}, Nanos: []int64{8, 9}},
			}, 40, false),
			`{"plugins":["NodeName","NodeResourcesFit"],"nodes":[` +
				`{"node":"a","codes":[0,2],"nanos":[5,6],"reason":"Insufficient cpu"},` +
				`{"node":"b","codes":[3],"nanos":[7],"reason":"node(s) didn't match the requested node name","nominated":true},` +
				`{"node":"c","codes":[0,0],"nanos":[8,9]}],"nanos":40}`},
		{"no Filter plugin: every row empty",
			filterOf(t, []string{}, []NodeFilter{{Node: "a"}, {Node: "b"}}, 0, true),
			`{"plugins":[],"nodes":[{"node":"a","codes":[],"nanos":[]},{"node":"b","codes":[],"nanos":[]}],"nanos":0,"nominatedNode":true}`},
		{"nil lists", &FilterResults{}, `{"plugins":null,"nodes":null,"nanos":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("MarshalJSON:\n got %s\nwant %s", got, tt.want)
			}
			var back FilterResults
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(&back); string(again) != tt.want {
				t.Errorf("read back and written again:\n got %s\nwant %s", again, tt.want)
			}
		})
	}
}

func TestFilterFailedAt(t *testing.T) {
	f := filterOf(t, []string{"x", "y", "z"}, []NodeFilter{
		{Node: "passed", Codes: []int{0, 0, 0}, Nanos: make([]int64, 3)},
		{Node: "stopped at y", Codes: []int{0, 2}, Nanos: make([]int64, 2)},
		{Node: "stopped at x", Codes: []int{3}, Nanos: make([]int64, 1)},
		{Node: "none ran", Codes: []int{}, Nanos: []int64{}},
	}, 0, false)
	if got, want := []int{f.FailedAt(0), f.FailedAt(1), f.FailedAt(2), f.FailedAt(3)}, []int{-1, 1, 0, -1}; !reflect.DeepEqual(got, want) {
		t.Errorf("FailedAt %v, want %v", got, want)
	}
}

// TestFilterJSONRoundTrips reads back what it wrote, on matrices shaped like
// a big cluster's.
func TestFilterJSONRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for i := range 20 {
		f := randomMatrix(rng, KindFilter, 1+rng.Intn(300)).Filter
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var back FilterResults
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("matrix %d: %v", i, err)
		}
		if !reflect.DeepEqual(&back, f) {
			t.Fatalf("matrix %d changed on the way back", i)
		}
	}
}

func TestFilterJSONRefusesRowsThatDoNotFit(t *testing.T) {
	tests := []struct {
		name, rows, want string
	}{
		{"more codes than plugins", `[{"node":"a","codes":[0,0,0],"nanos":[1,2,3]}]`, "3 codes and 3 timings"},
		{"a code without its timing", `[{"node":"a","codes":[0,2],"nanos":[1]}]`, "2 codes and 1 timings"},
		{"a code out of range", `[{"node":"a","codes":[0,300],"nanos":[1,2]}]`, "code 300 is no framework code"},
		{"a negative code", `[{"node":"a","codes":[-1],"nanos":[1]}]`, "code -1 is no framework code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"plugins":["x","y"],"nodes":` + tt.rows + `}`
			var f FilterResults
			err := json.Unmarshal([]byte(data), &f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
