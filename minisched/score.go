package minisched

// PreScore, Score, NormalizeScore and the weights.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

// preScore runs PreScore; plugins that Skip are not called at Score.
func (c *cycle) preScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	var status *fwk.Status
	skip := sets.New[string]()
	if timeout := runPoint(ctx, c, state, "PreScore", "", slices.All(c.p.preScore),
		statusOnly(func(ctx context.Context, state fwk.CycleState, pl fwk.PreScorePlugin) *fwk.Status {
			return pl.PreScore(ctx, state, pod, nodes)
		}),
		func(pl fwk.PreScorePlugin, _ struct{}, s *fwk.Status, _ *event.PluginResult) bool {
			switch {
			case s.IsSkip():
				skip.Insert(pl.Name())
			case !s.IsSuccess():
				// A rejection too is an error here, as upstream.
				status = pluginError("PreScore", pl.Name(), s)
				return true
			}
			return false
		}); timeout != nil {
		return timeout
	}
	state.SetSkipScorePlugins(skip)
	return status
}

// score runs Score on every node (in parallel), then NormalizeScore and the
// weights, then the extenders that prioritize, and returns each node's
// total, and the matrix it reported.
func (c *cycle) score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *event.ScoreResults, *fwk.Status) {
	skip := state.GetSkipScorePlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.score), func(pl fwk.ScorePlugin) bool { return skip.Has(pl.Name()) })
	prioritizers := c.extenders.prioritizers(pod)
	begun := time.Now()
	described := make([]event.ScorePlugin, len(plugins), len(plugins)+len(prioritizers))
	for j, pl := range plugins {
		described[j] = event.ScorePlugin{Name: pl.Name(), Weight: c.p.weights[pl.Name()]}
	}
	// The extenders' columns come after the plugins'.
	for _, x := range prioritizers {
		described = append(described, event.ScorePlugin{Name: x.Name(), Extender: true})
	}
	// The matrix is kept by column, row i's cell for column j at i*k+j.
	res := event.NewScoreResults(described, len(nodes))
	k := len(described)
	var failed atomic.Pointer[fwk.Status]
	var normalizing atomic.Bool
	timeout := c.bounded(ctx, "Score", state, func(ctx context.Context, state fwk.CycleState) {
		// abandon is bounded's context; ctx ends the pass early as well,
		// once a plugin fails.
		abandon := ctx
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		scoreNode := func(i int) {
			ni := nodes[i]
			name := ni.Node().Name
			res.NodeNames[i] = name
			raw, nanos := res.Raw[i*k:i*k+len(plugins)], res.PluginNanos[i*k:i*k+len(plugins)]
			begun := clock()
			for j, pl := range plugins {
				if s := abandoned(abandon); s != nil {
					failed.CompareAndSwap(nil, s)
					cancel()
					return
				}
				s, end := callFrom(begun, pl.Name(), func() *fwk.Status {
					var s *fwk.Status
					raw[j], s = pl.Score(ctx, state, pod, ni)
					return s
				})
				nanos[j], begun = end-begun, end
				if !s.IsSuccess() {
					failed.CompareAndSwap(nil, fwk.AsStatus(fmt.Errorf("running Score plugin %q on node %s: %w", pl.Name(), name, s.AsError())).WithPlugin(pl.Name()))
					cancel()
					return
				}
			}
		}
		c.p.fw.Parallelizer().Until(ctx, len(nodes), scoreNode, "Score")
		if failed.Load() != nil {
			return
		}
		normalizing.Store(true)
		list := make(fwk.NodeScoreList, len(nodes))
		for j, pl := range plugins {
			if s := abandoned(abandon); s != nil {
				failed.CompareAndSwap(nil, s)
				return
			}
			c.plugin.Store(pl.Name())
			if s := c.normalize(ctx, state, pod, pl, j, res, list); s != nil {
				failed.CompareAndSwap(nil, s)
				return
			}
		}
	})
	if timeout != nil {
		// The rows are the abandoned goroutine's: nothing to show.
		return nil, nil, timeout
	}
	status := failed.Load()
	if status != nil {
		for j := range res.Plugins {
			if p := &res.Plugins[j]; p.Name == status.Plugin() {
				p.Code, p.Reason = int(status.Code()), status.Message()
			}
		}
		// Show only what ran: nodes not reached have no name, and there
		// are no normalized scores when Score itself failed.
		if !normalizing.Load() {
			res.Normalized = nil
		}
	}
	var scored []bool
	if status == nil && len(prioritizers) > 0 {
		scored = c.extenderPrioritize(pod, nodes, prioritizers, res, len(plugins))
	}
	res.Nanos = time.Since(begun).Nanoseconds()
	c.emit(event.Event{Kind: event.KindScore, Score: res})
	if status != nil {
		return nil, nil, status
	}
	totals := c.scratch.totalsFor(len(nodes))
	for i, name := range res.NodeNames {
		totals[i] = fwk.NodePluginScores{Name: name, TotalScore: res.Total(i)}
	}
	if scored != nil {
		c.extenders.randomize(totals, scored)
	}
	return totals, res, nil
}

