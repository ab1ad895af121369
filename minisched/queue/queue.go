// Package queue is minisched's scheduling queue. It keeps kube-scheduler's
// semantics in a form that reads in one sitting:
//
//   - activeQ holds pods ready to be tried, ordered by the QueueSort plugin;
//   - backoffQ holds pods that failed and wait out a backoff (1s, doubling per
//     failure, capped at 10s), ordered by when the backoff ends;
//   - the unschedulable set holds pods that failed and are waiting for a
//     cluster event that one of the plugins that rejected them says may help
//     (the plugin's QueueingHint answers Queue), or for the periodic flush of
//     pods that have waited longer than five minutes;
//   - in flight are pods between Pop and the end of their cycle. Cluster events
//     that happen while a pod is in flight are remembered, so a pod whose
//     rejection a concurrent event may have cured is not parked for nothing.
//
// Every transition is reported to an event.Observer with its reason.
package queue

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"minisched/minisched/event"
)

// ErrClosed is returned by Pop once the queue is closed.
var ErrClosed = errors.New("scheduling queue is closed")

// Event labels for moves that no cluster event caused.
const (
	EventPodAdd                 = "PodAdd"
	EventPodUpdate              = "PodUpdate"
	EventPodDelete              = "PodDelete"
	EventBackoffComplete        = "BackoffComplete"
	EventScheduleAttemptFailure = "ScheduleAttemptFailure"
	EventUnschedulableTimeout   = "UnschedulableTimeout"
	EventForceActivate          = "ForceActivate"
)

// Cluster events the queue itself raises. Both are wildcards: every pod they
// reach is worth another try.
var (
	UnschedulableTimeout = fwk.ClusterEvent{Resource: fwk.WildCard, ActionType: fwk.All, CustomLabel: EventUnschedulableTimeout}
	ForceActivate        = fwk.ClusterEvent{Resource: fwk.WildCard, ActionType: fwk.All, CustomLabel: EventForceActivate}
)

// Options configure a Queue. Zero durations take kube-scheduler's defaults.
type Options struct {
	// Less orders activeQ; it is the QueueSort plugin's Less.
	Less fwk.LessFunc
	// PreEnqueue plugins gate pods before they enter activeQ.
	PreEnqueue []fwk.PreEnqueuePlugin
	// Hints maps a plugin's name to the events it registered
	// (EnqueueExtensions.EventsToRegister) with their QueueingHints.
	Hints map[string][]fwk.ClusterEventWithHint

	Clock                      clock.WithTicker
	InitialBackoff             time.Duration // default 1s
	MaxBackoff                 time.Duration // default 10s
	MaxInUnschedulable         time.Duration // default 5m
	BackoffFlushInterval       time.Duration // default 1s
	UnschedulableFlushInterval time.Duration // default 30s
	// MaxInFlightEvents bounds the events remembered for pods in flight.
	// Past it the oldest are dropped and the pods in flight are retried on
	// failure as if an event had queued them. Default 10,000.
	MaxInFlightEvents int

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
		{&o.BackoffFlushInterval, time.Second},
		{&o.UnschedulableFlushInterval, 30 * time.Second},
	}
	for _, d := range defaults {
		if *d.d <= 0 {
			*d.d = d.v
		}
	}
	if o.MaxInFlightEvents <= 0 {
		o.MaxInFlightEvents = 10000
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
	// Error is true when the attempt failed with an error rather than a
	// rejection; such pods retry after a backoff whatever happens.
	Error   bool
	Message string
}

// Queue is the scheduling queue. It is safe for concurrent use.
type Queue struct {
	opts Options

	mu            sync.Mutex
	cond          *sync.Cond
	active        *podHeap
	backoff       *podHeap
	unschedulable map[types.UID]*PodInfo
	// inFlight maps the pods between Pop and the end of their cycle to their
	// marker in flightLog, a list of pod markers and the cluster events that
	// happened after them.
	inFlight  map[types.UID]*list.Element
	flightLog *list.List
	logEvents int
	closed    bool
}

