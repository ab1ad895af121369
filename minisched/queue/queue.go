// Package queue is minisched's scheduling queue. It behaves as
// kube-scheduler's PriorityQueue (pkg/scheduler/backend/queue, v1.37.2, with
// the default feature gates) does for single pods, in parts that each read in
// one sitting:
//
//   - activeQ (active_queue.go) holds the pods ready to be tried, ordered by
//     the QueueSort plugin. When it is empty, Pop takes the head of backoffQ
//     rather than leave the scheduler idle (unless SchedulerPopFromBackoffQ
//     is off: Options.NoPopFromBackoffQ).
//   - backoff (backoff_queue.go) holds the pods that failed and wait out a
//     backoff: 1s, doubled per failure, capped at 10s, aligned to one-second
//     windows. backoffQ holds the pods some plugin rejected; the error
//     backoff, never popped early, holds those whose attempt failed with an
//     error.
//   - the unschedulable set (unschedulable.go) holds the pods that wait for a
//     cluster event that one of the plugins that rejected them says may help
//     (its QueueingHint answers Queue; hints.go), and the pods a PreEnqueue
//     plugin gates. A pod left there for five minutes is given another try.
//   - in flight (in_flight.go) are the pods between Pop and the end of their
//     attempt. The cluster events that happen meanwhile are remembered, so
//     that a pod whose rejection such an event may have cured is not parked
//     for nothing.
//   - the nominator (nominator.go) remembers the node preemption nominated
//     for a pod, so that Filter keeps the room free for it.
//
// PreEnqueue plugins run on every move into activeQ or backoff, except from
// backoff to activeQ. Every transition is reported to an event.Observer with
// its reason. With GenericWorkload on (Options.GenericWorkload), a pod group
// moves through these parts as one entity (group.go).
//
// differential_test.go runs upstream's queue beside this one and checks that
// they agree after every operation. Where they differ on purpose: pods are
// known by UID, and an Add of a pod the queue holds is ignored; a pod deleted
// while in flight is not requeued when its attempt fails; a QueueingHint or
// PreEnqueue plugin that panics means Queue or gated, where upstream would
// crash; when several PreEnqueue plugins would gate a pod, the one that
// gated it before runs first, as upstream, then the others in the profile's
// order, where upstream's order is a map's; the pods that waited for their
// PodGroup object join it in member order, where upstream's order is a
// map's; a PodGroup update re-sorts its group.
//
// This file, the Queue's operations (Add, Pop, Update, Delete, Done, the
// moves on cluster events and the flushes), runs over 400 lines so that
// every way a pod enters or leaves a part reads in one place. What they
// move is an Entity: a pod, or a pod group.
package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"

	"minisched/event"
)

// ErrClosed is returned by Pop once the queue is closed.
var ErrClosed = errors.New("scheduling queue is closed")

// Event labels for moves that no cluster event caused.
const (
	EventPodAdd                 = "PodAdd"
	EventPodUpdate              = "PodUpdate"
	EventPodDelete              = "PodDelete"
	EventBackoffComplete        = framework.BackoffComplete
	EventPopFromBackoffQ        = framework.PopFromBackoffQ
	EventScheduleAttemptFailure = framework.ScheduleAttemptFailure
	EventUnschedulableTimeout   = framework.UnschedulableTimeout
	EventForceActivate          = framework.ForceActivate
	EventPodGroupAdd            = "PodGroupAdd"
	EventPodGroupDelete         = "PodGroupDelete"
)

// Cluster events the queue raises itself, and those of assigned pods.
var (
	UnschedulableTimeout = framework.EventUnschedulableTimeout
	ForceActivate        = framework.EventForceActivate
	AssignedPodAdd       = framework.EventAssignedPodAdd
	AssignedPodDelete    = framework.EventAssignedPodDelete
)

