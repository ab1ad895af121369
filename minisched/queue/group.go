package queue

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	"minisched/event"
)

// Pod groups (GenericWorkload, Options.GenericWorkload). A pod whose
// spec.schedulingGroup names a PodGroup is queued with its group: the
// group, one GroupInfo, is what activeQ, backoff and the unschedulable set
// hold, and what Pop hands out, as upstream's QueuedPodGroupInfo. Until the
// queue has seen the PodGroup object, the pod waits apart ("incomplete");
// a pod that comes while its group is in its cycle waits apart too
// ("pending"), and joins the group when AddAttemptedGroup takes it back.
// Every member pod is in exactly one of those places, or in flight.
// docs/design/gang-scheduling.md §1 describes upstream's queue, which this
// follows; CompositePodGroup (alpha) is not modelled: every group is a root.

// GroupInfo is a pod group in the queue.
type GroupInfo struct {
	Namespace, Name string
	// PodGroup is the object as the queue last saw it; its priority
	// orders the group.
	PodGroup *schedulingv1beta1.PodGroup
	// Pods are the queued pods, in the order the group's cycle tries them:
	// priority (highest first), attempts (most first), timestamp, name.
	Pods []*PodInfo
	entityState
}

var _ Entity = &GroupInfo{}

func (g *GroupInfo) key() string         { return groupKey(g.Namespace, g.Name) }
func (g *GroupInfo) members() []*PodInfo { return g.Pods }

func (g *GroupInfo) Type() fwk.EntityKeyType { return fwk.PodGroupKeyType }

// GetPriority is the PodGroup's, not its pods': upstream requires them to
// be equal when it schedules the group.
func (g *GroupInfo) GetPriority() int32 { return schedutil.PodGroupPriority(g.PodGroup) }

// addPod inserts pi in member order (upstream's
// PodGroupMemberPodsOrderingFunc). The order is not kept up to date later:
// upstream re-sorts only when a group is rebuilt after its cycle.
func (g *GroupInfo) addPod(pi *PodInfo) {
	i, _ := slices.BinarySearchFunc(g.Pods, pi, memberOrder)
	g.Pods = slices.Insert(g.Pods, i, pi)
}

func (g *GroupInfo) removePod(uid types.UID) *PodInfo {
	for i, pi := range g.Pods {
		if pi.uid() == uid {
			g.Pods = slices.Delete(g.Pods, i, i+1)
			return pi
		}
	}
	return nil
}

func (g *GroupInfo) pod(uid types.UID) *PodInfo {
	for _, pi := range g.Pods {
		if pi.uid() == uid {
			return pi
		}
	}
	return nil
}

func memberOrder(a, b *PodInfo) int {
	return cmp.Or(
		cmp.Compare(b.GetPriority(), a.GetPriority()),
		cmp.Compare(b.Attempts, a.Attempts),
		a.Timestamp.Compare(b.Timestamp),
		cmp.Compare(a.Pod.Name, b.Pod.Name),
	)
}

// eachParams applies f to the entity's params and, for a group, to each of
// its pods' too: attempts, the first attempt's time and the flush flag
// belong to both, as upstream's setters fan out.
func eachParams(e Entity, f func(*entityState)) {
	f(e.params())
	if g, ok := e.(*GroupInfo); ok {
		for _, pi := range g.Pods {
			f(&pi.entityState)
		}
	}
}

func groupKey(namespace, name string) string {
	return fwk.PodGroupKey(namespace, name).String()
}

// groupName is the namespace/name of the pod's group, "" for a pod without
// one.
func groupName(pod *v1.Pod) string {
	if sg := pod.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
		return pod.Namespace + "/" + *sg.PodGroupName
	}
	return ""
}

// isMember says whether the queue keeps the pod with its group.
func (q *Queue) isMember(pod *v1.Pod) bool {
	return q.opts.GenericWorkload && groupName(pod) != ""
}

func memberGroupKey(pod *v1.Pod) string {
	return groupKey(pod.Namespace, *pod.Spec.SchedulingGroup.PodGroupName)
}

// heldPods are member pods that wait outside activeQ, backoff and the
// unschedulable set, by group key.
type heldPods struct {
	where   event.QueueName
	byGroup map[string]map[types.UID]*PodInfo
	byUID   map[types.UID]*PodInfo
}

