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
// its reason. Pod groups (GenericWorkload, off by default) are not modelled.
//
// differential_test.go runs upstream's queue beside this one and checks that
// they agree after every operation. Where they differ on purpose: pods are
// known by UID, and an Add of a pod the queue holds is ignored; a pod deleted
// while in flight is not requeued when its attempt fails; a QueueingHint or
// PreEnqueue plugin that panics means Queue or gated, where upstream would
// crash; when several PreEnqueue plugins would gate a pod, the one that
// gated it before runs first, as upstream, then the others in the profile's
// order, where upstream's order is a map's.
//
// This file, the Queue's operations (Add, Pop, Update, Delete, Done, the
// moves on cluster events and the flushes), runs over 400 lines so that
// every way a pod enters or leaves a part reads in one place.
package queue

import (
	"context"
	"errors"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
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
}

// PreEnqueueCheck selects the pods a cluster event is offered to.
type PreEnqueueCheck func(pod *v1.Pod) bool

// Options configure a Queue. Zero durations take kube-scheduler's defaults.
type Options struct {
	// Less orders activeQ; it is the QueueSort plugin's Less.
	Less fwk.LessFunc
	// SortKey, when set, gives a string per pod whose order is Less's: the
	// queue sends it with every move, so that viewers show activeQ in pop
	// order without a copy of the QueueSort plugin (PrioritySortKey).
	SortKey func(*PodInfo) string
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
	active        *podHeap
	backoff       *backoffQueue
	unschedulable unschedulablePods
	flight        *inFlight
	closed        bool
}

var (
	_ fwk.PodNominator = &Queue{}
	_ fwk.PodActivator = &Queue{}
)

// New returns an empty queue.
func New(opts Options) *Queue {
	opts.setDefaults()
	less := func(a, b *PodInfo) bool { return opts.Less(a, b) }
	q := &Queue{
		opts:          opts,
		nominator:     newNominator(opts.PodLister),
		active:        newPodHeap(less),
		backoff:       newBackoffQueue(opts.Clock, opts.InitialBackoff, opts.MaxBackoff, less, !opts.NoPopFromBackoffQ),
		unschedulable: unschedulablePods{},
		flight:        newInFlight(),
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
// PreEnqueue plugin gates it. Its nomination, if it has one, is recorded
// either way.
func (q *Queue) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(pod)
}

func (q *Queue) addLocked(pod *v1.Pod) {
	q.nominator.add(q.opts.Logger, pod, nil)
	if q.whereLocked(pod.UID) != "" {
		return
	}
	pi := &PodInfo{Pod: pod, Timestamp: q.opts.Clock.Now(), UnschedulablePlugins: sets.New[string]()}
	q.moveToActiveQLocked(pi, cause{label: EventPodAdd}, false)
}

// Pop blocks until a pod is ready (see readyLocked) and hands it out; the pod
// is then in flight until AddUnschedulableIfNotPresent or Done.
func (q *Queue) Pop() (*PodInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && !q.readyLocked() {
		q.cond.Wait()
	}
	if q.closed {
		return nil, ErrClosed
	}
	pi, from := q.popLocked()
	pi.Attempts++
	pi.where, pi.enteredAt = event.InFlight, q.opts.Clock.Now()
	q.flight.start(pi)
	c := cause{}
	if from == event.BackoffQ {
		c.label = EventPopFromBackoffQ
	}
	q.report(pi, event.ActionPop, from, event.InFlight, c)
	return pi, nil
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
		q.report(pi, event.ActionDone, event.InFlight, "", cause{})
	}
}