// flightEvent is a cluster event remembered while pods were in flight.
type flightEvent struct {
	event    fwk.ClusterEvent
	old, new any
}

// New returns an empty queue.
func New(opts Options) *Queue {
	opts.setDefaults()
	q := &Queue{
		opts:          opts,
		unschedulable: map[types.UID]*PodInfo{},
		inFlight:      map[types.UID]*list.Element{},
		flightLog:     list.New(),
	}
	q.cond = sync.NewCond(&q.mu)
	q.active = newPodHeap(func(a, b *PodInfo) bool { return opts.Less(a, b) })
	q.backoff = newPodHeap(func(a, b *PodInfo) bool {
		if !a.BackoffExpiration.Equal(b.BackoffExpiration) {
			return a.BackoffExpiration.Before(b.BackoffExpiration)
		}
		return opts.Less(a, b)
	})
	return q
}

// Run flushes backoffQ every second and the pods left unschedulable for too
// long every 30 seconds, until ctx ends; then it closes the queue.
func (q *Queue) Run(ctx context.Context) {
	backoff := q.opts.Clock.NewTicker(q.opts.BackoffFlushInterval)
	defer backoff.Stop()
	leftover := q.opts.Clock.NewTicker(q.opts.UnschedulableFlushInterval)
	defer leftover.Stop()
	for {
		select {
		case <-ctx.Done():
			q.Close()
			return
		case <-backoff.C():
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
// PreEnqueue plugin gates it.
func (q *Queue) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(pod)
}

func (q *Queue) addLocked(pod *v1.Pod) {
	if q.whereLocked(pod.UID) != "" {
		return
	}
	now := q.opts.Clock.Now()
	pi := &PodInfo{Pod: pod, Timestamp: now}
	if !q.preEnqueueLocked(pi) {
		q.putLocked(pi, event.Unschedulable, now)
		q.report(pi, event.ActionAdd, "", event.Unschedulable, EventPodAdd, nil, "gated by PreEnqueue plugin "+pi.GatingPlugin)
		return
	}
	q.putLocked(pi, event.ActiveQ, now)
	q.report(pi, event.ActionAdd, "", event.ActiveQ, EventPodAdd, nil, "")
}

// Pop blocks until a pod is in activeQ and hands it out; the pod is then in
// flight until AddUnschedulableIfNotPresent or Done.
func (q *Queue) Pop() (*PodInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && q.active.Len() == 0 {
		q.cond.Wait()
	}
	if q.closed {
		return nil, ErrClosed
	}
	pi := q.active.pop()
	pi.Attempts++
	now := q.opts.Clock.Now()
	if pi.InitialAttemptTimestamp == nil {
		pi.InitialAttemptTimestamp = &now
	}
	pi.where, pi.enteredAt = event.InFlight, now
	pi.missedEvents = false
	q.inFlight[pi.uid()] = q.flightLog.PushBack(pi)
	q.report(pi, event.ActionPop, event.ActiveQ, event.InFlight, "", nil, "")
	return pi, nil
}

// WaitForPod blocks until activeQ holds a pod or the queue closes. The
// scheduler waits here before it checks its pause gate, so that a pause
// holds the next pod in activeQ, where a person can see it, not in flight.
func (q *Queue) WaitForPod() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && q.active.Len() == 0 {
		q.cond.Wait()
	}
	if q.closed {
		return ErrClosed
	}
	return nil
}

// Done ends a pod's flight without requeueing it: it was bound, or deleted.
func (q *Queue) Done(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if el, ok := q.inFlight[uid]; ok {
		pi := el.Value.(*PodInfo)
		q.endFlightLocked(uid)
		q.report(pi, event.ActionDone, event.InFlight, "", "", nil, "")
	}
}

// AddUnschedulableIfNotPresent takes back a pod whose attempt failed. It goes
// to backoffQ when the failure was an error, or when a cluster event that
// happened during the attempt may have cured it; otherwise it goes to the
// unschedulable set to wait for such an event.
func (q *Queue) AddUnschedulableIfNotPresent(pi *PodInfo, f Failure) {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := pi.uid()
	if where := q.whereLocked(uid); pi.deleted || where != "" && where != event.InFlight {
		q.endFlightLocked(uid)
		if pi.deleted {
			q.report(pi, event.ActionDelete, event.InFlight, "", EventPodDelete, nil, "")
		}
		return
	}
	now := q.opts.Clock.Now()
	pi.Timestamp = now
	if f.Error {
		pi.ConsecutiveErrorsCount++
	} else {
		pi.ConsecutiveErrorsCount = 0
		pi.UnschedulableCount++
	}
	pi.UnschedulablePlugins = f.Plugins
	pi.PendingPlugins = f.Pending
	pi.BackoffExpiration = now.Add(q.backoffDuration(pi))

	requeue, label, by := f.Error, EventScheduleAttemptFailure, pi.rejectors().UnsortedList()
	if !f.Error {
		requeue, label, by = q.curedInFlightLocked(pi)
	}
	q.endFlightLocked(uid)
	sort.Strings(by)
	if requeue {
		q.putLocked(pi, event.BackoffQ, now)
		q.report(pi, event.ActionMove, event.InFlight, event.BackoffQ, label, by, f.Message)
		return
	}
	q.putLocked(pi, event.Unschedulable, now)
	q.report(pi, event.ActionMove, event.InFlight, event.Unschedulable, EventScheduleAttemptFailure, by, f.Message)
}

// curedInFlightLocked looks at the cluster events that happened while pi was
// in flight and says whether one of them may make it schedulable.
func (q *Queue) curedInFlightLocked(pi *PodInfo) (bool, string, []string) {
	rejectors := pi.rejectors().UnsortedList()
	if len(rejectors) == 0 {
		return true, EventScheduleAttemptFailure, nil
	}
	if pi.missedEvents {
		return true, EventScheduleAttemptFailure, rejectors
	}
	el, ok := q.inFlight[pi.uid()]
	if !ok {
		return false, "", rejectors
	}
	for e := el.Next(); e != nil; e = e.Next() {
		fe, ok := e.Value.(*flightEvent)
		if !ok {
			continue
		}
		if queue, plugin := q.worthRequeuing(pi, fe.event, fe.old, fe.new); queue {
			return true, fe.event.Label(), pluginList(plugin)
		}
	}
	return false, "", rejectors
}

// Update replaces a queued pod's object. A pod in the unschedulable set moves
// when the update is one its rejecting plugins care about, or when it no
// longer is gated. An unknown pod is added.
func (q *Queue) Update(oldPod, newPod *v1.Pod, events []fwk.ClusterEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := newPod.UID
	switch q.whereLocked(uid) {
	case event.InFlight:
		for _, ev := range events {
			q.recordLocked(ev, oldPod, newPod)
		}
	case event.ActiveQ:
		pi := q.active.get(uid)
		pi.Pod = newPod
		q.active.add(pi)
		q.report(pi, event.ActionUpdate, event.ActiveQ, event.ActiveQ, EventPodUpdate, nil, "")
	case event.BackoffQ:
		pi := q.backoff.get(uid)
		pi.Pod = newPod
		q.backoff.add(pi)
		q.report(pi, event.ActionUpdate, event.BackoffQ, event.BackoffQ, EventPodUpdate, nil, "")
	case event.Unschedulable:
		pi := q.unschedulable[uid]
		pi.Pod = newPod
		if pi.GatingPlugin != "" {
			gate := pi.GatingPlugin
			if q.preEnqueueLocked(pi) {
				q.moveLocked(pi, EventPodUpdate, []string{gate})
				return
			}
		} else {
			for _, ev := range events {
				if queue, plugin := q.worthRequeuing(pi, ev, oldPod, newPod); queue {
					q.moveLocked(pi, ev.Label(), pluginList(plugin))
					return
				}
			}
		}
		q.report(pi, event.ActionUpdate, event.Unschedulable, event.Unschedulable, EventPodUpdate, nil, "")
	default:
		q.addLocked(newPod)
	}
}

// Delete removes a pod from the queue.
func (q *Queue) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := pod.UID
	var pi *PodInfo
	from := q.whereLocked(uid)
	switch from {
	case event.ActiveQ:
		pi = q.active.remove(uid)
	case event.BackoffQ:
		pi = q.backoff.remove(uid)
	case event.Unschedulable:
		pi = q.unschedulable[uid]
		delete(q.unschedulable, uid)
	case event.InFlight:
		// The attempt goes on (the pod may even be getting bound, which
		// also looks like a delete to the informer); it must not come back
		// when it fails. Done or the failure reports how it ended.
		q.inFlight[uid].Value.(*PodInfo).deleted = true
		return
	default:
		return
	}
	q.report(pi, event.ActionDelete, from, "", EventPodDelete, nil, "")
}

