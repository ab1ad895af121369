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

// Entity is what activeQ, backoff and the unschedulable set hold, and what
// Pop hands out: a pod (*PodInfo), or, with GenericWorkload on, a whole pod
// group (*GroupInfo), as upstream's QueuedEntityInfo. It implements
// fwk.QueuedEntityInfo so the QueueSort plugin can order it.
type Entity interface {
	fwk.QueuedEntityInfo
	// key is unique among the entities: a pod's UID, a group's
	// "podgroup/namespace/name".
	key() string
	params() *entityState
	// members are the entity's pods: the pod itself, or the group's
	// queued pods in the order the group's cycle tries them.
	members() []*PodInfo
}

// entityState is what the queue keeps of an entity: upstream's QueueingParams,
// and what the stream shows of its moves. A group keeps its own: the
// group's backoff, gate and flushes are its, not its pods'.
type entityState struct {
	// Timestamp is when the entity entered the queue or last failed; it
	// orders entities of equal priority and starts the backoff.
	Timestamp time.Time
	// InitialAttemptTimestamp is when the entity first entered activeQ.
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
	// the unschedulable set. A pod with neither failed with an error. A
	// group has none of its own (its pods have theirs), so it always waits
	// in the error backoff, as upstream's groups do.
	UnschedulablePlugins sets.Set[string]
	PendingPlugins       sets.Set[string]
	// GatingPlugin is the PreEnqueue plugin that holds the entity back, and
	// GatingPluginEvents the events it registered: no other event is
	// offered to a gated entity. A group is gated when any of its pods is.
	GatingPlugin       string
	GatingPluginEvents []fwk.ClusterEvent
	// BackoffExpiration is when the backoff ends, aligned down to its
	// one-second ordering window (zero before the first failure). The flush
	// moves the entity once that window is over.
	BackoffExpiration time.Time
	// FlushTimestamp is when the leftover flush last took the entity out of
	// the unschedulable set; an entity that stays gated waits another full
	// period.
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

func (s *entityState) params() *entityState { return s }

// rejectors are the plugins whose hints decide when the entity moves on.
func (s *entityState) rejectors() sets.Set[string] {
	return sets.New[string]().Union(s.UnschedulablePlugins).Union(s.PendingPlugins)
}

// rejected says some plugin rejected the entity (rejectors is not empty),
// without building the set: the queue asks it of every waiting pod on
// every cluster event.
func (s *entityState) rejected() bool {
	return s.UnschedulablePlugins.Len() > 0 || s.PendingPlugins.Len() > 0
}

func (s *entityState) GetTimestamp() time.Time                   { return s.Timestamp }
func (s *entityState) GetAttempts() int                          { return s.Attempts }
func (s *entityState) GetBackoffExpiration() time.Time           { return s.BackoffExpiration }
func (s *entityState) GetUnschedulableCount() int                { return s.UnschedulableCount }
func (s *entityState) GetConsecutiveErrorsCount() int            { return s.ConsecutiveErrorsCount }
func (s *entityState) GetInitialAttemptTimestamp() *time.Time    { return s.InitialAttemptTimestamp }
func (s *entityState) GetUnschedulablePlugins() sets.Set[string] { return s.UnschedulablePlugins }
func (s *entityState) GetPendingPlugins() sets.Set[string]       { return s.PendingPlugins }
func (s *entityState) GetGatingPlugin() string                   { return s.GatingPlugin }
func (s *entityState) GetGatingPluginEvents() []fwk.ClusterEvent { return s.GatingPluginEvents }

// PodInfo is a pod in the queue and what the queue knows of it: upstream's
// QueuedPodInfo.
type PodInfo struct {
	Pod *v1.Pod
	entityState
}

var _ Entity = &PodInfo{}

func (pi *PodInfo) uid() types.UID      { return pi.Pod.UID }
func (pi *PodInfo) key() string         { return string(pi.Pod.UID) }
func (pi *PodInfo) members() []*PodInfo { return []*PodInfo{pi} }

func (pi *PodInfo) Type() fwk.EntityKeyType { return fwk.PodKeyType }
func (pi *PodInfo) GetPriority() int32      { return corev1helpers.PodPriority(pi.Pod) }

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
	// PodGroup names the pod group the pod is queued with, if any.
	PodGroup string
}

// List returns every pod in the queue: activeQ in pop order, backoffQ in pop
// order, the error backoff by expiry, the unschedulable set by timestamp,
// then the pods in flight, and the pods that wait for their group. A pod of
// a group shows its group's place, backoff and gate.
func (q *Queue) List() []Entry {
	q.mu.RLock()
	defer q.mu.RUnlock()
	var out []Entry
	add := func(entities ...Entity) {
		for _, e := range entities {
			s := e.params()
			for _, pi := range e.members() {
				out = append(out, Entry{
					Pod: pi.Pod, Queue: s.where, Attempts: pi.Attempts, EnteredAt: s.enteredAt,
					BackoffUntil: s.BackoffExpiration, Plugins: sets.List(pi.rejectors()), GatingPlugin: s.GatingPlugin,
					LastEvent: pi.lastEvent, LastMessage: pi.lastMessage, LastSkip: pi.lastSkip, HintedBy: pi.lastHints,
					Order: q.order(e, s.where), PodGroup: groupName(pi.Pod),
				})
			}
		}
	}
	add(q.active.sorted()...)
	add(q.backoff.rejected.sorted()...)
	add(q.backoff.errored.sorted()...)
	add(q.unschedulable.sorted()...)
	for _, pi := range q.flight.pods() {
		add(pi)
	}
	for _, pi := range q.incomplete.sorted() {
		add(pi)
	}
	for _, pi := range q.pending.sorted() {
		add(pi)
	}
	return out
}

// Counts returns how many pods each part of the queue holds; the pods
// held for their groups too, with GenericWorkload on.
func (q *Queue) Counts() map[event.QueueName]int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	counts := map[event.QueueName]int{
		event.ActiveQ:       q.active.pods(),
		event.BackoffQ:      q.backoff.rejected.pods(),
		event.ErrorBackoffQ: q.backoff.errored.pods(),
		event.Unschedulable: q.unschedulable.pods(),
		event.InFlight:      len(q.flight.markers),
	}
	if q.opts.GenericWorkload {
		counts[event.IncompleteGroup] = len(q.incomplete.byUID)
		counts[event.PendingGroup] = len(q.pending.byUID)
	}
	return counts
}
