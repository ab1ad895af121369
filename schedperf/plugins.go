package schedperf

// What each plugin costs, from minisched's events: every call at every
// extension point, kept as a histogram per point and plugin (a run makes
// millions of Filter calls; their times are not kept one by one).

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"

	"minisched/event"
)

// Plugins is an event.Observer that times every plugin call, per
// extension point and plugin, and the cycles they ran in.
type Plugins struct {
	mu     sync.Mutex
	byCall map[call]*histogram
	cycles int
	// cycleNanos is the scheduling cycles' wall time, binding cycles'
	// apart: what a plugin's share is of. A pod group's member cycles all
	// last until the group's cycle ends, so only its first pod's counts:
	// members lists the others until they end.
	cycleNanos int64
	members    map[int64]bool
}

type call struct{ point, plugin string }

// NewPlugins returns an empty Plugins.
func NewPlugins() *Plugins {
	return &Plugins{byCall: map[call]*histogram{}, members: map[int64]bool{}}
}

// Observe takes the plugin calls an event reports.
func (p *Plugins) Observe(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case e.CycleStart != nil:
		if g := e.CycleStart.Group; g != nil && g.Member > 1 {
			p.members[e.Cycle] = true
		}
	case e.CycleEnd != nil:
		p.cycles++
		if p.members[e.Cycle] {
			delete(p.members, e.Cycle)
			break
		}
		p.cycleNanos += e.CycleEnd.Nanos
	case e.Point != nil:
		for _, r := range e.Point.Results {
			p.add(e.Point.Point, r.Plugin, r.Nanos)
		}
	case e.Filter != nil:
		// A Filter or Score event holds every node's calls: the histograms
		// are looked up once per plugin, not once per call.
		f := e.Filter
		hs := p.histograms("Filter", f.Plugins)
		for i := range f.NodeNames {
			_, nanos := f.Calls(i)
			for j, n := range nanos {
				hs[j].add(n)
			}
		}
	case e.Score != nil:
		s, k := e.Score, len(e.Score.Plugins)
		for j, pl := range s.Plugins {
			if pl.Extender {
				continue
			}
			h := p.histogram("Score", pl.Name)
			for i := range s.NodeNames {
				if s.Reached(i) {
					h.add(s.PluginNanos[i*k+j])
				}
			}
			if pl.NormalizeNanos > 0 {
				p.add("NormalizeScore", pl.Name, pl.NormalizeNanos)
			}
		}
	}
}

func (p *Plugins) add(point, plugin string, nanos int64) {
	p.histogram(point, plugin).add(nanos)
}

func (p *Plugins) histograms(point string, plugins []string) []*histogram {
	hs := make([]*histogram, len(plugins))
	for j, pl := range plugins {
		hs[j] = p.histogram(point, pl)
	}
	return hs
}

func (p *Plugins) histogram(point, plugin string) *histogram {
	h := p.byCall[call{point, plugin}]
	if h == nil {
		h = &histogram{}
		p.byCall[call{point, plugin}] = h
	}
	return h
}

// PluginRow is one plugin at one extension point.
type PluginRow struct {
	Point  string `json:"point"`
	Plugin string `json:"plugin"`
	Calls  int64  `json:"calls"`
	// P50, P90 and P99 are the calls' times, to within 5%.
	P50 time.Duration `json:"p50"`
	P90 time.Duration `json:"p90"`
	P99 time.Duration `json:"p99"`
	// Total is the calls' time summed; Share is Total over the scheduling
	// cycles' wall time (Filter and Score run on several nodes at once, so
	// their shares may add up to more than the whole). The binding cycle's
	// points have none: they run beside the scheduling cycles.
	Total time.Duration `json:"total"`
	Share float64       `json:"share"`
	// Binding says the point is in the binding cycle.
	Binding bool `json:"binding,omitempty"`
}

// bindingPoints are the binding cycle's.
var bindingPoints = []string{"WaitOnPermit", "PreBindPreFlight", "PreBind", "Bind", "PostBind"}

// pointOrder is the framework's order of the extension points.
var pointOrder = []string{"PreEnqueue", "PreFilter", "Filter", "PostFilter", "PreScore", "Score", "NormalizeScore",
	"Reserve", "Permit", "WaitOnPermit", "PreBindPreFlight", "PreBind", "Bind", "PostBind", "Unreserve"}

