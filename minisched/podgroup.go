package minisched

// A pod group's scheduling cycle (GenericWorkload): upstream's
// scheduleOnePodGroup (pkg/scheduler/schedule_one_podgroup.go, v1.37.2)
// without the alpha CompositePodGroup and TopologyAwareWorkloadScheduling;
// docs/design/gang-scheduling.md §3 describes it.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedulingapi "k8s.io/kubernetes/pkg/apis/scheduling"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	"minisched/event"
	"minisched/minisched/queue"
)

// errPodGroupUnschedulable marks the failures of a group that cannot be
// placed whole, as upstream's.
var errPodGroupUnschedulable = errors.New("pod group is unschedulable")

// groupMember is one pod's part in its group's cycle: its own cycle, the
// node the simulation found it, and how its attempt there ended.
type groupMember struct {
	pi             *queue.PodInfo
	c              *cycle
	state          *framework.CycleState
	podsToActivate *framework.PodsToActivate
	pl             placement
	// status is nil when the pod was placed in the simulation; f says
	// what its failure means to the queue.
	status *fwk.Status
	f      *failure
	// undo takes the simulated placement back.
	undo func()
	// waitingOnPreemption: the group's preemption found room; nominating
	// is the node it nominated the pod to, if any.
	waitingOnPreemption bool
	nominating          *fwk.NominatingInfo
}

// The group's preemption sees the pods placed in a simulation as proposed
// assignments.
var _ fwk.ProposedAssignment = &groupMember{}

func (m *groupMember) GetPod() *v1.Pod               { return m.pi.Pod }
func (m *groupMember) GetPodInfo() fwk.PodInfo       { return podInfo(m.pi.Pod) }
func (m *groupMember) GetNodeName() string           { return m.pl.host }
func (m *groupMember) GetCycleState() fwk.CycleState { return m.state }

// scheduleOnePodGroup takes a pod group through one cycle. Its pods are
// placed one after another on the snapshot, each seeing the ones placed
// before it, and PlacementFeasible (GangScheduling: enough pods placed?) is
// asked after each. The simulation is then undone. If the group is
// feasible, each pod placed takes its node for real (Assume, Reserve,
// Permit) and goes on to its binding cycle; GangScheduling's Permit holds
// them until enough are assumed. The others fail, with the group's reason
// when the group failed. The PodGroup's PodGroupInitiallyScheduled
// condition says how it went.
func (s *Scheduler) scheduleOnePodGroup(ctx context.Context, g *queue.GroupInfo, pop int64) {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "podGroup", klog.KRef(g.Namespace, g.Name))
	ctx = klog.NewContext(ctx, logger)
	// Snapshot: the nodes, and the group's pods the cache counts already.
	if err := s.cache.UpdateSnapshot(logger, s.snapshot); err != nil {
		s.failGroupEarly(ctx, g, g.PodGroup, fmt.Errorf("updating the snapshot: %w", err))
		return
	}
	// The PodGroup as the snapshot has it, for the whole cycle.
	pg, err := s.snapshot.PodGroups().Get(g.Namespace, g.Name)
	if err != nil {
		s.failGroupEarly(ctx, g, nil, err)
		return
	}
	p, err := s.groupProfile(g, pg)
	if err != nil {
		s.failGroupEarly(ctx, g, pg, err)
		return
	}
	g.Pods = slices.DeleteFunc(g.Pods, func(pi *queue.PodInfo) bool {
		if s.skipPodSchedule(p, pi.Pod) {
			s.queue.Done(pi.Pod.UID)
			return true
		}
		return false
	})
	if len(g.Pods) == 0 {
		s.addAttemptedGroup(logger, g, queue.GroupScheduled)
		return
	}
	groupState := framework.NewCycleState()
	info := &framework.PodGroupInfo{Namespace: g.Namespace, Name: g.Name, Type: fwk.PodGroupKeyType, PodGroup: pg}
	for _, pi := range g.Pods {
		info.UnscheduledPods = append(info.UnscheduledPods, pi.Pod)
	}
	gc := &event.GroupCycle{Namespace: g.Namespace, Name: g.Name, Members: len(g.Pods)}
	members, status := s.placeGroup(ctx, p, g, gc, info, groupState, pop, s.observer)
	for i := len(members); i < len(g.Pods); i++ {
		// Pods the simulation did not reach fail with the group.
		m := s.newMember(ctx, p, g.Pods[i], gc, i, groupState, s.snapshot.NumNodesInPlacement(), s.observer)
		m.status = status.Clone()
		if status.IsRejected() {
			m.f = &failure{nominating: clearNomination, withGroup: true}
		}
		members = append(members, m)
	}
	outcome := groupOutcome(status)
	if status.Code() == fwk.Unschedulable {
		// PodGroupPostFilter (DefaultPreemption): room for the whole group,
		// tried again on the snapshot without the victims.
		again := func(ctx context.Context) (*fwk.PodGroupAssignments, *fwk.Status) {
			tried, status := s.placeGroup(ctx, p, g, gc, info, framework.NewCycleState(), pop, event.Discard)
			assignments := &fwk.PodGroupAssignments{}
			for _, m := range tried {
				if m.status.IsSuccess() {
					assignments.ProposedAssignments = append(assignments.ProposedAssignments, m)
				}
			}
			return assignments, status
		}
		result, pfStatus := p.fw.RunPodGroupPostFilterPlugins(ctx, groupState, info, again)
		status = preempted(members, status, result, pfStatus)
	}
	s.submitGroup(ctx, g, pg, members, status, outcome)
}

