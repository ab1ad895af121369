package minisched_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"minisched/cluster"
	"minisched/event"
	"minisched/k8sapiserver"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
)

// TestGangScheduling runs minisched with GenericWorkload on, against a
// control plane of its own that serves PodGroups (the gate must be on when
// the apiserver starts, or it drops spec.schedulingGroup). A gang of three
// that needs three nodes waits for its third pod, then fails whole on two
// nodes: no pod binds, though two would fit, and the PodGroup says why.
// With a third node it is placed whole. Then a gang of higher priority
// that finds no room preempts as a group (PodGroupPostFilter): two of the
// first gang's pods go, and it takes their nodes.
func TestGangScheduling(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.GenericWorkload, true)
	plane := startGangPlane(t)
	c := plane.client
	svc, log := startGangScheduler(t, plane, "")
	createNodes(t, c, node("n1", "1"), node("n2", "1"))
	waitFor(t, 30*time.Second, "the nodes in the cache", func() bool { return svc.Scheduler().NodeCount() == 2 })

	createPodGroup(t, c, gangOf("trio", 3, ""))
	inTrio := inGroup("trio", func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(0)) })
	names := []string{"trio-0", "trio-1", "trio-2"}
	for _, name := range names[:2] {
		createPod(t, c, pod(name, "800m", inTrio))
	}
	// Two of three: GangScheduling's PreEnqueue holds the group back.
	for _, name := range names[:2] {
		gated := awaitIn(t, log, name, "gated by GangScheduling", func(e event.Event) bool {
			return e.Kind == event.KindQueue && e.Queue.To == event.Unschedulable && e.Queue.GatingPlugin == "GangScheduling"
		})
		if gated.Queue.PodGroup != "default/trio" {
			t.Errorf("%s moved with group %q, want default/trio", name, gated.Queue.PodGroup)
		}
	}
	// Why pending: each fits on its own; its group is short of pods.
	explains(t, svc, "trio-0", "It is placed only with its pod group default/trio, which has 2 of the 3 pods its minimum needs")
	createPod(t, c, pod("trio-2", "800m", inTrio))

	// Three pods, two nodes: the group is tried whole and fails whole. Its
	// pods are tried in their order (priority, attempts, age): the first
	// two are placed in the simulation, the third fits nowhere, and the
	// placed ones fail with the gang's reason.
	gang := "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, " +
		"pod group preemption: No preemption victims found for incoming preemptor"
	want := map[string]string{"trio-0": gang, "trio-1": gang, "trio-2": "0/2 nodes are available: 2 Insufficient cpu."}
	var lead int64
	for i, name := range names {
		e := awaitIn(t, log, name, "a failed cycle", func(e event.Event) bool {
			return e.Kind == event.KindCycleEnd && e.CycleEnd.Result != event.ResultScheduled
		})
		if e.CycleEnd.Result != event.ResultUnschedulable || e.CycleEnd.Message != want[name] {
			t.Errorf("%s's cycle ended %s with %q, want unschedulable with %q", name, e.CycleEnd.Result, e.CycleEnd.Message, want[name])
		}
		// The first two had a node in the group's simulation, undone
		// with the group; the third had none.
		if placed := e.CycleEnd.SimulatedNode != ""; placed != (i < 2) {
			t.Errorf("%s's cycle says the simulation placed it on %q", name, e.CycleEnd.SimulatedNode)
		}
		// Each pod's cycle says it is part of the group's, led by the
		// first pod's.
		if i == 0 {
			lead = e.Cycle
		}
		start := log.Find(func(s event.Event) bool { return s.Kind == event.KindCycleStart && s.Cycle == e.Cycle })
		wantGroup := event.GroupCycle{Namespace: "default", Name: "trio", Lead: lead, Member: i + 1, Members: 3}
		if len(start) != 1 || start[0].CycleStart.Group == nil || *start[0].CycleStart.Group != wantGroup {
			t.Errorf("%s's cycle %d began as %+v; want group %+v", name, e.Cycle, start, wantGroup)
		}
	}
	waitFor(t, 30*time.Second, "the PodGroup's condition", func() bool {
		cond := groupCondition(t, c, "trio")
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == "Unschedulable"
	})
	for _, name := range names {
		if n := nodeOf(t, c, name); n != "" {
			t.Fatalf("%s bound to %s; a gang that cannot be placed whole binds no pod", name, n)
		}
	}
	// Why pending: trio-0 fits a node of its own, its group does not.
	explains(t, svc, "trio-0", "It is placed only with its pod group default/trio, whose last try failed: minCount (3) cannot be satisfied")

	// A third node: after its backoff the group is placed whole.
	createNodes(t, c, node("n3", "1"))
	nodes := map[string]bool{}
	for _, name := range names {
		nodes[waitBound(t, c, name)] = true
	}
	if len(nodes) != 3 {
		t.Errorf("the gang's pods share nodes: %v", nodes)
	}
	waitFor(t, 30*time.Second, "the PodGroup scheduled", func() bool {
		cond := groupCondition(t, c, "trio")
		return cond != nil && cond.Status == metav1.ConditionTrue
	})

	// A gang of two of higher priority: no room, so it preempts as a group.
	ensurePriorityClasses(t, c)
	createPodGroup(t, c, gangOf("duo", 2, "story-high"))
	for _, name := range []string{"duo-0", "duo-1"} {
		createPod(t, c, pod(name, "800m", inGroup("duo", func(p *v1.Pod) { p.Spec.PriorityClassName = "story-high" })))
	}
	// It fails first: no node has room. Its preemption finds two victims
	// in the first gang (lower priority) and nominates their nodes; once
	// they are gone, the group is placed there.
	for _, name := range []string{"duo-0", "duo-1"} {
		awaitIn(t, log, name, "the cycle that preempts", func(e event.Event) bool {
			return e.Kind == event.KindCycleEnd && e.CycleEnd.Result != event.ResultScheduled
		})
	}
	for _, name := range []string{"duo-0", "duo-1"} {
		waitBound(t, c, name)
	}
	// The victims were preempted by the group, not by one of its pods.
	var preemptions []event.Event
	waitFor(t, 30*time.Second, "two preemptions reported", func() bool {
		preemptions = log.Find(func(e event.Event) bool { return e.Kind == event.KindPreemption })
		return len(preemptions) == 2
	})
	for _, e := range preemptions {
		if p := e.Preemption; !p.Group || p.Preemptor.Name != "duo" {
			t.Errorf("%s preempted by %+v, want the pod group duo", e.Pod.Name, p)
		}
	}
	left := 0
	for _, name := range names {
		if nodeOf(t, c, name) != "" {
			left++
		}
	}
	if left != 1 {
		t.Errorf("%d of the first gang's pods left, want 1: two were the victims", left)
	}
}