// normalize runs plugin j's NormalizeScore over every node's raw score into
// its normalized column; the weights apply when the totals are read. list
// is scratch space, one entry per row.
func (c *cycle) normalize(ctx context.Context, state fwk.CycleState, pod *v1.Pod, pl fwk.ScorePlugin, j int, res *event.ScoreResults, list fwk.NodeScoreList) *fwk.Status {
	k, d := len(res.Plugins), &res.Plugins[j]
	for i, name := range res.NodeNames {
		list[i] = fwk.NodeScore{Name: name, Score: res.Raw[i*k+j]}
	}
	if ext := pl.ScoreExtensions(); ext != nil {
		s, nanos := call(pl.Name(), func() *fwk.Status { return ext.NormalizeScore(ctx, state, pod, list) })
		d.NormalizeNanos = nanos
		if !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running NormalizeScore of %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	for i, name := range res.NodeNames {
		score := list[i].Score
		if score < fwk.MinNodeScore || score > fwk.MaxNodeScore {
			return fwk.AsStatus(fmt.Errorf("plugin %q returned score %d for node %s, outside [%d, %d] after normalizing",
				pl.Name(), score, name, fwk.MinNodeScore, fwk.MaxNodeScore)).WithPlugin(pl.Name())
		}
		res.Normalized[i*k+j] = score
	}
	return nil
}

// selectHost picks the node with the highest total the way kube-scheduler
// does: the head of a max-heap built over the feasible nodes in the order
// Filter found them. Equal totals carry no random tie-breaker, unless an
// extender scored the nodes (as upstream: see extenders.randomize), so the
// heap's layout decides, and the same inputs always give the same node. The other nodes with the best total are
// reported as ties, in Filter's order. The heap is built in totals itself,
// which selectHost leaves reordered; it returns the heap, the winner popped,
// for opportunistic batching.
func selectHost(totals []fwk.NodePluginScores) (string, []string, framework.SortedScoredNodes) {
	best := slices.MaxFunc(totals, func(a, b fwk.NodePluginScores) int { return cmp.Compare(a.TotalScore, b.TotalScore) }).TotalScore
	// Counted first: the history and the cycle index keep the list, which
	// on a cluster of alike nodes holds hundreds of names.
	n := 0
	for _, t := range totals {
		if t.TotalScore == best {
			n++
		}
	}
	ties := make([]string, 0, n)
	for _, t := range totals {
		if t.TotalScore == best {
			ties = append(ties, t.Name)
		}
	}
	// The heap reorders totals in place, which is why the ties come first.
	sorted := framework.NewSortedScoredNodes(totals)
	winner := sorted.Pop().Name
	return winner, slices.DeleteFunc(ties, func(name string) bool { return name == winner }), sorted
}
