package minisched

import (
	"sync/atomic"

	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
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

// nodeCheck is what Filter found on one node: its row of the event, and
// its status. The fixed arrays hold the codes and timings of up to 16
// plugins without an allocation of their own.
type nodeCheck struct {
	node      string
	codes     []int8
	nanos     []int64
	reason    string
	nominated bool
	status    *fwk.Status
	codeBuf   [16]int8
	nanoBuf   [16]int64
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
	res.node = node
	return res
}

// event copies what the pass found into the event's columns, each in one
// allocation of its exact size.
func (fs *filterScratch) event(plugins []string) *event.FilterResults {
	reached, calls := 0, 0
	for _, res := range fs.results {
		if res != nil {
			reached++
			calls += len(res.codes)
		}
	}
	f := event.NewFilterResults(plugins, reached, calls)
	for _, res := range fs.results {
		if res != nil {
			f.AddRow(res.node, res.codes, res.nanos, res.reason, res.nominated)
		}
	}
	return f
}

// totalsFor lends n entries for the nodes' totals, which selectHost
// reorders and the cycle then lets go.
func (s *scratch) totalsFor(n int) []fwk.NodePluginScores {
	if cap(s.totals) < n {
		s.totals = make([]fwk.NodePluginScores, n)
	}
	return s.totals[:n]
}
