package minisched

// Opportunistic batching (OpportunisticBatching, beta, on), as upstream's
// framework/runtime/batch.go does it, with minisched's own calls so that
// each one is reported: Sign, the recheck of the node the last pod went
// to, its rescore, and the Filter pass over the hint.

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"minisched/event"
)

// maxBatchAge is how long a batch serves, as upstream's.
const maxBatchAge = 500 * time.Millisecond

// batch is one profile's: upstream keeps one per framework.
type batch struct {
	profile string
	// signers are the plugins that sign a pod, nil when one of the
	// profile's PreFilter, Filter, PreScore or Score plugins cannot sign,
	// or the profile has extenders: then no pod has a signature.
	signers []fwk.SignPlugin
	state   *batchState
	last    struct {
		pop       int64
		chosen    string
		succeeded bool
	}
}

// batchState is what a placed pod left for the next one: its signature
// and its other scored nodes, best first.
type batchState struct {
	signature fwk.PodSignature
	sorted    framework.SortedScoredNodes
	created   time.Time
	from      *event.PodRef
	fromCycle int64
}

// newBatch finds the profile's signers the way upstream's
// computeBatchablePlugins does.
func newBatch(p *profile, extenders bool) *batch {
	b := &batch{profile: p.name}
	if extenders {
		return b
	}
	var candidates []fwk.Plugin
	for _, pl := range p.preFilter {
		candidates = append(candidates, pl)
	}
	for _, pl := range p.filter {
		candidates = append(candidates, pl)
	}
	for _, pl := range p.preScore {
		candidates = append(candidates, pl)
	}
	for _, pl := range p.score {
		candidates = append(candidates, pl)
	}
	seen := map[string]bool{}
	for _, pl := range candidates {
		if seen[pl.Name()] {
			continue
		}
		seen[pl.Name()] = true
		signer, ok := pl.(fwk.SignPlugin)
		if !ok {
			return b
		}
		b.signers = append(b.signers, signer)
	}
	if b.signers == nil {
		b.signers = []fwk.SignPlugin{}
	}
	return b
}

// sign runs the Sign point: every signer in turn until one refuses, and
// the signature upstream's SignPod makes of what they returned. A nil
// signature means the pod cannot share a batch.
func (c *cycle) sign(ctx context.Context, state fwk.CycleState, pod *v1.Pod) fwk.PodSignature {
	if c.p.batch.signers == nil {
		c.batch.Signed = false
		return nil
	}
	sig := map[string]any{fwk.SchedulerNameSignerName: pod.Spec.SchedulerName}
	refused := false
	if timeout := runPoint(ctx, c, state, "Sign", "", slices.All(c.p.batch.signers),
		func(ctx context.Context, _ fwk.CycleState, pl fwk.SignPlugin) ([]fwk.SignFragment, *fwk.Status) {
			return pl.SignPod(ctx, pod)
		},
		func(_ fwk.SignPlugin, fragments []fwk.SignFragment, s *fwk.Status, _ *event.PluginResult) bool {
			if !s.IsSuccess() {
				refused = true
				return true
			}
			for _, f := range fragments {
				sig[f.Key] = f.Value
			}
			return false
		}); timeout != nil || refused {
		return nil
	}
	out, err := json.Marshal(sig)
	if err != nil {
		c.logger.Error(err, "Marshalling the pod's signature")
		return nil
	}
	c.batch.Signed = true
	return out
}

// hint is upstream's GetNodeHint: the best node the last pod's batch left,
// when this pod is the next one popped, has the same signature, and the
// batch is young. The node the last pod went to competes again, rescored,
// if the pod still fits there.
func (s *Scheduler) hint(ctx context.Context, c *cycle, state fwk.CycleState, pod *v1.Pod, sig fwk.PodSignature, pop int64) string {
	b := c.p.batch
	hint := ""
	begun := time.Now()
	defer func() {
		hinted := "hint"
		if hint == "" {
			hinted = "no_hint"
			metrics.BatchAttemptStats.WithLabelValues(b.profile, metrics.BatchAttemptNoHint).Inc()
		}
		metrics.GetNodeHintDuration.WithLabelValues(hinted, b.profile).Observe(metrics.SinceInSeconds(begun))
	}()
	reason := b.incompatible(pod, sig, pop)
	if reason == "" {
		reason = s.refreshHintCandidates(ctx, c, state, pod)
	}
	if reason != "" {
		if reason != "none" {
			b.flush(reason)
		}
		c.batch.NoHint = reason
		return ""
	}
	hint = b.state.sorted.Pop().Name
	c.batch.Hint, c.batch.From, c.batch.FromCycle = hint, b.state.from, b.state.fromCycle
	c.batch.AgeNanos, c.batch.NodesLeft = time.Since(b.state.created).Nanoseconds(), b.state.sorted.Len()
	return hint
}