// Profile is what the queue asks of one profile's plugins.
type Profile struct {
	// PreEnqueue plugins gate pods on their way to activeQ or backoff, in
	// this order.
	PreEnqueue []fwk.PreEnqueuePlugin
	// Hints maps a plugin's name to the events it registered
	// (EnqueueExtensions.EventsToRegister) with their QueueingHints.
	Hints map[string][]fwk.ClusterEventWithHint

	// events is Hints without the hints: a gated pod's GatingPluginEvents.
	// PreEnqueue runs for every waiting pod of a pod group each time one
	// joins, so New works the lists out once.
	events map[string][]fwk.ClusterEvent
}

// PreEnqueueCheck selects the pods a cluster event is offered to.
type PreEnqueueCheck func(pod *v1.Pod) bool

// Options configure a Queue. Zero durations take kube-scheduler's defaults.
type Options struct {
	// Less orders activeQ; it is the QueueSort plugin's Less.
	Less fwk.LessFunc
	// SortKey, when set, gives a string per entity whose order is Less's:
	// the queue sends it with every move, so that viewers show activeQ in
	// pop order without a copy of the QueueSort plugin (PrioritySortKey).
	SortKey func(fwk.QueuedEntityInfo) string
	// Profiles holds each profile's PreEnqueue plugins and QueueingHints,
	// by scheduler name: a pod meets those of the profile its
	// spec.schedulerName names, as upstream keeps them per profile. QueueSort
	// is shared (Less): upstream requires the same one in every profile.
	Profiles map[string]Profile
	// NoPopFromBackoffQ is the SchedulerPopFromBackoffQ gate off (it is
	// on by default): Pop waits for activeQ, backoff expiries are not
	// aligned to windows, and PreEnqueue runs when a pod leaves backoff
	// rather than when it goes in, as upstream's queue then does.
	NoPopFromBackoffQ bool
	// GenericWorkload is the gate of that name on (it is off by default):
	// a pod whose spec.schedulingGroup names a PodGroup is queued with its
	// group (group.go).
	GenericWorkload bool
	// PodLister, when set, lets the nominator check that a pod still exists
	// and is not bound before it records a nomination, as upstream's does.
	PodLister corelisters.PodLister

	Clock                      clock.WithTicker
	InitialBackoff             time.Duration // default 1s
	MaxBackoff                 time.Duration // default 10s
	MaxInUnschedulable         time.Duration // default 5m
	UnschedulableFlushInterval time.Duration // default 30s

	Observer event.Observer
	Logger   klog.Logger
}

func (o *Options) setDefaults() {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	defaults := []struct {
		d *time.Duration
		v time.Duration
	}{
		{&o.InitialBackoff, time.Second},
		{&o.MaxBackoff, 10 * time.Second},
		{&o.MaxInUnschedulable, 5 * time.Minute},
		{&o.UnschedulableFlushInterval, 30 * time.Second},
	}
	for _, d := range defaults {
		if *d.d <= 0 {
			*d.d = d.v
		}
	}
	profiles := make(map[string]Profile, len(o.Profiles))
	for name, p := range o.Profiles {
		p.events = make(map[string][]fwk.ClusterEvent, len(p.Hints))
		for plugin, regs := range p.Hints {
			for _, reg := range regs {
				p.events[plugin] = append(p.events[plugin], reg.Event)
			}
		}
		profiles[name] = p
	}
	o.Profiles = profiles
	if o.Logger.GetSink() == nil {
		o.Logger = klog.Background()
	}
	if o.Observer == nil {
		o.Observer = event.Discard
	}
	if o.Less == nil {
		o.Less = func(a, b fwk.QueuedEntityInfo) bool { return a.GetTimestamp().Before(b.GetTimestamp()) }
	}
}

