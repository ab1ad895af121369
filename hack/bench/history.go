package main

import (
	"fmt"
	"runtime"
	"time"

	"minisched/event"
	"minisched/history"
)

// historyBench feeds the history the events of many scheduling cycles, shaped
// like the scheduler's on a cluster of -nodes nodes, and reports the heap
// after every thousand pods: it must stop growing once the history is full.
// The history alone is measured, apart from the apiserver's own caches.
func historyBench(args []string) error {
	fs := flagSet("history")
	nodes := fs.Int("nodes", 100, "nodes per Filter and Score event")
	pods := fs.Int("pods", 10000, "scheduling cycles, one per pod")
	maxWeight := fs.Int("history", 500_000, "the history cap (--history)")
	_ = fs.Parse(args)
	rec := history.New(history.Options{MaxWeight: *maxWeight})
	filterPlugins := []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"}
	scorePlugins := []event.ScorePlugin{{Name: "TaintToleration", Weight: 3}, {Name: "NodeAffinity", Weight: 2}, {Name: "NodeResourcesFit", Weight: 1},
		{Name: "PodTopologySpread", Weight: 2}, {Name: "InterPodAffinity", Weight: 2}, {Name: "NodeResourcesBalancedAllocation", Weight: 1}, {Name: "ImageLocality", Weight: 1}}
	begun := time.Now()
	var first, peak uint64
	for p := 1; p <= *pods; p++ {
		ref := &event.PodRef{Namespace: "default", Name: fmt.Sprintf("pod-%05d", p), UID: fmt.Sprintf("uid-%05d", p)}
		id := int64(p)
		k := len(filterPlugins)
		filter := event.NewFilterResults(filterPlugins, *nodes, *nodes*k)
		score := event.NewScoreResults(scorePlugins, *nodes)
		for n := 0; n < *nodes; n++ {
			name := fmt.Sprintf("node-%04d", n)
			filter.AddRow(name, make([]int8, k), make([]int64, k), "", false)
			score.NodeNames[n] = name
		}
		for _, e := range []event.Event{
			{Kind: event.KindQueue, Pod: ref, Queue: &event.QueueMove{Action: event.ActionAdd, To: event.ActiveQ, Event: "PodAdd"}},
			{Kind: event.KindQueue, Pod: ref, Queue: &event.QueueMove{Action: event.ActionPop, From: event.ActiveQ, To: event.InFlight}},
			{Kind: event.KindCycleStart, Pod: ref, Cycle: id, CycleStart: &event.CycleStart{Attempt: 1, Nodes: *nodes}},
			{Kind: event.KindFilter, Pod: ref, Cycle: id, Filter: filter},
			{Kind: event.KindScore, Pod: ref, Cycle: id, Score: score},
			{Kind: event.KindCycleEnd, Pod: ref, Cycle: id, CycleEnd: &event.CycleEnd{Result: event.ResultScheduled, Node: "node-0001", FeasibleNodes: *nodes}},
			{Kind: event.KindBindingEnd, Pod: ref, Cycle: id, BindingEnd: &event.BindingEnd{Node: "node-0001", Bound: true}},
		} {
			rec.Observe(e)
		}
		if p%1000 == 0 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			st := rec.Stats()
			fmt.Printf("%6d pods: heap in use %4d MB; history %6d events, weight %7d of %d, %d dropped\n",
				p, ms.HeapInuse>>20, st.Events, st.Weight, st.MaxWeight, st.Dropped)
			if first == 0 {
				first = ms.HeapInuse
			}
			peak = max(peak, ms.HeapInuse)
		}
	}
	fmt.Printf("history: %d pods on %d nodes with --history %d: heap %d MB after the first thousand, at most %d MB; %.0f cycles/s recorded\n",
		*pods, *nodes, *maxWeight, first>>20, peak>>20, float64(*pods)/time.Since(begun).Seconds())
	return nil
}
