package minisched

import (
	"sync/atomic"

	fwk "k8s.io/kube-scheduler/framework"

	"minisched/minisched/event"
)

// scratch holds the working tables of Filter and Score. They grow with the
// cluster, live for one cycle, and are not what the events keep: at 5,000
// nodes they were about half of what a cycle allocated, and the garbage
// collector's work follows the bytes. The scheduler runs one cycle at a
// time, and each borrows them from the one before.
type scratch struct {
	// filter is nil while a pass holds it, and stays nil when a pass is
	// abandoned at its timeout: its goroutine may still write there.
	filter *filterScratch
	totals []fwk.NodePluginScores
}

// nodeCheck is what Filter found on one node. The fixed arrays hold the
// row's columns for up to 16 plugins without an allocation of their own.
type nodeCheck struct {
	row    event.NodeFilter
	status *fwk.Status
	codes  [16]int
	nanos  [16]int64
}

// filterScratch is one Filter pass's working table.
type filterScratch struct {
	// results has one entry per node of the pass, nil where the pass did
	// not reach it (enough nodes fit already).
	results []*nodeCheck
	// checks are handed out in turn by next; past the end, a check is
	// allocated on its own.
	checks []nodeCheck
	next   atomic.Int64
}

// takeFilter lends a pass over n nodes its table, every entry nil.
func (s *scratch) takeFilter(n int) *filterScratch {
	fs := s.filter
	s.filter = nil
	if fs == nil {
		fs = &filterScratch{}
	}
	if len(fs.results) < n {
		fs.results = make([]*nodeCheck, n)
	}
	fs.results = fs.results[:n]
	return fs
}

// putFilter takes the table back once the pass returned; the next pass has
// room for as many nodes as this one reached.
func (s *scratch) putFilter(fs *filterScratch) {
	used := int(fs.next.Load())
	clear(fs.results)
	if used > len(fs.checks) {
		fs.checks = make([]nodeCheck, used)
	}
	fs.next.Store(0)
	s.filter = fs
}

// check hands out an empty nodeCheck for the node named.
func (fs *filterScratch) check(node string) *nodeCheck {
	var res *nodeCheck
	if i := fs.next.Add(1) - 1; i < int64(len(fs.checks)) {
		res = &fs.checks[i]
		*res = nodeCheck{}
	} else {
		res = new(nodeCheck)
	}
	res.row.Node = node
	return res
}

// rows copies what the pass found into the rows an event keeps, every
// row's columns in two arrays of their exact size.
func (fs *filterScratch) rows() []event.NodeFilter {
	reached, cols := 0, 0
	for _, res := range fs.results {
		if res != nil {
			reached++
			cols += len(res.row.Codes)
		}
	}
	codes, nanos := make([]int, cols), make([]int64, cols)
	rows := make([]event.NodeFilter, 0, reached)
	for _, res := range fs.results {
		if res == nil {
			continue
		}
		row := res.row
		if row.Codes != nil {
			// Nothing in the row may point into the scratch: the next
			// pass writes there.
			k := len(row.Codes)
			row.Codes, codes = codes[:k:k], codes[k:]
			row.Nanos, nanos = nanos[:k:k], nanos[k:]
			copy(row.Codes, res.row.Codes)
			copy(row.Nanos, res.row.Nanos)
		}
		rows = append(rows, row)
	}
	return rows
}

// totalsFor lends n entries for the nodes' totals, which selectHost
// reorders and the cycle then lets go.
func (s *scratch) totalsFor(n int) []fwk.NodePluginScores {
	if cap(s.totals) < n {
		s.totals = make([]fwk.NodePluginScores, n)
	}
	return s.totals[:n]
}