// Failure says why a scheduling attempt failed.
type Failure struct {
	// Plugins rejected the pod as Unschedulable or UnschedulableAndUnresolvable.
	Plugins sets.Set[string]
	// Pending plugins answered Pending.
	Pending sets.Set[string]
	// Error drops the plugins: the attempt failed with an error. A failure
	// that names no plugin is an error too, as upstream counts it; it waits
	// in the error backoff whatever happens.
	Error   bool
	Message string
	// Pod, when set, is the pod as the informer has it now; it replaces
	// the one the attempt began with. The queue swaps it under its lock:
	// List shows pods in flight while their attempt ends.
	Pod *v1.Pod
}

// Queue is the scheduling queue. It is safe for concurrent use. It is also
// the nominator the framework asks for nominated pods (fwk.PodNominator) and
// the activator plugins call (fwk.PodActivator).
type Queue struct {
	opts      Options
	nominator *nominator

	mu            sync.RWMutex
	cond          *sync.Cond
	active        *entityHeap
	backoff       *backoffQueue
	unschedulable unschedulableEntities
	flight        *inFlight
	closed        bool

	// forest holds the PodGroup objects the queue has seen, by group key;
	// incomplete the member pods whose PodGroup it has not seen, pending
	// those that came while their group was in its cycle; lastPopped is
	// the key of the entity Pop handed out last, until its cycle ends.
	forest     map[string]*schedulingv1beta1.PodGroup
	incomplete *heldPods
	pending    *heldPods
	lastPopped string
}

var (
	_ fwk.PodNominator = &Queue{}
	_ fwk.PodActivator = &Queue{}
)

// New returns an empty queue.
func New(opts Options) *Queue {
	opts.setDefaults()
	less := func(a, b Entity) bool { return opts.Less(a, b) }
	q := &Queue{
		opts:          opts,
		nominator:     newNominator(opts.PodLister),
		active:        newEntityHeap(less),
		backoff:       newBackoffQueue(opts.Clock, opts.InitialBackoff, opts.MaxBackoff, less, !opts.NoPopFromBackoffQ),
		unschedulable: unschedulableEntities{},
		flight:        newInFlight(),
		forest:        map[string]*schedulingv1beta1.PodGroup{},
		incomplete:    newHeldPods(event.IncompleteGroup),
		pending:       newHeldPods(event.PendingGroup),
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Run flushes backoff on every window boundary and the pods left
// unschedulable for too long every 30 seconds, until ctx ends; then it closes
// the queue.
func (q *Queue) Run(ctx context.Context) {
	clk := q.opts.Clock
	align := clk.NewTimer(q.backoff.nextWindow(clk.Now()))
	defer align.Stop()
	leftover := clk.NewTicker(q.opts.UnschedulableFlushInterval)
	defer leftover.Stop()
	var windows clock.Ticker
	var tick <-chan time.Time
	defer func() {
		if windows != nil {
			windows.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			q.Close()
			return
		case <-align.C():
			q.FlushBackoffQCompleted()
			windows = clk.NewTicker(orderingWindow)
			tick = windows.C()
		case <-tick:
			q.FlushBackoffQCompleted()
		case <-leftover.C():
			q.FlushUnschedulableLeftover()
		}
	}
}

// Close wakes every Pop with ErrClosed.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Add queues a new pod: into activeQ, or into the unschedulable set when a
// PreEnqueue plugin gates it; a pod of a group, with its group
// (addMemberLocked). Its nomination, if it has one, is recorded either way.
func (q *Queue) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(pod)
}

func (q *Queue) addLocked(pod *v1.Pod) {
	q.nominator.add(q.opts.Logger, pod, nil)
	if q.findLocked(pod) != nil {
		return
	}
	pi := &PodInfo{Pod: pod, entityState: entityState{Timestamp: q.opts.Clock.Now(), UnschedulablePlugins: sets.New[string]()}}
	if q.isMember(pod) {
		q.addMemberLocked(pi, cause{label: EventPodAdd})
		return
	}
	q.moveToActiveQLocked(pi, cause{label: EventPodAdd}, false)
}

// Pop blocks until an entity is ready (see readyLocked) and hands it out: a
// *PodInfo, or a *GroupInfo with GenericWorkload on. Its pods are then in
// flight, each until AddUnschedulableIfNotPresent or Done; a group's cycle
// ends with AddAttemptedGroup.
func (q *Queue) Pop() (Entity, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && !q.readyLocked() {
		q.cond.Wait()
	}
	if q.closed {
		return nil, ErrClosed
	}
	e, from := q.popLocked()
	eachParams(e, func(s *entityState) { s.Attempts++ })
	now := q.opts.Clock.Now()
	e.params().where, e.params().enteredAt = event.InFlight, now
	c := cause{}
	if from == event.BackoffQ {
		c.label = EventPopFromBackoffQ
	}
	for _, pi := range e.members() {
		pi.where, pi.enteredAt = event.InFlight, now
		q.flight.start(pi)
		q.report(e, pi, event.ActionPop, from, event.InFlight, c)
	}
	q.lastPopped = e.key()
	return e, nil
}

// WaitForPod blocks until Pop would not block, or the queue closes. The
// scheduler waits here before it checks its pause gate, so that a pause
// holds the next pod in the queue, where a person can see it, not in flight.
func (q *Queue) WaitForPod() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && !q.readyLocked() {
		q.cond.Wait()
	}
	if q.closed {
		return ErrClosed
	}
	return nil
}