// Events raised by assigned pods. They may free room, or satisfy affinity.
var (
	AssignedPodAdd    = fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Add}
	AssignedPodDelete = fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}
)

// AssignedPodAdded moves the pods an assigned pod may help.
func (q *Queue) AssignedPodAdded(pod *v1.Pod) {
	q.MoveAllToActiveOrBackoffQueue(AssignedPodAdd, nil, pod)
}

// AssignedPodUpdated moves the pods an updated assigned pod may help; events
// are the specific changes (label, scale down...).
func (q *Queue) AssignedPodUpdated(oldPod, newPod *v1.Pod, events []fwk.ClusterEvent) {
	for _, ev := range events {
		q.MoveAllToActiveOrBackoffQueue(ev, oldPod, newPod)
	}
}

// AssignedPodDeleted moves the pods a deleted assigned pod may help.
func (q *Queue) AssignedPodDeleted(pod *v1.Pod) {
	q.MoveAllToActiveOrBackoffQueue(AssignedPodDelete, pod, nil)
}

// MoveAllToActiveOrBackoffQueue offers a cluster event to every pod in the
// unschedulable set; those whose rejecting plugins answer Queue move to
// backoffQ, or straight to activeQ when their backoff is already over.
func (q *Queue) MoveAllToActiveOrBackoffQueue(ev fwk.ClusterEvent, oldObj, newObj any) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.recordLocked(ev, oldObj, newObj)
	for _, pi := range q.sortedUnschedulableLocked() {
		if queue, plugin := q.worthRequeuing(pi, ev, oldObj, newObj); queue {
			q.moveLocked(pi, ev.Label(), pluginList(plugin))
		}
	}
}

