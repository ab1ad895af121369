// Package event defines what minisched reports: every queue transition, every
// scheduling and binding cycle, every plugin call. It is the vocabulary shared
// by the scheduler, the history and the stream, and the JSON form of these
// types is the public stream schema (docs/API.md). event.go holds every
// kind's payload in one file (over 400 lines) so that whoever writes a client
// reads the schema in one place.
package event

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// SchemaVersion is the version of the stream's message schema. It changes
// when a field changes meaning or goes away; added fields do not change it.
const SchemaVersion = "minisched.stream/v1"

// Kind names what happened.
type Kind string

const (
	// KindQueue: a pod entered, moved between or left the scheduling queues.
	KindQueue Kind = "queue"
	// KindCycleStart: a scheduling cycle began for a pod.
	KindCycleStart Kind = "cycleStart"
	// KindPoint: the plugins of one pod-level extension point ran
	// (PreFilter, PostFilter, PreScore, Reserve, Unreserve, Permit, PreBind,
	// Bind, PostBind).
	KindPoint Kind = "point"
	// KindFilter: Filter ran for every node.
	KindFilter Kind = "filter"
	// KindScore: Score, NormalizeScore and the weights ran for every
	// feasible node.
	KindScore Kind = "score"
	// KindCycleEnd: the scheduling cycle ended.
	KindCycleEnd Kind = "cycleEnd"
	// KindPermitWait: a pod waits at Permit before binding.
	KindPermitWait Kind = "permitWait"
	// KindBindingEnd: the binding cycle ended.
	KindBindingEnd Kind = "bindingEnd"
	// KindNode and KindPod: a cluster object was added, updated or deleted.
	KindNode Kind = "node"
	KindPod  Kind = "pod"
	// KindScheduler: the scheduler changed state (paused, running, restarted
	// with a new configuration).
	KindScheduler Kind = "scheduler"
	// KindScenario: a scenario made progress.
	KindScenario Kind = "scenario"
	// KindReset: the cluster and the history were cleared.
	KindReset Kind = "reset"
	// KindPreemption: the scheduler evicted a pod (Pod) to make room for a
	// pod of higher priority.
	KindPreemption Kind = "preemption"
	// KindExtender: a scheduler extender (an HTTP webhook outside the
	// framework) was called: to filter, prioritize, bind or preempt.
	KindExtender Kind = "extender"
)

// Event is one thing that happened. Exactly one of the payload pointers is
// set, the one named by Kind.
type Event struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Kind  Kind      `json:"kind"`
	Pod   *PodRef   `json:"pod,omitempty"`
	Cycle int64     `json:"cycle,omitempty"`

	Queue      *QueueMove      `json:"queue,omitempty"`
	CycleStart *CycleStart     `json:"cycleStart,omitempty"`
	Point      *PointResults   `json:"point,omitempty"`
	Filter     *FilterResults  `json:"filter,omitempty"`
	Score      *ScoreResults   `json:"score,omitempty"`
	CycleEnd   *CycleEnd       `json:"cycleEnd,omitempty"`
	PermitWait *PermitWait     `json:"permitWait,omitempty"`
	BindingEnd *BindingEnd     `json:"bindingEnd,omitempty"`
	Node       *NodeChange     `json:"node,omitempty"`
	PodChange  *PodChange      `json:"podChange,omitempty"`
	Scheduler  *SchedulerState `json:"scheduler,omitempty"`
	Scenario   *ScenarioStep   `json:"scenario,omitempty"`
	Preemption *Preemption     `json:"preemption,omitempty"`
	Extender   *ExtenderCall   `json:"extender,omitempty"`
	// FilterSummary and ScoreSummary stand for Filter and Score on a
	// stream that asked for compact matrices (see Compact).
	FilterSummary *FilterSummary `json:"filterSummary,omitempty"`
	ScoreSummary  *ScoreSummary  `json:"scoreSummary,omitempty"`

	// Summary is the cycle's summary after this event, on the events that
	// change it; the history sets it.
	Summary *CycleSummary `json:"summary,omitempty"`
}