// preempted applies the group's preemption to its pods (upstream's
// applyPodGroupPostFilterResult): when it found victims, each pod keeps the
// node it nominated and the group waits for the room; an error replaces the
// group's status; otherwise the status says why preemption did not help.
// It returns the group's status.
func preempted(members []*groupMember, status *fwk.Status, result *fwk.PodGroupPostFilterResult, pfStatus *fwk.Status) *fwk.Status {
	if pfStatus.IsSuccess() {
		for _, m := range members {
			m.waitingOnPreemption = true
			if ni, ok := result.NominatingInfos[types.NamespacedName{Namespace: m.pi.Pod.Namespace, Name: m.pi.Pod.Name}]; ok {
				m.nominating = ni
			}
		}
	}
	if pfStatus.IsError() {
		return pfStatus
	}
	status.AppendReason(pfStatus.String())
	return status
}

func groupOutcome(status *fwk.Status) queue.GroupOutcome {
	switch {
	case status.IsSuccess():
		return queue.GroupScheduled
	case status.IsRejected():
		return queue.GroupUnschedulable
	}
	return queue.GroupError
}

// groupProfile checks that the group's pods, those queued and those
// already placed, agree on their profile, priority (the PodGroup's) and
// preemption policy, as upstream's validatePodGroup, and returns the
// profile.
func (s *Scheduler) groupProfile(g *queue.GroupInfo, pg *schedulingv1beta1.PodGroup) (*profile, error) {
	name, priority := g.Pods[0].Pod.Spec.SchedulerName, schedutil.PodGroupPriority(pg)
	var policy v1.PreemptionPolicy
	check := func(pod *v1.Pod) error {
		if pod.Spec.SchedulerName != name {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, name)
		}
		if p := corev1helpers.PodPriority(pod); p != priority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", p, priority)
		}
		podPolicy := v1.PreemptLowerPriority
		if pod.Spec.PreemptionPolicy != nil {
			podPolicy = *pod.Spec.PreemptionPolicy
		}
		if policy == "" {
			policy = podPolicy
		} else if podPolicy != policy {
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v", podPolicy, policy)
		}
		return nil
	}
	for _, pi := range g.Pods {
		if err := check(pi.Pod); err != nil {
			return nil, err
		}
	}
	state, err := s.snapshot.PodGroupStates().Get(g.Namespace, g.Name)
	if err != nil {
		return nil, fmt.Errorf("failed to get pod group state: %w", err)
	}
	for _, pod := range state.ScheduledPods() {
		if err := check(pod); err != nil {
			return nil, err
		}
	}
	p := s.profiles[name]
	if p == nil {
		return nil, fmt.Errorf("profile not found for scheduler name %q", name)
	}
	return p, nil
}