// Done ends a pod's flight without requeueing it: it was bound, or deleted,
// or it went on to PreBind, after which no plugin can call it unschedulable.
func (q *Queue) Done(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if pi := q.flight.end(uid); pi != nil {
		pi.where = ""
		q.report(pi, pi, event.ActionDone, event.InFlight, "", cause{})
	}
}

// AddUnschedulableIfNotPresent takes back a pod whose attempt failed, as
// upstream's handleSchedulingFailure and AddUnschedulablePodIfNotPresent do
// between them. The failure replaces the plugins that rejected the pod. A
// rejection goes to the unschedulable set, unless an event that happened
// during the attempt may have cured it; an error, or a rejection so cured,
// goes to backoff, or to activeQ once the backoff is over (at once, when a
// Pending plugin's hint answered Queue). It ends the pod's flight. A pod of
// a group goes back to its group (addMemberLocked): while the group's cycle
// lasts, it waits apart for AddAttemptedGroup.
func (q *Queue) AddUnschedulableIfNotPresent(pi *PodInfo, f Failure) {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := pi.uid()
	defer q.flight.end(uid)
	if flying := q.flight.get(uid); flying != nil && flying.deleted {
		q.report(pi, pi, event.ActionDelete, event.InFlight, "", cause{label: EventPodDelete})
		return
	}
	if found := q.findLocked(pi.Pod); found != nil && found.where != event.InFlight {
		return
	}
	if f.Pod != nil {
		pi.Pod = f.Pod
	}
	pi.UnschedulablePlugins, pi.PendingPlugins = sets.New[string](), sets.New[string]()
	if !f.Error {
		pi.UnschedulablePlugins, pi.PendingPlugins = f.Plugins.Clone(), f.Pending.Clone()
	}
	pi.GatingPlugin, pi.GatingPluginEvents = "", nil
	if !pi.rejected() {
		pi.ConsecutiveErrorsCount++
	} else {
		pi.UnschedulableCount++
		pi.ConsecutiveErrorsCount = 0
	}
	pi.Timestamp = q.opts.Clock.Now()
	pi.FlushTimestamp = time.Time{}
	if q.isMember(pi.Pod) {
		// The group backs off, not its pods; events that came during the
		// cycle are not asked about (upstream's groups never are).
		pi.BackoffExpiration = time.Time{}
		q.flight.end(uid)
		q.addMemberLocked(pi, cause{label: EventScheduleAttemptFailure, plugins: sets.List(pi.rejectors()), message: f.Message})
		return
	}
	q.lastPopped = ""
	pi.BackoffExpiration = q.backoff.expiration(pi)
	s, c := q.hintForInFlightLocked(pi, f.Message)
	q.requeueLocked(pi, s, c)
}