// Activate moves the named pods to activeQ at once, whatever their backoff
// (fwk.PodActivator).
func (q *Queue) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, pod := range pods {
		uid := pod.UID
		var pi *PodInfo
		from := q.whereLocked(uid)
		switch from {
		case event.BackoffQ:
			pi = q.backoff.remove(uid)
		case event.Unschedulable:
			pi = q.unschedulable[uid]
			if pi.GatingPlugin != "" {
				continue
			}
			delete(q.unschedulable, uid)
		case event.InFlight:
			q.recordLocked(ForceActivate, nil, pod)
			continue
		default:
			continue
		}
		q.putLocked(pi, event.ActiveQ, q.opts.Clock.Now())
		q.report(pi, event.ActionMove, from, event.ActiveQ, EventForceActivate, nil, "")
	}
}

// FlushBackoffQCompleted moves the pods whose backoff is over to activeQ.
func (q *Queue) FlushBackoffQCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Clock.Now()
	for {
		pi := q.backoff.peek()
		if pi == nil || pi.BackoffExpiration.After(now) {
			return
		}
		q.backoff.pop()
		q.putLocked(pi, event.ActiveQ, now)
		q.report(pi, event.ActionMove, event.BackoffQ, event.ActiveQ, EventBackoffComplete, nil, "")
	}
}

// FlushUnschedulableLeftover retries the pods that have waited in the
// unschedulable set longer than MaxInUnschedulable.
func (q *Queue) FlushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Clock.Now()
	for _, pi := range q.sortedUnschedulableLocked() {
		if now.Sub(pi.Timestamp) > q.opts.MaxInUnschedulable {
			q.moveLocked(pi, EventUnschedulableTimeout, nil)
		}
	}
}