// AddUnschedulableIfNotPresent takes back a pod whose attempt failed, as
// upstream's handleSchedulingFailure and AddUnschedulablePodIfNotPresent do
// between them. The failure replaces the plugins that rejected the pod. A
// rejection goes to the unschedulable set, unless an event that happened
// during the attempt may have cured it; an error, or a rejection so cured,
// goes to backoff, or to activeQ once the backoff is over (at once, when a
// Pending plugin's hint answered Queue). It ends the pod's flight.
func (q *Queue) AddUnschedulableIfNotPresent(pi *PodInfo, f Failure) {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := pi.uid()
	defer q.flight.end(uid)
	if flying := q.flight.get(uid); flying != nil && flying.deleted {
		q.report(pi, event.ActionDelete, event.InFlight, "", cause{label: EventPodDelete})
		return
	}
	if where := q.whereLocked(uid); where != "" && where != event.InFlight {
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
	if pi.rejectors().Len() == 0 {
		pi.ConsecutiveErrorsCount++
	} else {
		pi.UnschedulableCount++
		pi.ConsecutiveErrorsCount = 0
	}
	pi.Timestamp = q.opts.Clock.Now()
	pi.BackoffExpiration = q.backoff.expiration(pi)
	pi.FlushTimestamp = time.Time{}
	s, c := q.hintForInFlightLocked(pi, f.Message)
	q.requeueLocked(pi, s, c)
}

// Update replaces a queued pod's object. A pod in the unschedulable set
// moves when its rejecting plugins' hints answer Queue to one of events, the
// changes the update makes (framework.PodSchedulingPropertiesChange with the
// pod as target). For a pod in flight the events are remembered. An unknown
// pod is added.
func (q *Queue) Update(oldPod, newPod *v1.Pod, events []fwk.ClusterEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := newPod.UID
	pi := q.findLocked(uid)
	if pi == nil {
		q.addLocked(newPod)
		return
	}
	switch where := pi.where; where {
	case event.InFlight:
		for _, ev := range events {
			q.flight.record(ev, oldPod, newPod)
		}
	case event.ActiveQ, event.BackoffQ, event.ErrorBackoffQ:
		pi.Pod = newPod
		q.active.fix(uid)
		q.backoff.rejected.fix(uid)
		q.backoff.errored.fix(uid)
		q.nominator.update(q.opts.Logger, oldPod, newPod)
		q.report(pi, event.ActionUpdate, where, where, cause{label: EventPodUpdate})
	case event.Unschedulable:
		pi.Pod = newPod
		q.nominator.update(q.opts.Logger, oldPod, newPod)
		for _, ev := range events {
			s, plugin, skipped := q.worthRequeuing(pi, ev, oldPod, newPod)
			if s == queueSkip {
				q.skippedLocked(pi, ev.Label(), objectName(oldPod, newPod), skipped)
				continue
			}
			if to := q.requeueLocked(pi, s, hinted(ev.Label(), objectName(oldPod, newPod), plugin, "")); to != event.Unschedulable {
				return
			}
		}
		q.report(pi, event.ActionUpdate, where, where, cause{label: EventPodUpdate})
	}
}

// Delete removes a pod from the queue, and its nomination.
func (q *Queue) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.nominator.delete(pod)
	switch pi := q.findLocked(pod.UID); {
	case pi == nil:
	case pi.where == event.InFlight:
		// The attempt goes on (the pod may even be getting bound, which
		// also looks like a delete to the informer); it must not come back
		// when it fails. Done or the failure reports how it ended.
		pi.deleted = true
	default:
		from := q.takeLocked(pi)
		q.report(pi, event.ActionDelete, from, "", cause{label: EventPodDelete})
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
	var pods []*PodInfo
	for _, pi := range q.unschedulable.sorted() {
		if preCheck == nil || preCheck(pi.Pod) {
			pods = append(pods, pi)
		}
	}
	q.moveLocked(pods, ev, oldObj, newObj)
}

// Activate moves the named pods to activeQ at once, whatever their backoff
// (fwk.PodActivator); a gated pod must pass PreEnqueue first. For a pod in
// flight it records ForceActivate, which sends that pod, and no other, back
// through backoff if its attempt fails.
func (q *Queue) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := cause{label: EventForceActivate}
	for _, pod := range pods {
		switch pi := q.findLocked(pod.UID); {
		case pi == nil:
		case pi.where == event.InFlight:
			q.flight.record(ForceActivate, nil, pod)
		case pi.where == event.Unschedulable:
			q.moveToActiveQLocked(pi, c, false)
		case pi.where == event.BackoffQ || pi.where == event.ErrorBackoffQ:
			q.moveToActiveQLocked(pi, c, true)
		}
	}
}