// Weight is how much of the history cap an event uses: one, plus one for
// every plugin result it carries.
func (e *Event) Weight() int {
	w := 1
	switch {
	case e.Point != nil:
		w += len(e.Point.Results)
	case e.Filter != nil:
		w += len(e.Filter.Codes)
	case e.Score != nil:
		for i := range e.Score.NodeNames {
			if e.Score.Reached(i) {
				w += len(e.Score.Plugins)
			}
		}
	}
	return w
}

// Bytes estimates the memory an event holds in the history: its structs and
// strings, and the JSON encoding the history caches for readers, which is
// about as large again. It is an estimate, cheap enough for the hot path,
// that errs on the high side. A node's or pod's summary carries what its
// owner wrote (labels, annotations, taints: a node of 60,000 labels is 900
// KB), which no estimate bounds: the history counts such an event by the
// encoding it caches (history.Observe).
func (e *Event) Bytes() int {
	const header, perString, perNumber = 512, 16, 8
	strs := func(list []string) int {
		n := 0
		for _, s := range list {
			n += perString + len(s)
		}
		return n
	}
	b := header
	if e.Pod != nil {
		b += len(e.Pod.Namespace) + len(e.Pod.Name) + len(e.Pod.UID)
	}
	switch {
	case e.Queue != nil:
		b += strs(e.Queue.Plugins) + strs(e.Queue.RejectedBy) + len(e.Queue.Message) + len(e.Queue.Event) + len(e.Queue.Object) + len(e.Queue.Order)
	case e.Point != nil:
		for i := range e.Point.Results {
			r := &e.Point.Results[i]
			b += 96 + len(r.Plugin) + len(r.Reason) + len(r.Nominated) + strs(r.NodeNames)
		}
	case e.Filter != nil:
		b += strs(e.Filter.Plugins)
		// A row is a name, a reason and nine bytes a plugin; this is more.
		for i, name := range e.Filter.NodeNames {
			b += 96 + len(name) + len(e.Filter.Reasons[i])
		}
		b += 2 * perNumber * len(e.Filter.Codes)
	case e.Score != nil:
		for i := range e.Score.Plugins {
			b += 64 + len(e.Score.Plugins[i].Name) + len(e.Score.Plugins[i].Reason)
		}
		// A row is a name and three numbers a plugin; this is more.
		for _, name := range e.Score.NodeNames {
			b += 96 + len(name) + 4*perNumber*len(e.Score.Plugins)
		}
	case e.CycleEnd != nil:
		b += len(e.CycleEnd.Message) + len(e.CycleEnd.SimulatedNode) + strs(e.CycleEnd.Plugins) + strs(e.CycleEnd.Ties)
		if x := e.CycleEnd.Batch; x != nil {
			b += 256 + len(x.Hint) + len(x.NoHint) + len(x.Dropped)
			if x.From != nil {
				b += len(x.From.Namespace) + len(x.From.Name) + len(x.From.UID)
			}
		}
	case e.CycleStart != nil && e.CycleStart.Group != nil:
		b += 64 + len(e.CycleStart.Group.Namespace) + len(e.CycleStart.Group.Name)
	case e.Scenario != nil:
		b += len(e.Scenario.ID) + len(e.Scenario.Name) + len(e.Scenario.Phase) + len(e.Scenario.Message) + len(e.Scenario.Note)
	case e.Scheduler != nil:
		b += len(e.Scheduler.Message) + len(e.Scheduler.State)
	case e.Extender != nil:
		x := e.Extender
		b += len(x.Extender) + len(x.Verb) + len(x.Node) + len(x.Error)
		for _, m := range []map[string]string{x.Failed, x.Unresolvable} {
			for node, why := range m {
				b += 2*perString + len(node) + len(why)
			}
		}
	}
	if s := e.Summary; s != nil {
		b += 512 + len(s.Pod.Namespace) + len(s.Pod.Name) + len(s.Pod.UID)
		if s.Group != nil {
			b += 64 + len(s.Group.Namespace) + len(s.Group.Name)
		}
		if s.End != nil {
			b += len(s.End.Message) + strs(s.End.Plugins) + strs(s.End.Ties)
		}
	}
	return 2 * b
}

