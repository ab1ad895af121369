package queue

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// PodInfo is a pod in the queue and what the queue knows of it: upstream's
// QueuedPodInfo for a single pod. It implements fwk.QueuedEntityInfo so the
// QueueSort plugin can order it.
type PodInfo struct {
	Pod *v1.Pod
	// Timestamp is when the pod entered the queue or last failed; it orders
	// pods of equal priority and starts the backoff.
	Timestamp time.Time
	// InitialAttemptTimestamp is when the pod first entered activeQ.
	InitialAttemptTimestamp *time.Time
	// Attempts counts the pops.
	Attempts int
	// UnschedulableCount counts the rejections, ConsecutiveErrorsCount the
	// errors since the last rejection; the backoff grows with the one that
	// counted last.
	UnschedulableCount     int
	ConsecutiveErrorsCount int
	// UnschedulablePlugins and PendingPlugins rejected the pod in its last
	// attempt, or gated it since (a gating PreEnqueue plugin joins
	// UnschedulablePlugins). Only their QueueingHints can move the pod out of
	// the unschedulable set. A pod with neither failed with an error.
	UnschedulablePlugins sets.Set[string]
	PendingPlugins       sets.Set[string]
	// GatingPlugin is the PreEnqueue plugin that holds the pod back, and
	// GatingPluginEvents the events it registered: no other event is offered
	// to a gated pod.
	GatingPlugin       string
	GatingPluginEvents []fwk.ClusterEvent
	// BackoffExpiration is when the backoff ends, aligned down to its
	// one-second ordering window (zero before the first failure). The flush
	// moves the pod once that window is over.
	BackoffExpiration time.Time
	// FlushTimestamp is when the leftover flush last took the pod out of the
	// unschedulable set; a pod that stays gated waits another full period.
	FlushTimestamp time.Time

	where     event.QueueName
	enteredAt time.Time
	// deleted marks a pod deleted while in flight: it must not come back.
	deleted bool
	// lastEvent and lastMessage say what last moved the pod, and why.
	lastEvent   string
	lastMessage string
	// lastHints are the plugins whose QueueingHint made that move, when a
	// cluster event made it.
	lastHints []string
	// lastSkip is the last cluster event whose hints answered QueueSkip
	// since that move (its Event, Object and Plugins); skips holds the
	// label=plugins of each skip reported since, so that each is reported
	// once.
	lastSkip *event.QueueMove
	skips    []string
}

var _ fwk.QueuedEntityInfo = &PodInfo{}

func (pi *PodInfo) uid() types.UID { return pi.Pod.UID }

// rejectors are the plugins whose hints decide when the pod moves on.
func (pi *PodInfo) rejectors() sets.Set[string] {
	return sets.New[string]().Union(pi.UnschedulablePlugins).Union(pi.PendingPlugins)
}

func (pi *PodInfo) Type() fwk.EntityKeyType                   { return fwk.PodKeyType }
func (pi *PodInfo) GetPriority() int32                        { return corev1helpers.PodPriority(pi.Pod) }
func (pi *PodInfo) GetTimestamp() time.Time                   { return pi.Timestamp }
func (pi *PodInfo) GetAttempts() int                          { return pi.Attempts }
func (pi *PodInfo) GetBackoffExpiration() time.Time           { return pi.BackoffExpiration }
func (pi *PodInfo) GetUnschedulableCount() int                { return pi.UnschedulableCount }
func (pi *PodInfo) GetConsecutiveErrorsCount() int            { return pi.ConsecutiveErrorsCount }
func (pi *PodInfo) GetInitialAttemptTimestamp() *time.Time    { return pi.InitialAttemptTimestamp }
func (pi *PodInfo) GetUnschedulablePlugins() sets.Set[string] { return pi.UnschedulablePlugins }
func (pi *PodInfo) GetPendingPlugins() sets.Set[string]       { return pi.PendingPlugins }
func (pi *PodInfo) GetGatingPlugin() string                   { return pi.GatingPlugin }
func (pi *PodInfo) GetGatingPluginEvents() []fwk.ClusterEvent { return pi.GatingPluginEvents }

// Entry is one queued pod as the API shows it.
type Entry struct {
	Pod          *v1.Pod
	Queue        event.QueueName
	Attempts     int
	EnteredAt    time.Time
	BackoffUntil time.Time
	// Plugins rejected the pod in its last attempt; HintedBy are the plugins
	// whose QueueingHint made its last move, when a cluster event made it.
	Plugins      []string
	HintedBy     []string
	GatingPlugin string
	// LastEvent is what last moved the pod (NodeAdd, BackoffComplete...);
	// LastMessage why its last attempt failed.
	LastEvent   string
	LastMessage string
	// LastSkip is the last cluster event the pod's hints answered QueueSkip
	// to since that move: its Event, Object and Plugins.
	LastSkip *event.QueueMove
	// Order sorts the pods of one part of the queue (QueueMove.Order).
	Order string
}

// List returns every pod in the queue: activeQ in pop order, backoffQ in pop
// order, the error backoff by expiry, the unschedulable set by timestamp,
// then the pods in flight.
func (q *Queue) List() []Entry {
	q.mu.RLock()
	defer q.mu.RUnlock()
	var out []Entry
	add := func(pods []*PodInfo) {
		for _, pi := range pods {
			out = append(out, Entry{
				Pod: pi.Pod, Queue: pi.where, Attempts: pi.Attempts, EnteredAt: pi.enteredAt,
				BackoffUntil: pi.BackoffExpiration, Plugins: sets.List(pi.rejectors()), GatingPlugin: pi.GatingPlugin,
				LastEvent: pi.lastEvent, LastMessage: pi.lastMessage, LastSkip: pi.lastSkip, HintedBy: pi.lastHints, Order: q.order(pi, pi.where),
			})
		}
	}
	add(q.active.sorted())
	add(q.backoff.rejected.sorted())
	add(q.backoff.errored.sorted())
	add(q.unschedulable.sorted())
	add(q.flight.pods())
	return out
}

// Counts returns how many pods each part of the queue holds.
func (q *Queue) Counts() map[event.QueueName]int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return map[event.QueueName]int{
		event.ActiveQ:       q.active.Len(),
		event.BackoffQ:      q.backoff.rejected.Len(),
		event.ErrorBackoffQ: q.backoff.errored.Len(),
		event.Unschedulable: len(q.unschedulable),
		event.InFlight:      len(q.flight.markers),
	}
}
