package queue

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"

	"minisched/event"
)

// TestPrioritySortKeyAgreesWithUpstream sorts random pods, priorities at the
// extremes and timestamps that tie, by PrioritySortKey and by upstream's
// PrioritySort.Less: the two orders must be the same.
func TestPrioritySortKeyAgreesWithUpstream(t *testing.T) {
	less := (&queuesort.PrioritySort{}).Less
	r := rand.New(rand.NewPCG(1, 2))
	priorities := []int32{math.MinInt32, -1, 0, 1, 1000, 2_000_000_000, math.MaxInt32}
	for round := 0; round < 200; round++ {
		var pods []*PodInfo
		for i := 0; i < 30; i++ {
			pi := &PodInfo{Pod: pod("p"+string(rune('a'+i)), priorities[r.IntN(len(priorities))]),
				entityState: entityState{Timestamp: start.Add(time.Duration(r.IntN(5)) * time.Millisecond)}}
			pods = append(pods, pi)
		}
		byKey := slices.Clone(pods)
		slices.SortStableFunc(byKey, func(a, b *PodInfo) int { return strings.Compare(PrioritySortKey(a), PrioritySortKey(b)) })
		for i := 1; i < len(byKey); i++ {
			a, b := byKey[i-1], byKey[i]
			if less(b, a) {
				t.Fatalf("round %d: key puts %s (priority %d, %v) before %s (priority %d, %v), upstream the other way",
					round, a.Pod.Name, a.GetPriority(), a.Timestamp, b.Pod.Name, b.GetPriority(), b.Timestamp)
			}
			if (PrioritySortKey(a) == PrioritySortKey(b)) != (!less(a, b) && !less(b, a)) {
				t.Fatalf("round %d: %s and %s tie by key but not upstream, or the other way", round, a.Pod.Name, b.Pod.Name)
			}
		}
	}
}

// TestOrderMatchesList: sorting each part of the queue by the order the
// queue sends gives the order List shows, which is the order it pops.
func TestOrderMatchesList(t *testing.T) {
	f := newFixture(t, fitOnNodeAdd)
	f.q.opts.SortKey = PrioritySortKey
	q, clk := f.q, f.clk
	for i, prio := range []int32{5, 1, 5, 9, 1} {
		f.failOnce(t, pod("backoff-"+string(rune('a'+i)), prio), rejectedByFit)
		clk.Step(300 * time.Millisecond)
	}
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
	for i, prio := range []int32{5, 1, 5, 9, 1, 0, 9} {
		q.Add(pod("active-"+string(rune('a'+i)), prio))
		clk.Step(time.Millisecond)
	}
	byQueue := map[event.QueueName][]Entry{}
	for _, e := range q.List() {
		if e.Order == "" {
			t.Fatalf("%s in %s has no order", e.Pod.Name, e.Queue)
		}
		byQueue[e.Queue] = append(byQueue[e.Queue], e)
	}
	if len(byQueue[event.ActiveQ]) != 7 || len(byQueue[event.BackoffQ]) != 5 {
		t.Fatalf("queues: %d active, %d backoff", len(byQueue[event.ActiveQ]), len(byQueue[event.BackoffQ]))
	}
	for name, list := range byQueue {
		sorted := slices.Clone(list)
		slices.SortStableFunc(sorted, func(a, b Entry) int { return strings.Compare(a.Order, b.Order) })
		for i := range list {
			if sorted[i].Pod.Name != list[i].Pod.Name {
				t.Errorf("%s: by order %v, List %v", name, names(sorted), names(list))
				break
			}
		}
	}
	// The order on the last move of each pod is the one List gives.
	last := map[string]string{}
	for _, e := range f.rec.Find(func(e event.Event) bool {
		return e.Queue != nil && e.Queue.To != "" && e.Queue.To != event.InFlight
	}) {
		last[e.Pod.Name] = e.Queue.Order
	}
	for _, e := range q.List() {
		if last[e.Pod.Name] != e.Order {
			t.Errorf("%s: the last move said order %q, List says %q", e.Pod.Name, last[e.Pod.Name], e.Order)
		}
	}
}

func names(list []Entry) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Pod.Name)
	}
	return out
}