func newHeldPods(where event.QueueName) *heldPods {
	return &heldPods{where: where, byGroup: map[string]map[types.UID]*PodInfo{}, byUID: map[types.UID]*PodInfo{}}
}

func (h *heldPods) add(pi *PodInfo) {
	k := memberGroupKey(pi.Pod)
	if h.byGroup[k] == nil {
		h.byGroup[k] = map[types.UID]*PodInfo{}
	}
	h.byGroup[k][pi.uid()] = pi
	h.byUID[pi.uid()] = pi
}

func (h *heldPods) remove(pi *PodInfo) {
	k := memberGroupKey(pi.Pod)
	delete(h.byGroup[k], pi.uid())
	if len(h.byGroup[k]) == 0 {
		delete(h.byGroup, k)
	}
	delete(h.byUID, pi.uid())
}

// clear takes out the group's pods, in member order. (Upstream's order is
// a map's; the first pod gives a new group its timestamp.)
func (h *heldPods) clear(key string) []*PodInfo {
	pods := h.sortedOf(h.byGroup[key])
	for _, pi := range pods {
		h.remove(pi)
	}
	return pods
}

func (h *heldPods) sorted() []*PodInfo { return h.sortedOf(h.byUID) }

func (h *heldPods) sortedOf(m map[types.UID]*PodInfo) []*PodInfo {
	pods := make([]*PodInfo, 0, len(m))
	for _, pi := range m {
		pods = append(pods, pi)
	}
	slices.SortFunc(pods, memberOrder)
	return pods
}

// holdLocked puts a member pod in h and reports where it went.
func (q *Queue) holdLocked(h *heldPods, pi *PodInfo, c cause) {
	from := pi.where
	h.add(pi)
	pi.where, pi.enteredAt = h.where, q.opts.Clock.Now()
	q.report(pi, pi, actionFrom(from), from, h.where, c)
}

// groupLocked returns the group entity with this key waiting in activeQ,
// backoff or the unschedulable set, or nil.
func (q *Queue) groupLocked(key string) *GroupInfo {
	if e := q.entityLocked(key); e != nil {
		return e.(*GroupInfo)
	}
	return nil
}

// addMemberLocked queues a member pod, as upstream's addPodGroupMember:
// apart while its PodGroup is unseen; into its group where the group waits
// (and the group goes where it would have gone anyway, its pods' PreEnqueue
// plugins asked again); apart while its group is in its cycle; otherwise as
// the first pod of a new group, into activeQ unless gated.
func (q *Queue) addMemberLocked(pi *PodInfo, c cause) {
	key := memberGroupKey(pi.Pod)
	pg := q.forest[key]
	if pg == nil {
		q.holdLocked(q.incomplete, pi, c)
		return
	}
	if g := q.groupLocked(key); g != nil {
		g.addPod(pi)
		q.requeueLocked(g, strategyOf(g.where), c)
		return
	}
	if q.lastPopped == key {
		q.holdLocked(q.pending, pi, c)
		return
	}
	g := &GroupInfo{Namespace: pg.Namespace, Name: pg.Name, PodGroup: pg}
	g.Timestamp, g.InitialAttemptTimestamp = pi.Timestamp, pi.InitialAttemptTimestamp
	g.addPod(pi)
	q.moveToActiveQLocked(g, c, false)
}

// strategyOf is how a waiting entity that gains or loses a pod goes back:
// where it was (upstream's deleteFromAnyQueue).
func strategyOf(where event.QueueName) queueingStrategy {
	switch where {
	case event.ActiveQ:
		return queueImmediately
	case event.BackoffQ, event.ErrorBackoffQ:
		return queueAfterBackoff
	}
	return queueSkip
}

// GroupOutcome is how a pod group's cycle ended, for AddAttemptedGroup.
type GroupOutcome int

const (
	// GroupScheduled: the group was placed; pods left behind retry at
	// once.
	GroupScheduled GroupOutcome = iota
	// GroupUnschedulable: the group was rejected; it backs off.
	GroupUnschedulable
	// GroupError: the cycle failed with an error; it backs off too.
	GroupError
)