// placeGroup is the simulation (upstream's podGroupSchedulingDefaultAlgorithm):
// it places the pods in their order on the snapshot, asks PlacementFeasible
// before the first and after each, and stops when it answers Unschedulable
// or a pod fails with an error. It returns each pod's part, for the pods
// it tried, and the group's status. Every placement is undone before it
// returns.
// The pods' cycles report to observer, as part of gc: the preemption's
// simulations report nowhere. The nodes are the snapshot's as it is then:
// the preemption's simulations see it without their victims.
func (s *Scheduler) placeGroup(ctx context.Context, p *profile, g *queue.GroupInfo, gc *event.GroupCycle, info *framework.PodGroupInfo, groupState *framework.CycleState, pop int64, observer event.Observer) ([]*groupMember, *fwk.Status) {
	nodes, err := s.snapshot.NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("listing the snapshot's nodes: %w", err))
	}
	placementState := framework.NewCycleState()
	placementState.SetPodGroupSchedulingCycle(groupState)
	var members []*groupMember
	defer func() {
		for _, m := range slices.Backward(members) {
			if m.undo != nil {
				m.undo()
			}
		}
	}()

	state, err := s.snapshot.PodGroupStates().Get(g.Namespace, g.Name)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("failed to get podGroup state for podGroup %s to compute gang feasibility: %w", klog.KRef(g.Namespace, g.Name), err))
	}
	progress := framework.PlacementProgress{Remaining: len(g.Pods), Scheduled: state.ScheduledPodsCount()}
	status := p.fw.RunPlacementFeasiblePlugins(ctx, placementState, info, progress)
	switch {
	case status.IsError():
		return nil, fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", status.AsError()))
	case status.Code() == fwk.Unschedulable:
		return nil, fwk.NewStatus(fwk.Unschedulable, status.Reasons()...).WithError(errPodGroupUnschedulable)
	}
	anyPlaced := false
	for i, pi := range g.Pods {
		m := s.newMember(ctx, p, pi, gc, i, groupState, len(nodes), observer)
		s.placeMember(ctx, m, placementState, nodes, pop)
		members = append(members, m)
		if !m.status.IsSuccess() && !m.status.IsRejected() {
			status = fwk.AsStatus(fmt.Errorf("failed to schedule other pod from a pod group: %w", m.status.AsError()))
			break
		}
		progress.Remaining--
		if m.status.IsSuccess() {
			progress.Scheduled++
		}
		feasible := p.fw.RunPlacementFeasiblePlugins(ctx, placementState, info, progress)
		if feasible.IsError() {
			status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", feasible.AsError()))
			break
		}
		status = feasible
		if feasible.Code() == fwk.Unschedulable {
			break
		}
		anyPlaced = anyPlaced || m.status.IsSuccess()
	}
	switch {
	case status.IsWait():
		status = fwk.NewStatus(fwk.Unschedulable, status.Reasons()...).WithError(errPodGroupUnschedulable)
	case status.IsSuccess() && !anyPlaced:
		// A group succeeds only when it places some pod.
		status = fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)
	}
	return members, status
}

