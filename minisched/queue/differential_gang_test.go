package queue

// The pod-group operations of the differential test (GenericWorkload on):
// the PodGroup objects come, change and go; a popped group's cycle ends
// with AddAttemptedGroup, after some of its pods failed; and both queues'
// groups are compared, counters and member order.

import (
	"errors"
	"fmt"
	"slices"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

var groupNames = []string{"g0", "g1", "g2"}

// mayFail says whether the harness may end p's attempt with a failure now.
// While a group's cycle lasts, only its own pods fail: a lone pod failing
// then clears upstream's note of the group in its cycle, and the group's
// pods that come next form a second entity beside it, a race the
// scheduler's loop does not run into in minisched.
func (h *harness) mayFail(p *modelPod) bool {
	return h.cycle == nil || groupName(p.pod) == "ns/"+h.cycle.name
}

func (h *harness) groupOp() (string, bool) {
	name := h.oneOf(groupNames...)
	switch op := h.c.intn(4); {
	case op == 0 && h.cycle != nil:
		return h.endCycle()
	case h.groups[name] == nil:
		return h.addPodGroup(name), true
	case op == 1:
		return h.deletePodGroup(name), true
	default:
		return h.updatePodGroup(name), true
	}
}

func (h *harness) addPodGroup(name string) string {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}
	desc := "nil"
	if h.c.intn(4) > 0 {
		priority := []int32{0, 10, 100}[h.c.intn(3)]
		pg.Spec.Priority = &priority
		desc = fmt.Sprint(priority)
	}
	waiting := 0
	for _, pod := range h.theirs.IncompletePodGroupPodsPods() {
		if groupName(pod) == "ns/"+name {
			waiting++
		}
	}
	h.groups[name] = pg
	h.ours.AddPodGroup(pg)
	h.theirs.AddPodGroup(quiet, pg)
	h.adoptGroupFormation(name, waiting)
	return fmt.Sprintf("add PodGroup %s priority=%s", name, desc)
}

// adoptGroupFormation: a group formed from pods that waited for their
// PodGroup is formed one pod at a time, in an order that is upstream's
// map's pick: the first pod gives the group its timestamp, and which pods
// the PreEnqueue plugins see, and when, depends on it. The outcome (where
// the group goes) does not. The test gives minisched's group and its pods
// what upstream's pick made of them: the timestamps and gates.
func (h *harness) adoptGroupFormation(name string, waiting int) {
	theirs, ok := h.theirs.GetPodGroup(name, "ns", fwk.PodGroupKeyType)
	if waiting < 2 || !ok {
		return
	}
	q := h.ours
	q.mu.Lock()
	defer q.mu.Unlock()
	g := q.groupLocked(groupKey("ns", name))
	if g == nil {
		return
	}
	g.Timestamp, g.InitialAttemptTimestamp = theirs.Timestamp, theirs.InitialAttemptTimestamp
	g.GatingPlugin, g.GatingPluginEvents = theirs.GatingPlugin, theirs.GatingPluginEvents
	for _, tp := range theirs.QueuedPodInfos[fwk.PodGroupKey("ns", name)] {
		if pi := g.pod(tp.Pod.UID); pi != nil {
			pi.InitialAttemptTimestamp, pi.GatingPlugin, pi.GatingPluginEvents = tp.InitialAttemptTimestamp, tp.GatingPlugin, tp.GatingPluginEvents
			pi.UnschedulablePlugins = tp.UnschedulablePlugins.Clone()
		}
	}
	q.fixLocked(g.key())
}

// updatePodGroup bumps the object, and changes its priority only where the
// group is not in a heap: upstream swaps the object in without re-sorting
// its heap, minisched re-sorts (docs/FIDELITY.md), and pops would then
// differ for that reason alone.
func (h *harness) updatePodGroup(name string) string {
	pg := h.groups[name].DeepCopy()
	pg.ResourceVersion = bump(pg.ResourceVersion)
	desc := "same priority"
	if !h.inHeap(groupKey("ns", name)) && h.c.intn(2) == 0 {
		priority := []int32{0, 10, 100}[h.c.intn(3)]
		pg.Spec.Priority = &priority
		desc = fmt.Sprintf("priority=%d", priority)
	}
	h.groups[name] = pg
	h.ours.UpdatePodGroup(pg)
	h.theirs.UpdatePodGroup(quiet, pg)
	return fmt.Sprintf("update PodGroup %s %s", name, desc)
}

func (h *harness) deletePodGroup(name string) string {
	pg := h.groups[name]
	delete(h.groups, name)
	h.ours.DeletePodGroup(pg)
	h.theirs.DeletePodGroup(quiet, pg)
	return fmt.Sprintf("delete PodGroup %s", name)
}