// Observer receives events. Observe must return quickly and never block on a
// reader: the scheduler calls it on its hot path.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f.
func (f ObserverFunc) Observe(e Event) { f(e) }

// Discard drops every event.
var Discard Observer = ObserverFunc(func(Event) {})

// PodRef names a pod.
type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// RefOf returns the reference of pod.
func RefOf(pod *v1.Pod) *PodRef {
	return &PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)}
}

// Key is namespace/name.
func (r *PodRef) Key() string { return r.Namespace + "/" + r.Name }

// QueueName names one of the scheduling queue's parts.
type QueueName string

const (
	ActiveQ QueueName = "active"
	// BackoffQ holds pods some plugin rejected while they wait out their
	// backoff; when activeQ is empty, Pop takes its head early.
	BackoffQ QueueName = "backoff"
	// ErrorBackoffQ holds pods whose attempt failed with an error while they
	// wait out their backoff; they are never popped early.
	ErrorBackoffQ QueueName = "errorBackoff"
	Unschedulable QueueName = "unschedulable"
	// InFlight is where a pod is between Pop and the end of its cycle.
	InFlight QueueName = "inFlight"
	// IncompleteGroup holds the pods of a pod group (GenericWorkload) whose
	// PodGroup object the scheduler has not seen yet.
	IncompleteGroup QueueName = "incompletePodGroup"
	// PendingGroup holds the pods of a pod group that came (or came back)
	// while their group was in its scheduling cycle; they join it after.
	PendingGroup QueueName = "pendingPodGroup"
)

// QueueAction says what the queue did with a pod.
type QueueAction string

const (
	ActionAdd    QueueAction = "add"
	ActionMove   QueueAction = "move"
	ActionPop    QueueAction = "pop"
	ActionUpdate QueueAction = "update"
	ActionDelete QueueAction = "delete"
	// ActionDone: the pod left the queue for good (bound, or deleted while
	// being scheduled).
	ActionDone QueueAction = "done"
	// ActionSkip: a cluster event was checked against a pod that waits, and
	// the QueueingHints of its rejecting plugins (Plugins) that registered
	// for the event all answered QueueSkip: the pod stays where it is (From
	// and To). A pod reports one skip per event label and answer while it
	// waits, so that a thousand node adds do not flood the history.
	ActionSkip QueueAction = "skip"
)

// QueueMove is a queue transition.
type QueueMove struct {
	Action QueueAction `json:"action"`
	From   QueueName   `json:"from,omitempty"`
	To     QueueName   `json:"to,omitempty"`
	// Event is what caused the move: a cluster event label such as
	// "NodeAdd" or "AssignedPodDelete", or one of "PodAdd", "BackoffComplete",
	// "UnschedulableTimeout", "ForceActivate", "ScheduleAttemptFailure",
	// "PodUpdate", "PodDelete", and "PopFromBackoffQ" on a pop from backoffQ.
	Event string `json:"event,omitempty"`
	// Object is what the cluster event that moved or skipped the pod is
	// about: a node's name, or a pod's namespace/name.
	Object string `json:"object,omitempty"`
	// Plugins are the plugins that rejected the pod (on a move to
	// unschedulable or backoff after a failure), whose QueueingHint said
	// Queue (on a move out of unschedulable) or QueueSkip (on a skip).
	Plugins []string `json:"plugins,omitempty"`
	// GatingPlugin is the PreEnqueue plugin that holds the pod back.
	// RejectedBy are the plugins that rejected the pod in its last attempt,
	// on every move while the pod has them.
	RejectedBy   []string `json:"rejectedBy,omitempty"`
	GatingPlugin string   `json:"gatingPlugin,omitempty"`
	Attempts     int      `json:"attempts"`
	// BackoffUntil is when the pod's backoff ends, for moves into backoff. It
	// is aligned down to a whole second, the pod's ordering window; the
	// backoff flush moves the pod once that window is over, one second later.
	BackoffUntil *time.Time `json:"backoffUntil,omitempty"`
	Message      string     `json:"message,omitempty"`
	// Order sorts the pods of the queue the pod moved to, as that queue
	// pops them, when compared as plain strings. It is empty for a pod in
	// flight, and for activeQ when its QueueSort plugin gives no key
	// (viewers then keep arrival order).
	Order string `json:"order,omitempty"`
	// PodGroup names the pod group (namespace/name) the pod is queued
	// with: with GenericWorkload on, a group's pods move together.
	PodGroup string `json:"podGroup,omitempty"`
}