// moveLocked takes pi out of the unschedulable set: a gated pod must pass
// PreEnqueue first; then it goes to backoffQ while its backoff lasts, to
// activeQ after.
func (q *Queue) moveLocked(pi *PodInfo, label string, plugins []string) {
	if pi.GatingPlugin != "" && !q.preEnqueueLocked(pi) {
		return
	}
	delete(q.unschedulable, pi.uid())
	now := q.opts.Clock.Now()
	to := event.ActiveQ
	if pi.BackoffExpiration.After(now) {
		to = event.BackoffQ
	}
	q.putLocked(pi, to, now)
	q.report(pi, event.ActionMove, event.Unschedulable, to, label, plugins, "")
}

// putLocked places pi in one queue.
func (q *Queue) putLocked(pi *PodInfo, to event.QueueName, now time.Time) {
	pi.where, pi.enteredAt = to, now
	switch to {
	case event.ActiveQ:
		q.active.add(pi)
		q.cond.Broadcast()
	case event.BackoffQ:
		q.backoff.add(pi)
	case event.Unschedulable:
		q.unschedulable[pi.uid()] = pi
	}
}

func (q *Queue) whereLocked(uid types.UID) event.QueueName {
	switch {
	case q.active.get(uid) != nil:
		return event.ActiveQ
	case q.backoff.get(uid) != nil:
		return event.BackoffQ
	case q.unschedulable[uid] != nil:
		return event.Unschedulable
	case q.inFlight[uid] != nil:
		return event.InFlight
	}
	return ""
}

// preEnqueueLocked runs the PreEnqueue plugins; a pod they gate records the
// gating plugin.
func (q *Queue) preEnqueueLocked(pi *PodInfo) bool {
	pi.GatingPlugin = ""
	if len(q.opts.PreEnqueue) == 0 {
		return true
	}
	results := make([]event.PluginResult, 0, len(q.opts.PreEnqueue))
	defer func() {
		q.opts.Observer.Observe(event.Event{
			Time: q.opts.Clock.Now(), Kind: event.KindPoint, Pod: event.RefOf(pi.Pod),
			Point: &event.PointResults{Point: "PreEnqueue", Results: results},
		})
	}()
	for _, pl := range q.opts.PreEnqueue {
		start := time.Now()
		status := runPreEnqueue(pl, pi.Pod)
		results = append(results, event.PluginResult{
			Plugin: pl.Name(), Code: int(status.Code()), Reason: status.Message(), Nanos: time.Since(start).Nanoseconds(),
		})
		if !status.IsSuccess() {
			pi.GatingPlugin = pl.Name()
			return false
		}
	}
	return true
}

func runPreEnqueue(pl fwk.PreEnqueuePlugin, pod *v1.Pod) (status *fwk.Status) {
	defer func() {
		if r := recover(); r != nil {
			status = fwk.NewStatus(fwk.Error, fmt.Sprintf("plugin panicked: %v", r))
		}
	}()
	return pl.PreEnqueue(context.Background(), pod)
}

// worthRequeuing asks the QueueingHints of the plugins that rejected pi
// whether ev may make it schedulable, and names the plugin that said Queue.
func (q *Queue) worthRequeuing(pi *PodInfo, ev fwk.ClusterEvent, oldObj, newObj any) (bool, string) {
	if ev.Resource == fwk.WildCard && ev.ActionType == fwk.All {
		return true, ""
	}
	rejectors := sets.List(pi.rejectors())
	if len(rejectors) == 0 {
		return true, ""
	}
	for _, name := range rejectors {
		for _, reg := range q.opts.Hints[name] {
			if !matches(reg.Event, ev) {
				continue
			}
			if reg.QueueingHintFn == nil {
				return true, name
			}
			if q.callHint(reg.QueueingHintFn, pi.Pod, oldObj, newObj) == fwk.Queue {
				return true, name
			}
		}
	}
	return false, ""
}