// Update replaces a queued pod's object. A pod in the unschedulable set
// moves when its rejecting plugins' hints answer Queue to one of events, the
// changes the update makes (framework.PodSchedulingPropertiesChange with the
// pod as target); for a pod of a group, its group moves. For a pod in
// flight the events are remembered. An unknown pod is added.
func (q *Queue) Update(oldPod, newPod *v1.Pod, events []fwk.ClusterEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pi := q.findLocked(newPod)
	if pi == nil {
		q.addLocked(newPod)
		return
	}
	if pi.where == event.InFlight {
		for _, ev := range events {
			q.flight.record(ev, oldPod, newPod)
		}
		return
	}
	pi.Pod = newPod
	q.nominator.update(q.opts.Logger, oldPod, newPod)
	e := q.entityOfLocked(pi)
	switch where := pi.where; where {
	case event.ActiveQ, event.BackoffQ, event.ErrorBackoffQ:
		q.fixLocked(e.key())
	case event.Unschedulable:
		for _, ev := range events {
			s, plugin, skipped := q.worthRequeuing(e, ev, oldPod, newPod)
			if s == queueSkip {
				q.skippedLocked(e, ev.Label(), objectName(oldPod, newPod), skipped)
				continue
			}
			if to := q.requeueLocked(e, s, hinted(ev.Label(), objectName(oldPod, newPod), plugin, "")); to != event.Unschedulable {
				return
			}
		}
	}
	q.report(e, pi, event.ActionUpdate, pi.where, pi.where, cause{label: EventPodUpdate})
}

// Delete removes a pod from the queue, and its nomination. A pod of a
// group leaves its group, which goes back where it was (its PreEnqueue
// plugins asked again) unless it has no pod left; as upstream's, the group
// goes back so even when the pod deleted was not in it (in flight, or
// bound).
func (q *Queue) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.nominator.delete(pod)
	c := cause{label: EventPodDelete}
	if pi := q.findLocked(pod); pi != nil {
		switch from := pi.where; from {
		case event.InFlight:
			// The attempt goes on (the pod may even be getting bound,
			// which also looks like a delete to the informer); it must not
			// come back when it fails. Done or the failure reports how it
			// ended.
			pi.deleted = true
		default:
			switch from {
			case event.IncompleteGroup:
				q.incomplete.remove(pi)
			case event.PendingGroup:
				q.pending.remove(pi)
			default:
				if g, ok := q.entityOfLocked(pi).(*GroupInfo); ok {
					g.removePod(pi.uid())
				} else {
					q.takeLocked(pi)
				}
			}
			pi.where = ""
			q.report(pi, pi, event.ActionDelete, from, "", c)
		}
	}
	if !q.isMember(pod) {
		return
	}
	if g := q.groupLocked(memberGroupKey(pod)); g != nil {
		if len(g.Pods) == 0 {
			q.takeLocked(g)
			g.where = ""
			return
		}
		q.requeueLocked(g, strategyOf(g.where), c)
	}
}

// MoveAllToActiveOrBackoffQueue offers a cluster event to the pods of the
// unschedulable set that preCheck selects (all when nil). Those whose
// rejecting plugins' hints answer Queue move to backoff, or to activeQ when
// their backoff is over or a Pending plugin answered. The event is also
// remembered for the pods in flight. An event no plugin registered is
// ignored altogether.
func (q *Queue) MoveAllToActiveOrBackoffQueue(ev fwk.ClusterEvent, oldObj, newObj any, preCheck PreEnqueueCheck) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var entities []Entity
	for _, e := range q.unschedulable.sorted() {
		if preCheck == nil || slices.ContainsFunc(e.members(), func(pi *PodInfo) bool { return preCheck(pi.Pod) }) {
			entities = append(entities, e)
		}
	}
	q.moveLocked(entities, ev, oldObj, newObj)
}