// CycleStart opens a scheduling cycle.
type CycleStart struct {
	Attempt int `json:"attempt"`
	// Nodes is the number of nodes in the snapshot the cycle works on.
	Nodes int `json:"nodes"`
	// Profile is the scheduler name of the profile that schedules the pod.
	Profile string `json:"profile"`
	// Group is set when the pod's cycle is part of its pod group's
	// (GenericWorkload).
	Group *GroupCycle `json:"group,omitempty"`
}

// GroupCycle places a pod's cycle in its pod group's: the group's pods are
// tried together, one after another on one snapshot, and are placed or
// turned away together.
type GroupCycle struct {
	// Namespace and Name name the PodGroup.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Lead is the id of the first pod's cycle: the cycles of one group
	// cycle share it.
	Lead int64 `json:"lead"`
	// Member is the pod's place among the pods the group's cycle took
	// (1 is the first), Members how many it took.
	Member  int `json:"member"`
	Members int `json:"members"`
}

// PluginResult is one plugin call at a pod-level extension point.
type PluginResult struct {
	Plugin string `json:"plugin"`
	// Code is the framework's status code (Vocabulary.Codes names it).
	Code   int    `json:"code"`
	Reason string `json:"reason,omitempty"`
	// Nanos is how long the call took.
	Nanos int64 `json:"nanos"`
	// NodeNames is what PreFilter narrowed the nodes to, when it did.
	NodeNames []string `json:"nodeNames,omitempty"`
	// TimeoutNanos is how long a Permit plugin asked the pod to wait.
	TimeoutNanos int64 `json:"timeoutNanos,omitempty"`
	// Nominated is the node PostFilter (preemption) nominated.
	Nominated string `json:"nominated,omitempty"`
}

// PointResults holds every plugin call of one pod-level extension point.
type PointResults struct {
	Point   string         `json:"point"`
	Node    string         `json:"node,omitempty"`
	Results []PluginResult `json:"results"`
}

// FilterResults is the node x plugin matrix of one Filter run. Like
// ScoreResults it is held by column; its JSON is a row per node checked, a
// NodeFilter (see filter.go).
type FilterResults struct {
	// Plugins in the order they run on each node.
	Plugins []string
	// NodeNames names the rows, one per node checked.
	NodeNames []string
	// Filter stops at the first plugin that does not succeed, so a row may
	// be shorter than Plugins: row i's codes are Codes[Ends[i-1]:Ends[i]]
	// (from 0 for the first row), their timings the same part of
	// PluginNanos.
	Ends        []int32
	Codes       []int8
	PluginNanos []int64
	// Reasons holds the failing plugin's reason for each row, "" for a row
	// that passed: only the last code of a row can carry one.
	Reasons []string
	// Nominated marks the rows checked with nominated pods of higher
	// priority added.
	Nominated []bool
	// Nanos is the wall time of the whole Filter run (nodes run in parallel).
	Nanos int64
	// NominatedNode marks the pass over the pod's nominated node alone,
	// which comes before the pass over all nodes; when the pod fits there,
	// it goes there, and no other node is filtered or scored.
	NominatedNode bool
	// Batch marks a pass opportunistic batching made (see Batch):
	// BatchRecheck over the node the last pod went to, BatchHint over the
	// node the batch offered (then NominatedNode is set too: the hint takes
	// the nominated node's path, as upstream).
	Batch string
}