// FlushBackoffQCompleted moves the pods whose backoff window is over to
// activeQ, from both backoffs. Run calls it on every window boundary.
func (q *Queue) FlushBackoffQCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, pi := range q.backoff.popCompleted() {
		q.moveToActiveQLocked(pi, cause{label: EventBackoffComplete}, true)
	}
}

// FlushUnschedulableLeftover gives another try to the pods that have waited
// in the unschedulable set longer than MaxInUnschedulable since they last
// failed or were last flushed. A gated pod is offered to its PreEnqueue
// plugins again. Pods in flight then see an UnschedulableTimeout.
func (q *Queue) FlushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if pods := q.unschedulable.leftovers(q.opts.Clock.Now(), q.opts.MaxInUnschedulable); len(pods) > 0 {
		q.moveLocked(pods, UnschedulableTimeout, nil, nil)
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

// takeLocked takes pi out of the part of the queue that holds it, and says
// which. A pod in flight keeps its marker until its flight ends.
func (q *Queue) takeLocked(pi *PodInfo) event.QueueName {
	switch pi.where {
	case event.ActiveQ:
		q.active.remove(pi.uid())
	case event.BackoffQ, event.ErrorBackoffQ:
		q.backoff.remove(pi)
	case event.Unschedulable:
		delete(q.unschedulable, pi.uid())
	}
	return pi.where
}

// placedLocked records that pi moved, wakes Pop when it may take the pod,
// and reports the move; a pod that was nowhere (a new pod, or one that failed
// after Done) is reported as added.
func (q *Queue) placedLocked(pi *PodInfo, from, to event.QueueName, c cause) {
	pi.where, pi.enteredAt = to, q.opts.Clock.Now()
	if to == event.ActiveQ || to == event.BackoffQ {
		q.cond.Broadcast()
	}
	action := event.ActionMove
	if from == "" {
		action = event.ActionAdd
	}
	q.report(pi, action, from, to, c)
}

// findLocked returns the pod wherever the queue holds it, waiting or in
// flight, and nil when it holds it nowhere; its where says which part holds
// it.
func (q *Queue) findLocked(uid types.UID) *PodInfo {
	if pi := q.podLocked(uid); pi != nil {
		return pi
	}
	return q.flight.get(uid)
}

// whereLocked says which part of the queue holds the pod, "" if none.
func (q *Queue) whereLocked(uid types.UID) event.QueueName {
	if pi := q.findLocked(uid); pi != nil {
		return pi.where
	}
	return ""
}

// podLocked returns the pod waiting in activeQ, backoff or the
// unschedulable set; nil for a pod in flight or unknown.
func (q *Queue) podLocked(uid types.UID) *PodInfo {
	for _, h := range []*podHeap{q.active, q.backoff.rejected, q.backoff.errored} {
		if pi := h.get(uid); pi != nil {
			return pi
		}
	}
	return q.unschedulable[uid]
}

func (q *Queue) report(pi *PodInfo, action event.QueueAction, from, to event.QueueName, c cause) {
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
	move := &event.QueueMove{
		Action: action, From: from, To: to, Event: c.label, Object: c.object, Plugins: c.plugins, RejectedBy: sets.List(pi.rejectors()),
		GatingPlugin: pi.GatingPlugin, Attempts: pi.Attempts, Message: c.message,
	}
	if to == event.BackoffQ || to == event.ErrorBackoffQ {
		until := pi.BackoffExpiration
		move.BackoffUntil = &until
	}
	move.Order = q.order(pi, to)
	q.opts.Observer.Observe(event.Event{
		Time: q.opts.Clock.Now(), Kind: event.KindQueue, Pod: event.RefOf(pi.Pod), Queue: move,
	})
}