// callHint runs a QueueingHint; an error or a panic means Queue, as upstream:
// retrying is always safe, parking a pod forever is not.
func (q *Queue) callHint(fn fwk.QueueingHintFn, pod *v1.Pod, oldObj, newObj any) (hint fwk.QueueingHint) {
	defer func() {
		if r := recover(); r != nil {
			q.opts.Logger.Error(fmt.Errorf("%v", r), "QueueingHint panicked", "pod", klog.KObj(pod))
			hint = fwk.Queue
		}
	}()
	hint, err := fn(q.opts.Logger, pod, oldObj, newObj)
	if err != nil {
		return fwk.Queue
	}
	return hint
}

// matches says whether an incoming event is the registered one or a more
// specific form of it (UpdateNodeLabel is a form of Update).
func matches(registered, incoming fwk.ClusterEvent) bool {
	if registered.Resource == fwk.WildCard && registered.ActionType == fwk.All {
		return true
	}
	resource := registered.Resource == fwk.WildCard || registered.Resource == incoming.Resource ||
		registered.Resource == fwk.Pod && (incoming.Resource == fwk.AssignedPod ||
			incoming.Resource == fwk.UnscheduledPod || incoming.Resource == fwk.TargetPod)
	return resource && registered.ActionType&incoming.ActionType != 0 && incoming.ActionType <= registered.ActionType
}

// recordLocked remembers ev for the pods in flight.
func (q *Queue) recordLocked(ev fwk.ClusterEvent, oldObj, newObj any) {
	if len(q.inFlight) == 0 {
		return
	}
	q.flightLog.PushBack(&flightEvent{event: ev, old: oldObj, new: newObj})
	q.logEvents++
	if q.logEvents <= q.opts.MaxInFlightEvents {
		return
	}
	// Too many to remember: forget the oldest, and let every pod in flight
	// retry on failure as if it had seen them.
	for _, el := range q.inFlight {
		el.Value.(*PodInfo).missedEvents = true
	}
	for e := q.flightLog.Front(); e != nil && q.logEvents > q.opts.MaxInFlightEvents/2; {
		next := e.Next()
		if _, ok := e.Value.(*flightEvent); ok {
			q.flightLog.Remove(e)
			q.logEvents--
		}
		e = next
	}
}

// endFlightLocked removes a pod's marker and the events no pod in flight
// still needs.
func (q *Queue) endFlightLocked(uid types.UID) {
	el, ok := q.inFlight[uid]
	if !ok {
		return
	}
	delete(q.inFlight, uid)
	q.flightLog.Remove(el)
	for e := q.flightLog.Front(); e != nil; e = q.flightLog.Front() {
		if _, ok := e.Value.(*flightEvent); !ok {
			break
		}
		q.flightLog.Remove(e)
		q.logEvents--
	}
}

func (q *Queue) sortedUnschedulableLocked() []*PodInfo {
	pods := make([]*PodInfo, 0, len(q.unschedulable))
	for _, pi := range q.unschedulable {
		pods = append(pods, pi)
	}
	slices.SortFunc(pods, func(a, b *PodInfo) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.uid(), b.uid())
	})
	return pods
}

// backoffDuration is 1s doubled per failure, capped at 10s; errors count
// separately from rejections.
func (q *Queue) backoffDuration(pi *PodInfo) time.Duration {
	count := pi.UnschedulableCount
	if pi.ConsecutiveErrorsCount > 0 {
		count = pi.ConsecutiveErrorsCount
	}
	if count == 0 {
		return 0
	}
	d := q.opts.InitialBackoff
	for i := 1; i < count; i++ {
		d *= 2
		if d >= q.opts.MaxBackoff {
			return q.opts.MaxBackoff
		}
	}
	return d
}