// Activate moves the named pods to activeQ at once, whatever their backoff
// (fwk.PodActivator); a gated pod must pass PreEnqueue first. A pod of a
// group moves its whole group. For a pod in flight it records
// ForceActivate, which sends that pod, and no other, back through backoff
// if its attempt fails.
func (q *Queue) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := cause{label: EventForceActivate}
	// A gang's Permit activates all its pods at once: their group's key is
	// worked out once, not once per pod.
	var ns, name, key string
	groupKeyOf := func(pod *v1.Pod) string {
		if n := *pod.Spec.SchedulingGroup.PodGroupName; pod.Namespace != ns || n != name {
			ns, name, key = pod.Namespace, n, groupKey(pod.Namespace, n)
		}
		return key
	}
	for _, pod := range pods {
		var e Entity
		switch {
		case !q.isMember(pod):
			if pi := q.findLocked(pod); pi != nil && pi.where != event.InFlight {
				e = pi
			}
		case q.forest[groupKeyOf(pod)] == nil:
			continue // as upstream: no group to activate, nothing recorded
		default:
			// The group moves, wherever the pod named is (upstream's).
			if g := q.groupLocked(groupKeyOf(pod)); g != nil {
				e = g
			}
		}
		switch {
		case e != nil && e.params().where == event.Unschedulable:
			q.moveToActiveQLocked(e, c, false)
		case e != nil && e.params().where != event.ActiveQ:
			q.moveToActiveQLocked(e, c, true)
		case q.flight.get(pod.UID) != nil:
			q.flight.record(ForceActivate, nil, pod)
		}
	}
}

// FlushBackoffQCompleted moves the pods whose backoff window is over to
// activeQ, from both backoffs. Run calls it on every window boundary.
func (q *Queue) FlushBackoffQCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range q.backoff.popCompleted() {
		q.moveToActiveQLocked(e, cause{label: EventBackoffComplete}, true)
	}
}

// FlushUnschedulableLeftover gives another try to the pods that have waited
// in the unschedulable set longer than MaxInUnschedulable since they last
// failed or were last flushed. A gated pod is offered to its PreEnqueue
// plugins again. Pods in flight then see an UnschedulableTimeout.
func (q *Queue) FlushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if entities := q.unschedulable.leftovers(q.opts.Clock.Now(), q.opts.MaxInUnschedulable); len(entities) > 0 {
		q.moveLocked(entities, UnschedulableTimeout, nil, nil)
	}
}

// cause is why the queue moved a pod, for the event stream: an event label,
// the plugins that rejected the pod or whose hint answered Queue, a message.
type cause struct {
	label string
	// object is what the cluster event is about (objectName).
	object  string
	plugins []string
	message string
	// hint says plugins are those whose QueueingHint said Queue for the
	// cluster event label names; otherwise they rejected the pod.
	hint bool
}

// hinted is the cause of a move a cluster event made: plugin's
// QueueingHint said the pod may fit now.
func hinted(label, object, plugin, message string) cause {
	return cause{label: label, object: object, plugins: pluginList(plugin), message: message, hint: true}
}

// takeLocked takes e out of the part of the queue that holds it, and says
// which. A pod in flight keeps its marker until its flight ends.
func (q *Queue) takeLocked(e Entity) event.QueueName {
	switch where := e.params().where; where {
	case event.ActiveQ:
		q.active.remove(e.key())
	case event.BackoffQ, event.ErrorBackoffQ:
		q.backoff.remove(e)
	case event.Unschedulable:
		delete(q.unschedulable, e.key())
	}
	return e.params().where
}