// popGroup checks a popped group against upstream's and puts its pods in
// flight.
func (h *harness) popGroup(g *GroupInfo, entity framework.QueuedEntityInfo, from event.QueueName, theirActiveEmpty bool) (string, bool) {
	theirs, ok := entity.(*framework.QueuedPodGroupInfo)
	if !ok {
		h.fail(fmt.Sprintf("popped group %s, upstream popped %T", g.Name, entity))
		return "pop", false
	}
	mine, their := memberNames(g.Pods), memberNames(theirs.QueuedPodInfos[fwk.PodGroupKey(theirs.Namespace, theirs.Name)])
	desc := fmt.Sprintf("pop -> group %s %v from %s (upstream %s %v)", g.Name, mine, from, theirs.Name, their)
	switch {
	case g.Name != theirs.Name || !slices.Equal(mine, their):
		h.fail("popped " + desc)
		return desc, false
	case from != event.ActiveQ || theirActiveEmpty:
		h.fail(fmt.Sprintf("popped group %s from %s, upstream's activeQ empty: %v", g.Name, from, theirActiveEmpty))
		return desc, false
	case g.Attempts != theirs.Attempts:
		h.fail(fmt.Sprintf("popped group %s with %d attempts, upstream %d", g.Name, g.Attempts, theirs.Attempts))
		return desc, false
	}
	for i, pi := range g.Pods {
		p := h.byName(pi.Pod.Name)
		p.state, p.ours, p.theirs = flying, pi, theirs.QueuedPodInfos[fwk.PodGroupKey(theirs.Namespace, theirs.Name)][i]
	}
	h.cycle = &groupCycle{name: g.Name, ours: g, theirs: theirs}
	return desc, true
}

func memberNames[T *PodInfo | *framework.QueuedPodInfo](pods []T) []string {
	names := make([]string, 0, len(pods))
	for _, pi := range pods {
		switch pi := any(pi).(type) {
		case *PodInfo:
			names = append(names, pi.Pod.Name)
		case *framework.QueuedPodInfo:
			names = append(names, pi.Pod.Name)
		}
	}
	return names
}

// inHeap says whether minisched holds the entity in activeQ or backoff.
func (h *harness) inHeap(key string) bool {
	h.ours.mu.RLock()
	defer h.ours.mu.RUnlock()
	e := h.ours.entityLocked(key)
	return e != nil && e.params().where != event.Unschedulable
}

// endCycle ends the open group cycle as the scheduler would: some of its
// pods in flight fail (each goes back, to wait apart), the others stay in
// flight for their binding cycles, and the group is taken back with the
// cycle's outcome.
func (h *harness) endCycle() (string, bool) {
	c := h.cycle
	h.cycle = nil
	var failed []string
	for _, p := range h.pods {
		if p.state == flying && !p.deleted && groupName(p.pod) == "ns/"+c.name && h.c.intn(2) == 0 {
			h.reject(p)
			failed = append(failed, p.pod.Name)
		}
	}
	outcome := GroupOutcome(h.c.intn(3))
	var status *fwk.Status
	switch outcome {
	case GroupUnschedulable:
		status = fwk.NewStatus(fwk.Unschedulable, "pod group is unschedulable")
	case GroupError:
		status = fwk.AsStatus(errors.New("scheduling error for pod group"))
	}
	mineErr := h.ours.AddAttemptedGroup(c.ours, outcome)
	theirErr := h.theirs.AddAttemptedPodGroupIfNeeded(quiet, c.theirs, h.theirs.SchedulingCycle(), status)
	desc := fmt.Sprintf("end the cycle of group %s: %v failed, outcome %d", c.name, failed, outcome)
	if (mineErr == nil) != (theirErr == nil) {
		h.fail(fmt.Sprintf("%s: minisched %v, upstream %v", desc, mineErr, theirErr))
		return desc, false
	}
	return desc, true
}

// compareGroups compares the groups both queues hold: where each is, its
// counters, its backoff and the order of its pods.
func (h *harness) compareGroups() []string {
	var diffs []string
	q := h.ours
	for _, name := range groupNames {
		q.mu.RLock()
		mine := q.groupLocked(groupKey("ns", name))
		var m view
		var order []string
		if mine != nil {
			m = view{where: mine.where, attempts: mine.Attempts, unsch: mine.UnschedulableCount, errs: mine.ConsecutiveErrorsCount,
				timestamp: mine.Timestamp.UnixNano(), initial: stamp(mine.InitialAttemptTimestamp), gating: mine.GatingPlugin,
				expiry: mine.BackoffExpiration}
			order = memberNames(mine.Pods)
		}
		q.mu.RUnlock()
		theirs, ok := h.theirs.GetPodGroup(name, "ns", fwk.PodGroupKeyType)
		if (mine != nil) != ok {
			diffs = append(diffs, fmt.Sprintf("group %s: minisched holds it: %v, upstream: %v", name, mine != nil, ok))
			continue
		}
		if !ok {
			continue
		}
		u := view{where: m.where, attempts: theirs.Attempts, unsch: theirs.UnschedulableCount, errs: theirs.ConsecutiveErrorsCount,
			timestamp: theirs.Timestamp.UnixNano(), initial: stamp(theirs.InitialAttemptTimestamp), gating: theirs.GatingPlugin,
			expiry: theirs.BackoffExpiration}
		if their := memberNames(theirs.QueuedPodInfos[fwk.PodGroupKey("ns", name)]); !slices.Equal(order, their) {
			diffs = append(diffs, fmt.Sprintf("group %s: pods %v, upstream %v", name, order, their))
		}
		// Upstream computes the expiry when it first needs it.
		if !u.expiry.IsZero() || m.where == event.ErrorBackoffQ {
			if !m.expiry.Equal(u.expiry) {
				diffs = append(diffs, fmt.Sprintf("group %s: expiry %s, upstream %s", name, m.expiry, u.expiry))
			}
		}
		m.expiry, u.expiry = time.Time{}, time.Time{}
		if m != u {
			diffs = append(diffs, fmt.Sprintf("group %s:\n      minisched %v\n      upstream  %v", name, m, u))
		}
	}
	return diffs
}