// incompatible says why the batch cannot serve the pod ("" when it can),
// in upstream's order; "none" when there is no batch, which upstream does
// not count as a flush.
func (b *batch) incompatible(pod *v1.Pod, sig fwk.PodSignature, pop int64) string {
	if b.state == nil || b.state.sorted == nil || b.state.sorted.Len() == 0 {
		return "none"
	}
	switch {
	case pop != b.last.pop+1:
		return metrics.BatchFlushPodSkipped
	case !b.last.succeeded:
		return metrics.BatchFlushPodFailed
	case pod.Status.NominatedNodeName != "":
		return metrics.BatchFlushPodNominated
	case sig == nil || !bytes.Equal(sig, b.state.signature):
		return metrics.BatchFlushPodIncompatible
	case time.Now().After(b.state.created.Add(maxBatchAge)):
		return metrics.BatchFlushExpired
	}
	return ""
}

// flush counts a batch found unusable, as upstream's logUnusableState:
// the state itself is replaced when the cycle stores its results.
func (b *batch) flush(reason string) {
	metrics.BatchCacheFlushed.WithLabelValues(b.profile, reason).Inc()
}

// refreshHintCandidates is upstream's: Filter on the node the last pod went
// to (without nominated pods, as RunFilterPlugins); if the pod still fits
// there, the node is rescored and competes for the hint. It says why the
// batch cannot serve ("" when it can).
func (s *Scheduler) refreshHintCandidates(ctx context.Context, c *cycle, state fwk.CycleState, pod *v1.Pod) string {
	b := c.p.batch
	last, err := s.snapshot.NodeInfos().Get(b.last.chosen)
	if last == nil || err != nil {
		return metrics.BatchFlushNodeMissing
	}
	d := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	feasible, _, status := c.filter(ctx, filterRun{
		state: state, pod: pod, nodes: []fwk.NodeInfo{last}, diagnosis: &d, numToFind: 1,
		batch: event.BatchRecheck, withoutNominated: true,
	})
	switch {
	case !status.IsSuccess():
		return metrics.BatchFlushFilterError
	case len(feasible) == 0:
		return ""
	}
	return s.rescoreHintedNode(ctx, c, state, pod, last)
}

// rescoreHintedNode is upstream's: PreScore over the cached nodes and the
// last chosen one, Score on that node alone, then NormalizeScore over them
// all, the cached raw scores as they were.
func (s *Scheduler) rescoreHintedNode(ctx context.Context, c *cycle, state fwk.CycleState, pod *v1.Pod, last fwk.NodeInfo) string {
	b := c.p.batch
	defer metrics.BatchRescoreDuration.ObserveSince(time.Now(), b.profile)()
	metrics.BatchRescoreAttempts.WithLabelValues(b.profile).Inc()
	cached := b.state.sorted.UnorderedList()
	nodes := make([]fwk.NodeInfo, 0, len(cached)+1)
	for _, ns := range cached {
		ni, err := s.snapshot.NodeInfos().Get(ns.Name)
		if err != nil || ni == nil {
			return metrics.BatchFlushNodeMissing
		}
		nodes = append(nodes, ni)
	}
	nodes = append(nodes, last)
	// The rescore writes to a copy of the state, as upstream's.
	rescoreState := state.Clone()
	if status := c.preScore(ctx, rescoreState, pod, nodes); !status.IsSuccess() {
		return metrics.BatchFlushPreScoreError
	}
	scores, reason := c.rescore(ctx, rescoreState, pod, cached, last)
	if reason != "" {
		return reason
	}
	b.state.sorted = framework.NewSortedScoredNodes(scores)
	return ""
}