// placedLocked records that e moved to a part of the queue, wakes Pop when
// it may take it, and reports the move of each of its pods; a pod that was
// nowhere (a new pod, or one that failed after Done) is reported as added.
// A group's pods already there (a group that gained a pod and stayed) are
// not reported again.
func (q *Queue) placedLocked(e Entity, from, to event.QueueName, c cause) {
	now := q.opts.Clock.Now()
	if to == event.ActiveQ || to == event.BackoffQ {
		q.cond.Broadcast()
	}
	if from != to {
		e.params().where, e.params().enteredAt = to, now
	}
	for _, pi := range e.members() {
		pf := from
		if Entity(pi) != e {
			pf = pi.where
		}
		if pf == to {
			continue
		}
		pi.where, pi.enteredAt = to, now
		q.report(e, pi, actionFrom(pf), pf, to, c)
	}
}

func actionFrom(from event.QueueName) event.QueueAction {
	if from == "" {
		return event.ActionAdd
	}
	return event.ActionMove
}

// findLocked returns the pod wherever the queue holds it, waiting, held
// for its group or in flight, and nil when it holds it nowhere; its where
// says which part holds it (a group's pod: its group's part).
func (q *Queue) findLocked(pod *v1.Pod) *PodInfo {
	if pi := q.flight.get(pod.UID); pi != nil {
		return pi
	}
	if !q.isMember(pod) {
		if e := q.entityLocked(string(pod.UID)); e != nil {
			return e.(*PodInfo)
		}
		return nil
	}
	if pi := q.incomplete.byUID[pod.UID]; pi != nil {
		return pi
	}
	if pi := q.pending.byUID[pod.UID]; pi != nil {
		return pi
	}
	if g := q.groupLocked(memberGroupKey(pod)); g != nil {
		return g.pod(pod.UID)
	}
	return nil
}

// entityLocked returns the entity with this key waiting in activeQ,
// backoff or the unschedulable set; nil for one in flight or unknown.
func (q *Queue) entityLocked(key string) Entity {
	for _, h := range []*entityHeap{q.active, q.backoff.rejected, q.backoff.errored} {
		if e := h.get(key); e != nil {
			return e
		}
	}
	if e, ok := q.unschedulable[key]; ok {
		return e
	}
	return nil
}

// fixLocked re-sorts the entity with this key wherever a heap holds it.
func (q *Queue) fixLocked(key string) {
	for _, h := range []*entityHeap{q.active, q.backoff.rejected, q.backoff.errored} {
		h.fix(key)
	}
}

// entityOfLocked is what moves when pi waiting moves: its group, or itself.
func (q *Queue) entityOfLocked(pi *PodInfo) Entity {
	if q.isMember(pi.Pod) {
		if g := q.groupLocked(memberGroupKey(pi.Pod)); g != nil {
			return g
		}
	}
	return pi
}

// report tells the observer what happened to pi, one of e's pods.
func (q *Queue) report(e Entity, pi *PodInfo, action event.QueueAction, from, to event.QueueName, c cause) {
	switch {
	case action == event.ActionSkip:
		pi.lastSkip = &event.QueueMove{Event: c.label, Object: c.object, Plugins: c.plugins}
	case action == event.ActionUpdate:
	case c.label != "":
		pi.lastEvent, pi.lastHints, pi.lastSkip, pi.skips = c.label, nil, nil, nil
		if c.hint {
			pi.lastHints = c.plugins
		}
	}
	if c.message != "" {
		pi.lastMessage = c.message
	}
	s := e.params()
	move := &event.QueueMove{
		Action: action, From: from, To: to, Event: c.label, Object: c.object, Plugins: c.plugins, RejectedBy: sets.List(pi.rejectors()),
		GatingPlugin: s.GatingPlugin, Attempts: pi.Attempts, Message: c.message, PodGroup: groupName(pi.Pod),
	}
	if to == event.BackoffQ || to == event.ErrorBackoffQ {
		until := s.BackoffExpiration
		move.BackoffUntil = &until
	}
	move.Order = q.order(e, to)
	q.opts.Observer.Observe(event.Event{
		Time: q.opts.Clock.Now(), Kind: event.KindQueue, Pod: event.RefOf(pi.Pod), Queue: move,
	})
}