// Rows are the plugins' figures, in the framework's order of the points,
// then by total time.
func (p *Plugins) Rows() (rows []PluginRow, cycles int, cycleTime time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, h := range p.byCall {
		r := PluginRow{Point: c.point, Plugin: c.plugin, Calls: h.n, P50: h.quantile(0.50), P90: h.quantile(0.90), P99: h.quantile(0.99), Total: time.Duration(h.sum),
			Binding: slices.Contains(bindingPoints, c.point)}
		if p.cycleNanos > 0 && !r.Binding {
			r.Share = float64(h.sum) / float64(p.cycleNanos)
		}
		rows = append(rows, r)
	}
	rank := func(point string) int {
		if i := slices.Index(pointOrder, point); i >= 0 {
			return i
		}
		return len(pointOrder)
	}
	slices.SortFunc(rows, func(a, b PluginRow) int {
		if ra, rb := rank(a.Point), rank(b.Point); ra != rb {
			return ra - rb
		}
		if a.Total != b.Total {
			return int(b.Total - a.Total)
		}
		if a.Plugin < b.Plugin {
			return -1
		}
		return 1
	})
	return rows, p.cycles, time.Duration(p.cycleNanos)
}

// Recorded is what a Plugins observed, to carry from the process that ran
// a workload to the one that reports on several (Merge).
type Recorded struct {
	Calls      []RecordedCall `json:"calls"`
	Cycles     int            `json:"cycles"`
	CycleNanos int64          `json:"cycleNanos"`
}

// RecordedCall is one point and plugin's histogram; Buckets maps a
// bucket's index to its count, the empty ones left out.
type RecordedCall struct {
	Point   string        `json:"point"`
	Plugin  string        `json:"plugin"`
	N       int64         `json:"n"`
	Sum     int64         `json:"sum"`
	Buckets map[int]int64 `json:"buckets"`
}

// Record returns what p has observed.
func (p *Plugins) Record() Recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := Recorded{Cycles: p.cycles, CycleNanos: p.cycleNanos}
	for c, h := range p.byCall {
		rc := RecordedCall{Point: c.point, Plugin: c.plugin, N: h.n, Sum: h.sum, Buckets: map[int]int64{}}
		for b, n := range h.buckets {
			if n > 0 {
				rc.Buckets[b] = n
			}
		}
		r.Calls = append(r.Calls, rc)
	}
	return r
}

// Merge adds what another Plugins recorded to p.
func (p *Plugins) Merge(r Recorded) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, rc := range r.Calls {
		for b := range rc.Buckets {
			if b < 0 || b >= len(histogram{}.buckets) {
				return fmt.Errorf("%s/%s: bucket %d out of range", rc.Point, rc.Plugin, b)
			}
		}
	}
	p.cycles += r.Cycles
	p.cycleNanos += r.CycleNanos
	for _, rc := range r.Calls {
		h := p.histogram(rc.Point, rc.Plugin)
		h.n += rc.N
		h.sum += rc.Sum
		for b, n := range rc.Buckets {
			h.buckets[b] += n
		}
	}
	return nil
}

// histogram counts durations in buckets 1/16 of a power of two wide (4.4%),
// from 1 ns to about 18 minutes.
type histogram struct {
	n, sum  int64
	buckets [40 * 16]int64
}

// A bucket is a sixteenth of a power of two: call i falls in bucket
// floor(16 log2 nanos). The bench adds hundreds of millions of calls, so
// the logarithm is read off the bits: the power of two from the bit
// length, the sixteenth by comparing the rest with 2^(k/16).
var sixteenths = func() (b [16]float64) {
	for k := range b {
		b[k] = math.Exp2(float64(k) / 16)
	}
	return b
}()

func bucketOf(nanos int64) int {
	if nanos < 1 {
		return 0
	}
	e := bits.Len64(uint64(nanos)) - 1
	rest := float64(nanos) / float64(uint64(1)<<e) // in [1, 2)
	k := 15
	for rest < sixteenths[k] {
		k--
	}
	return min(e*16+k, len(histogram{}.buckets)-1)
}

func (h *histogram) add(nanos int64) {
	h.n++
	h.sum += nanos
	h.buckets[bucketOf(nanos)]++
}

// quantile is the upper bound of the bucket the q-th call falls in.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	want := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for b, c := range h.buckets {
		seen += c
		if seen >= want {
			return time.Duration(math.Exp2(float64(b+1) / 16))
		}
	}
	return 0
}