// AddAttemptedGroup takes a group back at the end of its cycle, as
// upstream's AddAttemptedPodGroupIfNeeded. Its failed pods came back
// through AddUnschedulableIfNotPresent and wait apart, with the pods that
// came meanwhile; they form the group anew, which keeps the group's
// counters. After a success they go to activeQ at once (keeping the
// timestamp if some of the cycle's own pods failed, so that they may
// preempt next); after a failure, to backoff while it lasts. A group is
// never parked to wait for a cluster event, unless a PreEnqueue plugin
// gates it.
func (q *Queue) AddAttemptedGroup(g *GroupInfo, outcome GroupOutcome) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := g.key()
	if e := q.entityLocked(key); e != nil {
		return fmt.Errorf("pod group %s/%s is already in %s", g.Namespace, g.Name, e.params().where)
	}
	q.lastPopped = ""
	pending := q.pending.clear(key)
	if len(pending) == 0 {
		return nil
	}
	failed := slices.ContainsFunc(pending, func(pi *PodInfo) bool { return g.pod(pi.uid()) != nil })
	pg := q.forest[key]
	if pg == nil {
		for _, pi := range pending {
			q.holdLocked(q.incomplete, pi, cause{label: EventScheduleAttemptFailure})
		}
		return nil
	}
	fresh := &GroupInfo{Namespace: g.Namespace, Name: g.Name, PodGroup: pg, entityState: g.entityState}
	fresh.where = ""
	for _, pi := range pending {
		fresh.addPod(pi)
	}
	now := q.opts.Clock.Now()
	switch outcome {
	case GroupScheduled:
		fresh.UnschedulableCount, fresh.ConsecutiveErrorsCount = 0, 0
	case GroupUnschedulable:
		fresh.UnschedulableCount++
		fresh.ConsecutiveErrorsCount = 0
	default:
		fresh.ConsecutiveErrorsCount++
	}
	if outcome != GroupScheduled || !failed {
		fresh.Timestamp = now
	}
	if outcome != GroupScheduled {
		// After a success the group keeps the expiry it had, as
		// upstream's: it goes to activeQ whatever its backoff.
		fresh.BackoffExpiration = q.backoff.expiration(fresh)
	}
	fresh.FlushTimestamp = time.Time{}
	c := cause{label: EventScheduleAttemptFailure}
	if outcome != GroupScheduled && q.backoff.backingOff(fresh) {
		q.moveToBackoffQLocked(fresh, c)
	} else {
		q.moveToActiveQLocked(fresh, c, false)
	}
	return nil
}

// AddPodGroup records a PodGroup object; its pods that waited for it join
// the queue.
func (q *Queue) AddPodGroup(pg *schedulingv1beta1.PodGroup) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := groupKey(pg.Namespace, pg.Name)
	q.forest[key] = pg
	for _, pi := range q.incomplete.clear(key) {
		q.addMemberLocked(pi, cause{label: EventPodGroupAdd})
	}
}

// UpdatePodGroup records a new version of a PodGroup object. A queued group
// takes it, and is re-sorted by its priority (upstream's heap is not:
// docs/FIDELITY.md); the cluster event that follows may move it.
func (q *Queue) UpdatePodGroup(pg *schedulingv1beta1.PodGroup) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := groupKey(pg.Namespace, pg.Name)
	if q.forest[key] == nil {
		return
	}
	q.forest[key] = pg
	if g := q.groupLocked(key); g != nil {
		g.PodGroup = pg
		q.fixLocked(key)
	}
}

// DeletePodGroup forgets a PodGroup object: its queued pods, and those
// waiting for its cycle to end, wait for it again.
func (q *Queue) DeletePodGroup(pg *schedulingv1beta1.PodGroup) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := groupKey(pg.Namespace, pg.Name)
	if q.forest[key] == nil {
		return
	}
	delete(q.forest, key)
	c := cause{label: EventPodGroupDelete}
	if g := q.groupLocked(key); g != nil {
		q.takeLocked(g)
		for _, pi := range g.Pods {
			q.holdLocked(q.incomplete, pi, c)
		}
		return
	}
	if q.lastPopped == key {
		for _, pi := range q.pending.clear(key) {
			q.holdLocked(q.incomplete, pi, c)
		}
	}
}