// placeMember runs a pod's cycle on the snapshot, without PostFilter (a
// group preempts as a whole), and assumes and reserves it there when it
// finds a node.
func (s *Scheduler) placeMember(ctx context.Context, m *groupMember, placementState *framework.CycleState, nodes []fwk.NodeInfo, pop int64) {
	pi := m.pi
	m.state.SetPlacementCycleState(placementState)
	if len(nodes) == 0 {
		m.status = fwk.NewStatus(fwk.UnschedulableAndUnresolvable).WithError(errNoNodesAvailable)
		return
	}
	s.extenders.begin(m.c)
	defer s.extenders.end(m.c)
	pl, status := s.findNode(ctx, m.c, m.state, pi.Pod, nodes, pop)
	switch {
	case !status.IsSuccess():
		m.status = status
	case pl.fitErr != nil:
		// The nomination stays as it is, unless the group's preemption
		// decides it.
		m.status, m.f = fwk.NewStatus(fwk.Unschedulable).WithError(pl.fitErr), &failure{diagnosis: &pl.fitErr.Diagnosis}
	default:
		m.pl = pl
		assumed, status := s.assumeAndReserve(ctx, m.c, m.state, pi.Pod, pl.host)
		if !status.IsSuccess() {
			m.status, m.f = rejectedAt(pi.Pod, pl.host, status)
			break
		}
		m.undo = func() { s.unreserveAndForget(ctx, m.c, m.state, assumed, pl.host) }
	}
}

// newMember begins the cycle of the group's i-th pod within the group's
// (gc): the first pod's cycle leads it.
func (s *Scheduler) newMember(ctx context.Context, p *profile, pi *queue.PodInfo, gc *event.GroupCycle, i int, groupState *framework.CycleState, nodes int, observer event.Observer) *groupMember {
	m := &groupMember{pi: pi, c: s.newCycle(ctx, pi, p), state: framework.NewCycleState(), podsToActivate: framework.NewPodsToActivate()}
	m.c.observer = observer
	m.c.group = memberOf(gc, m.c.id, i)
	m.state.Write(framework.PodsToActivateKey, m.podsToActivate)
	m.state.SetPodGroupSchedulingCycle(groupState)
	m.c.start(nodes)
	return m
}

// memberOf is what the cycle (id) of the group's i-th pod says of the
// group's cycle gc; the first cycle begun leads it.
func memberOf(gc *event.GroupCycle, id int64, i int) *event.GroupCycle {
	if gc.Lead == 0 {
		gc.Lead = id
	}
	member := *gc
	member.Member = i + 1
	return &member
}

// submitGroup acts on the simulation (upstream's
// submitPodGroupAlgorithmResult): a feasible group's placed pods take their
// nodes and go on to bind; every other pod fails, with its own reason or
// its group's. Then the PodGroup's condition is written and the group goes
// back to the queue, with the pods that failed, as outcome says: how the
// simulation ended, whatever the preemption made of it.
func (s *Scheduler) submitGroup(ctx context.Context, g *queue.GroupInfo, pg *schedulingv1beta1.PodGroup, members []*groupMember, status *fwk.Status, outcome queue.GroupOutcome) {
	for _, m := range members {
		switch {
		case status.IsError():
			st := status
			if m.status.IsError() {
				st = m.status
			}
			s.fail(ctx, m.c, m.pi, st, nil)
		case !m.status.IsSuccess():
			f := m.f
			if f == nil {
				f = &failure{nominating: clearNomination}
			}
			if m.nominating != nil {
				f.nominating = m.nominating
			}
			s.fail(ctx, m.c, m.pi, m.status, f)
		case status.IsSuccess():
			m.state.SetPodGroupSchedulingCycle(nil)
			assumed, st := s.assumeAndReserve(ctx, m.c, m.state, m.pi.Pod, m.pl.host)
			if !st.IsSuccess() {
				st, f := rejectedAt(m.pi.Pod, m.pl.host, st)
				s.fail(ctx, m.c, m.pi, st, f)
				continue
			}
			s.permitAndBind(ctx, m.c, m.pi, m.state, assumed, m.pl, m.podsToActivate)
		case status.IsRejected() && m.waitingOnPreemption:
			// It waits for the victims to go, on the node it was nominated.
			s.fail(ctx, m.c, m.pi, status, &failure{nominating: m.nominating, withGroup: true, placed: m.pl})
		case status.IsRejected():
			s.fail(ctx, m.c, m.pi, fwk.NewStatus(fwk.Unschedulable, status.Message()).WithError(errPodGroupUnschedulable), &failure{nominating: clearNomination, withGroup: true, placed: m.pl})
		default:
			s.fail(ctx, m.c, m.pi, fwk.AsStatus(fmt.Errorf("received unexpected pod group scheduling algorithm status code: %s", status.Code())), nil)
		}
	}
	condition := &metav1.Condition{Status: metav1.ConditionTrue, Reason: "Scheduled"}
	switch {
	case status.IsRejected():
		condition = &metav1.Condition{Reason: schedulingapi.PodGroupReasonUnschedulable, Message: status.Message()}
	case !status.IsSuccess():
		condition = &metav1.Condition{Reason: schedulingapi.PodGroupReasonSchedulerError, Message: status.AsError().Error()}
	}
	s.writeGroupCondition(ctx, pg, condition)
	s.addAttemptedGroup(klog.FromContext(ctx), g, outcome)
}