// rescore is the batch's Score: the node the last pod went to is scored
// again, the cached nodes keep their raw scores; then each plugin
// normalizes them all and the weights apply, as upstream's
// NormalizeScores. The matrix is reported with the last node's row last.
// It says why the batch cannot serve ("" when it can).
func (c *cycle) rescore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, cached []fwk.NodePluginScores, last fwk.NodeInfo) ([]fwk.NodePluginScores, string) {
	skip := state.GetSkipScorePlugins()
	plugins := slices.DeleteFunc(slices.Clone(c.p.score), func(pl fwk.ScorePlugin) bool { return skip.Has(pl.Name()) })
	described := make([]event.ScorePlugin, len(plugins))
	column := make(map[string]int, len(plugins))
	for j, pl := range plugins {
		described[j] = event.ScorePlugin{Name: pl.Name(), Weight: c.p.weights[pl.Name()]}
		column[pl.Name()] = j
	}
	k, i := len(plugins), len(cached)
	res := event.NewScoreResults(described, len(cached)+1)
	res.Batch = event.BatchRescore
	for r, ns := range cached {
		res.NodeNames[r] = ns.Name
		for _, raw := range ns.RawScores {
			if j, ok := column[raw.Name]; ok {
				res.Raw[r*k+j] = raw.Score
			}
		}
	}
	res.NodeNames[i] = last.Node().Name
	begun := time.Now()
	reason := ""
	if timeout := c.bounded(ctx, "Score", state, func(ctx context.Context, state fwk.CycleState) {
		start := clock()
		for j, pl := range plugins {
			c.plugin.Store(pl.Name())
			s, end := callFrom(start, pl.Name(), func() *fwk.Status {
				var s *fwk.Status
				res.Raw[i*k+j], s = pl.Score(ctx, state, pod, last)
				return s
			})
			res.PluginNanos[i*k+j], start = end-start, end
			if !s.IsSuccess() {
				res.Plugins[j].Code, res.Plugins[j].Reason = int(s.Code()), s.Message()
				res.Normalized, reason = nil, metrics.BatchFlushRescoreError
				return
			}
		}
		list := make(fwk.NodeScoreList, len(res.NodeNames))
		for j, pl := range plugins {
			c.plugin.Store(pl.Name())
			if s := c.normalize(ctx, state, pod, pl, j, res, list); s != nil {
				res.Plugins[j].Code, res.Plugins[j].Reason = int(s.Code()), s.Message()
				reason = metrics.BatchFlushNormalizeError
				return
			}
		}
	}); timeout != nil {
		return nil, metrics.BatchFlushRescoreError
	}
	res.Nanos = time.Since(begun).Nanoseconds()
	c.emit(event.Event{Kind: event.KindScore, Score: res})
	if reason != "" {
		return nil, reason
	}
	return scoredNodes(res), ""
}

// scoredNodes are a Score matrix's rows as upstream's scored nodes: the raw
// scores of the plugins (not the extenders', which turn batching off) and
// the total.
func scoredNodes(res *event.ScoreResults) []fwk.NodePluginScores {
	k := len(res.Plugins)
	out := make([]fwk.NodePluginScores, len(res.NodeNames))
	for i, name := range res.NodeNames {
		raw := make([]fwk.PluginScore, 0, k)
		for j, pl := range res.Plugins {
			if !pl.Extender {
				raw = append(raw, fwk.PluginScore{Name: pl.Name, Score: res.Raw[i*k+j]})
			}
		}
		out[i] = fwk.NodePluginScores{Name: name, RawScores: raw, TotalScore: res.Total(i)}
	}
	return out
}

// store is upstream's StoreScheduleResults: the cycle placed the pod on
// chosen; the nodes it scored but did not choose (rest) become the batch for the next pod of the same signature.
func (b *batch) store(c *cycle, sig fwk.PodSignature, hint, chosen string, rest framework.SortedScoredNodes, pop int64) {
	defer metrics.StoreScheduleResultsDuration.ObserveSince(time.Now(), b.profile)()
	b.last.pop, b.last.chosen, b.last.succeeded = pop, chosen, true
	if hint == chosen {
		metrics.BatchAttemptStats.WithLabelValues(b.profile, metrics.BatchAttemptHintUsed).Inc()
		c.batch.Used = true
		if b.state != nil {
			c.batch.Kept = b.state.sorted.Len()
		}
		return
	}
	if hint != "" {
		metrics.BatchAttemptStats.WithLabelValues(b.profile, metrics.BatchAttemptHintNotUsed).Inc()
	}
	if sig != nil && rest != nil && rest.Len() > 0 {
		b.state = &batchState{signature: sig, sorted: rest, created: time.Now(), from: c.pod, fromCycle: c.id}
		c.batch.Kept = rest.Len()
		return
	}
	reason := metrics.BatchFlushPodNotBatchable
	if rest == nil || rest.Len() == 0 {
		reason = metrics.BatchFlushEmptyList
	}
	b.flush(reason)
	c.batch.Dropped = reason
	b.state = nil
}