// What a Filter or Score run did for opportunistic batching.
const (
	BatchRecheck = "recheck"
	BatchHint    = "hint"
	BatchRescore = "rescore"
)

// NodeFilter is one row of a FilterResults as JSON has it: the Filter
// calls for one node.
type NodeFilter struct {
	Node  string  `json:"node"`
	Codes []int   `json:"codes"`
	Nanos []int64 `json:"nanos"`
	// Reason is the failing plugin's reason.
	Reason string `json:"reason,omitempty"`
	// Nominated is set when the node was checked with nominated pods of
	// higher priority added.
	Nominated bool `json:"nominated,omitempty"`
}

// ScoreResults is the node x plugin matrix of one Score run, after
// NormalizeScore and the weights. It is held by column, not by row: at
// 5,000 nodes Score runs on some 500, and a row of four slices each was the
// largest part of what a cycle allocated. Its JSON is a row per node, a
// NodeScore (see score.go).
type ScoreResults struct {
	Plugins []ScorePlugin
	// NodeNames names the rows. A row named "" is a node Score did not
	// reach before a plugin failed: it has no scores.
	NodeNames []string
	// Raw, Normalized and PluginNanos hold row i's value for plugin j at
	// i*len(Plugins)+j. Normalized is nil when Score failed before
	// NormalizeScore ran. Weighted scores and totals are not kept: they
	// are the normalized scores times the weights, as upstream makes them.
	Raw, Normalized, PluginNanos []int64
	// Nanos is the wall time of the whole run.
	Nanos int64
	// Batch is BatchRescore for opportunistic batching's rescore: the last
	// row, the node the last pod went to, was scored again; the other rows
	// are the batch's cached raw scores, not scored again (no timings),
	// normalized anew with it.
	Batch string
}

