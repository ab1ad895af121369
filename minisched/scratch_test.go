package minisched

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"minisched/event"
)

// TestFilterScratchRowsOutliveTheTable: the columns a Filter event keeps
// must not change when the next pass reuses the table.
func TestFilterScratchRowsOutliveTheTable(t *testing.T) {
	// pass fills a table over n nodes; reached names the nodes checked and
	// how many plugin columns each got.
	pass := func(s *scratch, n int, reached map[int]int, seed int) []event.NodeFilter {
		fs := s.takeFilter(n)
		for i, cols := range reached {
			res := fs.check(fmt.Sprintf("node-%d", i))
			if cols >= 0 {
				res.codes, res.nanos = res.codeBuf[:0], res.nanoBuf[:0]
			}
			for j := range cols {
				res.codes = append(res.codes, int8(seed+j))
				res.nanos = append(res.nanos, int64(seed+j))
			}
			fs.results[i] = res
		}
		f := fs.event([]string{"a", "b", "c", "d"})
		s.putFilter(fs)
		return f.Rows()
	}
	row := func(i int, codes []int, nanos []int64) event.NodeFilter {
		return event.NodeFilter{Node: fmt.Sprintf("node-%d", i), Codes: codes, Nanos: nanos}
	}
	tests := []struct {
		name    string
		n       int
		reached map[int]int
		want    []event.NodeFilter
	}{
		{
			name:    "rows in node order, only the nodes reached",
			n:       5,
			reached: map[int]int{3: 2, 1: 1},
			want:    []event.NodeFilter{row(1, []int{1}, []int64{1}), row(3, []int{1, 2}, []int64{1, 2})},
		},
		{
			name:    "a node stopped before its first plugin keeps empty columns",
			n:       2,
			reached: map[int]int{0: 0},
			want:    []event.NodeFilter{row(0, []int{}, []int64{})},
		},
		{
			name:    "a node never checked (no Filter plugin) has empty columns",
			n:       2,
			reached: map[int]int{1: -1},
			want:    []event.NodeFilter{row(1, []int{}, []int64{})},
		},
		{
			name:    "more nodes reached than the table held before",
			n:       40,
			reached: map[int]int{0: 3, 10: 3, 20: 3, 30: 3, 39: 1},
			want: []event.NodeFilter{
				row(0, []int{1, 2, 3}, []int64{1, 2, 3}), row(10, []int{1, 2, 3}, []int64{1, 2, 3}),
				row(20, []int{1, 2, 3}, []int64{1, 2, 3}), row(30, []int{1, 2, 3}, []int64{1, 2, 3}),
				row(39, []int{1}, []int64{1}),
			},
		},
	}
	var s scratch
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := pass(&s, tc.n, tc.reached, 1)
			// The next pass writes other values over every check.
			every := map[int]int{}
			for i := range tc.n + 10 {
				every[i] = 4
			}
			pass(&s, tc.n+10, every, 100)
			if diff := cmp.Diff(tc.want, rows); diff != "" {
				t.Errorf("rows changed by the next pass (-want +got):\n%s", diff)
			}
			if fs := s.takeFilter(tc.n); fs.next.Load() != 0 || slices.ContainsFunc(fs.results, func(r *nodeCheck) bool { return r != nil }) {
				t.Errorf("a table lent again is not empty")
			} else {
				s.putFilter(fs)
			}
		})
	}
}