// explains waits until the pod's explanation (why pending) says what
// want says: the scheduler learns of the PodGroup's condition from its
// watch.
func explains(t *testing.T, svc *minisched.Service, pod, want string) {
	t.Helper()
	var got string
	waitFor(t, 30*time.Second, pod+"'s explanation to say "+want, func() bool {
		e, err := svc.Scheduler().Explain(context.Background(), "default", pod)
		if err != nil {
			got = err.Error()
			return false
		}
		got = e.Sentence
		return strings.HasPrefix(got, "Fits on ") && strings.Contains(got, want)
	})
	t.Logf("%s: %s", pod, got)
}

// gangOf is a PodGroup whose pods go together, minCount of them at least,
// at the priority of class.
func gangOf(name string, minCount int32, class string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{PriorityClassName: class, SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}}}
}

func createPodGroup(t *testing.T, c kubernetes.Interface, pg *schedulingv1beta1.PodGroup) {
	t.Helper()
	err := cluster.WaitForClass(context.Background(), func() error {
		_, err := c.SchedulingV1beta1().PodGroups(pg.Namespace).Create(context.Background(), pg, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating PodGroup %s: %v", pg.Name, err)
	}
}

// inGroup puts a pod in the PodGroup, with the other mutators.
func inGroup(group string, mutators ...func(*v1.Pod)) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		for _, m := range mutators {
			m(p)
		}
	}
}

// gangPlane is a control plane that serves PodGroups.
type gangPlane struct {
	cp     *k8sapiserver.ControlPlane
	client kubernetes.Interface
}

// startGangPlane starts a control plane for the test; the GenericWorkload
// gate must be on already, or it drops spec.schedulingGroup.
func startGangPlane(t *testing.T) gangPlane {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cp, err := k8sapiserver.Start(ctx, k8sapiserver.Config{RuntimeConfig: map[string]string{"scheduling.k8s.io/v1beta1": "true"}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cp.Close()
	})
	return gangPlane{cp: cp, client: kubernetes.NewForConfigOrDie(cp.RESTConfig())}
}

// startGangScheduler runs minisched on the plane with configYAML (the
// defaults when empty) until the test ends.
func startGangScheduler(t *testing.T, plane gangPlane, configYAML string) (*minisched.Service, *eventLog) {
	t.Helper()
	cfg, err := schedconfig.Default("")
	if configYAML != "" {
		cfg, err = schedconfig.Load([]byte(configYAML), "")
	}
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	svc := minisched.NewService(minisched.ServiceOptions{Client: plane.client, RESTConfig: plane.cp.RESTConfig(), Observer: log, Tuning: minisched.Tuning{Seed: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx, cfg); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.Stop()
		cancel()
	})
	waitFor(t, 30*time.Second, "minisched to sync", svc.Ready)
	return svc, log
}

func awaitIn(t *testing.T, log *eventLog, pod, what string, match func(event.Event) bool) event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := log.Await(ctx, ofPod(pod, match))
	if err != nil {
		t.Fatalf("waiting for %s: %s: %v", pod, what, err)
	}
	return e
}

func groupCondition(t *testing.T, c kubernetes.Interface, name string) *metav1.Condition {
	t.Helper()
	pg, err := c.SchedulingV1beta1().PodGroups("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading PodGroup %s: %v", name, err)
	}
	return apimeta.FindStatusCondition(pg.Status.Conditions, "PodGroupInitiallyScheduled")
}