func (q *Queue) report(pi *PodInfo, action event.QueueAction, from, to event.QueueName, label string, plugins []string, msg string) {
	if label != "" && action != event.ActionUpdate {
		pi.lastEvent, pi.lastMessage = label, msg
	}
	move := &event.QueueMove{
		Action: action, From: from, To: to, Event: label, Plugins: plugins,
		GatingPlugin: pi.GatingPlugin, Attempts: pi.Attempts, Message: msg,
	}
	if to == event.BackoffQ {
		until := pi.BackoffExpiration
		move.BackoffUntil = &until
	}
	q.opts.Observer.Observe(event.Event{
		Time: q.opts.Clock.Now(), Kind: event.KindQueue, Pod: event.RefOf(pi.Pod), Queue: move,
	})
}

func pluginList(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}

// Entry is one queued pod as the API shows it.
type Entry struct {
	Pod          *v1.Pod
	Queue        event.QueueName
	Attempts     int
	EnteredAt    time.Time
	BackoffUntil time.Time
	Plugins      []string
	GatingPlugin string
	// LastEvent is what last moved the pod (NodeAdd, BackoffComplete...);
	// LastMessage why its last attempt failed.
	LastEvent   string
	LastMessage string
}

// List returns every pod in the queue, activeQ in pop order first.
func (q *Queue) List() []Entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Entry
	add := func(pi *PodInfo) {
		out = append(out, Entry{
			Pod: pi.Pod, Queue: pi.where, Attempts: pi.Attempts, EnteredAt: pi.enteredAt,
			BackoffUntil: pi.BackoffExpiration, Plugins: sets.List(pi.rejectors()), GatingPlugin: pi.GatingPlugin,
			LastEvent: pi.lastEvent, LastMessage: pi.lastMessage,
		})
	}
	active := slices.Clone(q.active.items)
	slices.SortFunc(active, func(a, b *PodInfo) int {
		if q.opts.Less(a, b) {
			return -1
		}
		if q.opts.Less(b, a) {
			return 1
		}
		return 0
	})
	for _, pi := range active {
		add(pi)
	}
	backoff := slices.Clone(q.backoff.items)
	slices.SortFunc(backoff, func(a, b *PodInfo) int { return a.BackoffExpiration.Compare(b.BackoffExpiration) })
	for _, pi := range backoff {
		add(pi)
	}
	for _, pi := range q.sortedUnschedulableLocked() {
		add(pi)
	}
	for e := q.flightLog.Front(); e != nil; e = e.Next() {
		if pi, ok := e.Value.(*PodInfo); ok {
			add(pi)
		}
	}
	return out
}

// Counts returns how many pods each part of the queue holds.
func (q *Queue) Counts() map[event.QueueName]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return map[event.QueueName]int{
		event.ActiveQ:       q.active.Len(),
		event.BackoffQ:      q.backoff.Len(),
		event.Unschedulable: len(q.unschedulable),
		event.InFlight:      len(q.inFlight),
	}
}

// PodInfo is a pod in the queue and what the queue knows of it. It
// implements fwk.QueuedEntityInfo so the QueueSort plugin can order it.
type PodInfo struct {
	Pod *v1.Pod
	// Timestamp is when the pod last entered the queue; it orders pods of
	// equal priority.
	Timestamp               time.Time
	InitialAttemptTimestamp *time.Time
	Attempts                int
	UnschedulableCount      int
	ConsecutiveErrorsCount  int
	UnschedulablePlugins    sets.Set[string]
	PendingPlugins          sets.Set[string]
	GatingPlugin            string
	BackoffExpiration       time.Time

	where        event.QueueName
	enteredAt    time.Time
	missedEvents bool
	deleted      bool
	// lastEvent and lastMessage say what last moved the pod, and why.
	lastEvent   string
	lastMessage string
}

var _ fwk.QueuedEntityInfo = &PodInfo{}

func (pi *PodInfo) uid() types.UID { return pi.Pod.UID }

// rejectors are the plugins whose hints decide when the pod retries.
func (pi *PodInfo) rejectors() sets.Set[string] {
	s := sets.New[string]()
	s = s.Union(pi.UnschedulablePlugins).Union(pi.PendingPlugins)
	if pi.GatingPlugin != "" {
		s.Insert(pi.GatingPlugin)
	}
	return s
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
func (pi *PodInfo) GetGatingPluginEvents() []fwk.ClusterEvent { return nil }