// failGroupEarly fails every pod of a group whose cycle could not begin
// (upstream's handlePodGroupFailureBeforeScheduling), and the PodGroup's
// condition says why, unless pg is nil.
func (s *Scheduler) failGroupEarly(ctx context.Context, g *queue.GroupInfo, pg *schedulingv1beta1.PodGroup, err error) {
	gc := &event.GroupCycle{Namespace: g.Namespace, Name: g.Name, Members: len(g.Pods)}
	for i, pi := range g.Pods {
		p := s.profileOf(pi.Pod)
		if p == nil {
			s.queue.Done(pi.Pod.UID)
			continue
		}
		c := s.newCycle(ctx, pi, p)
		c.group = memberOf(gc, c.id, i)
		c.start(0)
		s.fail(ctx, c, pi, fwk.AsStatus(err), nil)
	}
	if pg != nil {
		s.writeGroupCondition(ctx, pg, &metav1.Condition{Reason: schedulingapi.PodGroupReasonSchedulerError, Message: err.Error()})
	}
	s.addAttemptedGroup(klog.FromContext(ctx), g, queue.GroupError)
}

// writeGroupCondition patches the PodGroup's PodGroupInitiallyScheduled
// condition (False unless the condition says True), never taking back a
// True: a later cycle for the group's other pods does not undo the first.
func (s *Scheduler) writeGroupCondition(ctx context.Context, pg *schedulingv1beta1.PodGroup, condition *metav1.Condition) {
	condition.Type = schedulingapi.PodGroupInitiallyScheduled
	if condition.Status == "" {
		condition.Status = metav1.ConditionFalse
	}
	if existing := apimeta.FindStatusCondition(pg.Status.Conditions, condition.Type); existing != nil &&
		existing.Status == metav1.ConditionTrue && condition.Status != metav1.ConditionTrue {
		return
	}
	condition.ObservedGeneration = pg.Generation
	status := pg.Status.DeepCopy()
	if !apimeta.SetStatusCondition(&status.Conditions, *condition) {
		return
	}
	if err := schedutil.PatchPodGroupStatus(ctx, s.client, pg.Name, pg.Namespace, &pg.Status, status); err != nil {
		klog.FromContext(ctx).Error(err, "Writing the PodGroup's condition", "podGroup", klog.KObj(pg))
	}
}

func (s *Scheduler) addAttemptedGroup(logger klog.Logger, g *queue.GroupInfo, outcome queue.GroupOutcome) {
	if err := s.queue.AddAttemptedGroup(g, outcome); err != nil {
		logger.Error(err, "Taking the pod group back into the queue")
	}
}