// ScorePlugin describes one Score plugin in a ScoreResults, or one
// scheduler extender that prioritized the nodes beside them.
type ScorePlugin struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight"`
	// NormalizeNanos is how long NormalizeScore took (0 without one).
	NormalizeNanos int64 `json:"normalizeNanos,omitempty"`
	// Code and Reason report a failed Score or NormalizeScore, or an
	// extender's failed call.
	Code   int    `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Extender marks an extender's column (Name is its urlPrefix): its raw
	// score is the extender's (0-10), normalized times 10 (upstream's
	// MaxNodeScore over MaxExtenderPriority), and Nanos is how long its
	// Prioritize call took.
	Extender bool  `json:"extender,omitempty"`
	Nanos    int64 `json:"nanos,omitempty"`
}

// NodeScore is one row of a ScoreResults as JSON has it: one node's scores,
// in the order of ScoreResults.Plugins.
type NodeScore struct {
	Node       string  `json:"node"`
	Raw        []int64 `json:"raw"`
	Normalized []int64 `json:"normalized"`
	Weighted   []int64 `json:"weighted"`
	Nanos      []int64 `json:"nanos"`
	Total      int64   `json:"total"`
}

// CycleResult is how a scheduling cycle ended.
type CycleResult string

const (
	ResultScheduled     CycleResult = "scheduled"
	ResultUnschedulable CycleResult = "unschedulable"
	ResultError         CycleResult = "error"
)

// CycleEnd closes a scheduling cycle.
type CycleEnd struct {
	Result CycleResult `json:"result"`
	// Node is the selected node when Result is scheduled.
	Node string `json:"node,omitempty"`
	// Message is the reason in words, as kube-scheduler would put it in the
	// pod's PodScheduled condition.
	Message string `json:"message,omitempty"`
	// Plugins are the plugins that rejected the pod.
	Plugins []string `json:"plugins,omitempty"`
	// FeasibleNodes is how many nodes passed Filter.
	FeasibleNodes int `json:"feasibleNodes"`
	// SimulatedNode, on the cycle of a pod turned away with its pod group,
	// is the node the group's simulation had placed it on (then undone).
	SimulatedNode string `json:"simulatedNode,omitempty"`
	// Ties lists the nodes that shared the best score with Node, and
	// TieCount counts them. On a big cluster of alike nodes the list runs to
	// hundreds of names: a compact stream, and the cycle summaries it
	// carries, leave it out and keep the count (Compact).
	Ties     []string `json:"ties,omitempty"`
	TieCount int      `json:"tieCount,omitempty"`
	Nanos    int64    `json:"nanos"`
	// Batch is what opportunistic batching made of the cycle; nil with the
	// OpportunisticBatching gate off.
	Batch *Batch `json:"batch,omitempty"`
}

// Batch is opportunistic batching in one cycle (upstream's
// framework/runtime/batch.go). A cycle that places a pod keeps its sorted,
// scored nodes but the chosen one; the next pod popped, if it has the same
// signature and comes within 500 ms, is offered the best of them (the
// hint), checked by Filter alone, unscored.
type Batch struct {
	// Signed: the profile's plugins signed the pod (the Sign point shows
	// the calls, and the plugin that refused).
	Signed bool `json:"signed"`
	// Hint is the node the batch offered; From and FromCycle are the pod
	// and cycle that kept the batch, AgeNanos its age, NodesLeft the nodes
	// it holds after the hint.
	Hint      string  `json:"hint,omitempty"`
	From      *PodRef `json:"from,omitempty"`
	FromCycle int64   `json:"fromCycle,omitempty"`
	AgeNanos  int64   `json:"ageNanos,omitempty"`
	NodesLeft int     `json:"nodesLeft,omitempty"`
	// Used: the pod went to the hint.
	Used bool `json:"used,omitempty"`
	// NoHint says why there was no hint, in upstream's metric words
	// (pod_incompatible, expired, ...; "none" when no batch was kept).
	NoHint string `json:"noHint,omitempty"`
	// Kept is how many nodes the cycle kept for the next pod; Dropped says
	// why it kept none (pod_not_batchable, empty_list).
	Kept    int    `json:"kept,omitempty"`
	Dropped string `json:"dropped,omitempty"`
}

// PermitWait reports a pod held at Permit.
type PermitWait struct {
	Node string `json:"node"`
	// Plugins maps each plugin that asked to wait to its timeout.
	Plugins map[string]int64 `json:"timeoutNanos"`
}

// BindingEnd closes a binding cycle.
type BindingEnd struct {
	Node    string `json:"node"`
	Bound   bool   `json:"bound"`
	Message string `json:"message,omitempty"`
	// Plugin is the plugin that failed the binding cycle.
	Plugin string `json:"plugin,omitempty"`
	// PermitNanos is how long the pod waited at Permit.
	PermitNanos int64 `json:"permitNanos,omitempty"`
	Nanos       int64 `json:"nanos"`
}

// ChangeAction says what happened to a cluster object.
type ChangeAction string

const (
	Added   ChangeAction = "added"
	Updated ChangeAction = "updated"
	Deleted ChangeAction = "deleted"
)

// NodeChange reports a node added, updated or deleted.
type NodeChange struct {
	Action ChangeAction `json:"action"`
	Node   NodeSummary  `json:"object"`
}

// PodChange reports a pod added, updated or deleted.
type PodChange struct {
	Action ChangeAction `json:"action"`
	Pod    PodSummary   `json:"object"`
}

// SchedulerState reports the scheduler's state.
type SchedulerState struct {
	// State is "running", "paused" or "stopped".
	State string `json:"state"`
	// Generation counts restarts with a new configuration.
	Generation int64 `json:"generation"`
	// Steps is how many single steps are still granted while paused.
	Steps   int    `json:"steps,omitempty"`
	Message string `json:"message,omitempty"`
	// Holding is true while the paused scheduler has a pod to take and
	// waits for a step or resume.
	Holding bool `json:"holding,omitempty"`
	// QueueSort says how the running scheduler orders activeQ; a restart
	// with a new configuration may change it.
	QueueSort *QueueSort `json:"queueSort,omitempty"`
}

// Preemption says who evicted the event's pod, and where from.
type Preemption struct {
	// Preemptor is the pod that made room, or the pod group (its
	// namespace, name and UID) when Group is set.
	Preemptor PodRef `json:"preemptor"`
	Group     bool   `json:"group,omitempty"`
	Node      string `json:"node"`
}

// QueueSort names the QueueSort plugin and says whether activeQ's pods
// carry an order (QueueMove.Order); without one a viewer shows arrival
// order.
type QueueSort struct {
	Plugin  string `json:"plugin"`
	Ordered bool   `json:"ordered"`
}

// ScenarioStep reports a scenario's progress.
type ScenarioStep struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Title is the scenario's title, for a banner ("Lesson 7: ...").
	Title string `json:"title,omitempty"`
	Step  int    `json:"step"`
	Steps int    `json:"steps"`
	// Phase is resetting (the cluster is emptied before step 1); running;
	// waiting (a paced run, before step Step, for Next or its pause); or
	// how the run ended: passed, failed, error, cancelled.
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
	// Note is the running (or awaited) step's note: what to look at.
	Note string `json:"note,omitempty"`
	// PartOf names the operation the run is a part of ("comparison"):
	// such a run is not a lesson of its own, and its end (a lesson's
	// expectations fail under another configuration) says nothing alone.
	PartOf string `json:"partOf,omitempty"`
}

// Multi fans an event out to several observers, in order.
func Multi(observers ...Observer) Observer {
	return ObserverFunc(func(e Event) {
		for _, o := range observers {
			o.Observe(e)
		}
	})
}

// ExtenderCall is one call to a scheduler extender, as kube-scheduler makes
// it: filter after the Filter plugins (and on the nominated node), prioritize
// beside the Score plugins (its scores are the Score table's column), bind
// instead of the Bind plugins, preempt within DefaultPreemption.
type ExtenderCall struct {
	// Extender is its urlPrefix, as upstream names it.
	Extender string `json:"extender"`
	// Verb is filter, prioritize, bind or preempt.
	Verb string `json:"verb"`
	// Nodes is how many nodes (preempt: candidate nodes) went to it, and
	// Passed how many it kept.
	Nodes  int `json:"nodes"`
	Passed int `json:"passed"`
	// Failed and Unresolvable are the nodes a filter turned away, with its
	// reasons, at most MaxExtenderReasons of each; FailedCount and
	// UnresolvableCount count them all.
	Failed            map[string]string `json:"failed,omitempty"`
	Unresolvable      map[string]string `json:"unresolvable,omitempty"`
	FailedCount       int               `json:"failedCount,omitempty"`
	UnresolvableCount int               `json:"unresolvableCount,omitempty"`
	// Node is the node a bind named.
	Node string `json:"node,omitempty"`
	// Weight is a prioritizer's weight.
	Weight int64 `json:"weight,omitempty"`
	// Error is the call's error; Ignored says the extender is ignorable,
	// so scheduling went on as if it had not been called.
	Error   string `json:"error,omitempty"`
	Ignored bool   `json:"ignored,omitempty"`
	Nanos   int64  `json:"nanos"`
}

// MaxExtenderReasons bounds the reasons an ExtenderCall keeps per kind.
const MaxExtenderReasons = 200
