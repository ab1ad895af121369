package minisched_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"minisched/event"
	"minisched/minisched/schedconfig"
)

// TestGangsAgreeWithUpstream is the placement differential for pod groups
// (GenericWorkload on): the real kube-scheduler and minisched, each on a
// control plane of its own that serves PodGroups, get the same nodes and
// the same gangs, one story after another, and must agree on every pod's
// node, on the pods preemption deleted, on the gangs still waiting for
// their pods (gated by GangScheduling), on the attempts that bound the
// gangs placed, and, for a gang that cannot be placed, on what its
// PodGroup and its pods say.
func TestGangsAgreeWithUpstream(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.GenericWorkload, true)
	mini, up := startGangPlane(t), startGangPlane(t)
	svc, log := startGangScheduler(t, mini, diffConfig)
	cfg, err := schedconfig.Load([]byte(diffConfig), "")
	if err != nil {
		t.Fatal(err)
	}
	kube := startUpstream(t, up.client, cfg)
	clients := []kubernetes.Interface{mini.client, up.client}
	for _, c := range clients {
		ensurePriorityClasses(t, c)
		createNodes(t, c, node("n1", "1"), node("n2", "1"), node("n3", "1"), node("n4", "1"))
	}
	waitFor(t, 30*time.Second, "the nodes in both caches", func() bool {
		return svc.Scheduler().NodeCount() == 4 && len(kube.sched.Cache.Dump().Nodes) == 4
	})
	gang := func(name string, minCount int32, pods int, class string) []string {
		var names []string
		for _, c := range clients {
			createPodGroup(t, c, gangOf(name, minCount, class))
		}
		for i := range pods {
			p := pod(fmt.Sprintf("%s-%d", name, i), "800m", inGroup(name, func(p *v1.Pod) {
				p.Spec.PriorityClassName = class
				p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(0))
			}))
			for _, c := range clients {
				createPod(t, c, p.DeepCopy())
			}
			names = append(names, p.Name)
		}
		return names
	}
	agree := func(story string) {
		t.Helper()
		m, u := placements(t, mini.client), placements(t, up.client)
		if !maps.Equal(m, u) {
			t.Fatalf("%s: minisched placed %v, kube-scheduler %v", story, m, u)
		}
		t.Logf("%s: both placed %v", story, m)
	}
	// sameAttempts compares the attempts that bound a gang's pods, as the
	// placement differential does: minisched's from its cycles,
	// kube-scheduler's from the growth of its attempts histogram (their
	// sum; it is observed once a binding cycle is through).
	attempts := readAttemptsMetric(t)
	sameAttempts := func(story string, bound []string) {
		t.Helper()
		var now attemptsMetric
		waitFor(t, 30*time.Second, "kube-scheduler's binding cycles through to its attempts metric", func() bool {
			now = readAttemptsMetric(t)
			return now.count >= attempts.count+uint64(len(bound))
		})
		if n := now.count - attempts.count; n != uint64(len(bound)) {
			t.Errorf("%s: kube-scheduler bound %d pods, want the %d of %v", story, n, len(bound), bound)
		}
		up := int(now.sum - attempts.sum)
		attempts = now
		mine := 0
		for _, name := range bound {
			mine += bindingAttempt(log, name)
		}
		if mine != up {
			t.Errorf("%s: the attempts that bound %v: minisched %d in all, kube-scheduler %d", story, bound, mine, up)
		}
		t.Logf("%s: the attempts that bound %v: %d in all on both", story, bound, up)
	}

	// A gang that fits is placed whole, on the same nodes.
	pair := gang("pair", 2, 2, "")
	for _, c := range clients {
		for _, name := range pair {
			waitBound(t, c, name)
		}
	}
	agree("a gang that fits")
	sameAttempts("a gang that fits", pair)

	// A gang too big for the room left is placed nowhere, and both say why.
	quad := gang("quad", 4, 4, "")
	conditions := map[string]string{}
	for i, c := range clients {
		waitFor(t, 60*time.Second, "quad's PodGroup condition", func() bool {
			cond := groupCondition(t, c, "quad")
			if cond == nil || cond.Status != metav1.ConditionFalse {
				return false
			}
			conditions[[]string{"minisched", "kube-scheduler"}[i]] = cond.Reason + ": " + cond.Message
			return true
		})
	}
	if conditions["minisched"] != conditions["kube-scheduler"] {
		t.Errorf("quad's PodGroup: minisched %q, kube-scheduler %q", conditions["minisched"], conditions["kube-scheduler"])
	}
	t.Logf("quad's PodGroup on both: %s", conditions["kube-scheduler"])
	for _, name := range quad {
		m, u := podScheduledMessage(t, mini.client, name), podScheduledMessage(t, up.client, name)
		if m != u {
			t.Errorf("%s's PodScheduled condition: minisched %q, kube-scheduler %q", name, m, u)
		}
		t.Logf("%s on both: %s", name, u)
	}
	agree("a gang too big")

	// A gang short of pods waits, gated by GangScheduling on both.
	trio := gang("trio", 3, 2, "")
	for _, name := range trio {
		awaitIn(t, log, name, "gated by GangScheduling", func(e event.Event) bool {
			return e.Kind == event.KindQueue && e.Queue.To == event.Unschedulable && e.Queue.GatingPlugin == "GangScheduling"
		})
		// Upstream's queue writes a pod's GatingPlugin under a lock a test
		// cannot take (each pod added to the group runs PreEnqueue for all
		// of it again), so it is not read here. A pod the queue holds as
		// unschedulable that no cycle tried (no PodScheduled condition)
		// was turned away by a PreEnqueue plugin; of the profile's, only
		// GangScheduling has a reason to turn away a pod without
		// scheduling gates or claims.
		waitFor(t, 30*time.Second, name+" gated in kube-scheduler's queue", func() bool {
			held := slices.ContainsFunc(kube.queue.UnschedulablePods(), func(p *v1.Pod) bool { return p.Name == name })
			return held && podScheduledMessage(t, up.client, name) == ""
		})
	}

	// A gang of higher priority with no room preempts as a group: the same
	// victims go, and it takes the same nodes.
	vip := gang("vip", 3, 3, "story-high")
	for _, c := range clients {
		for _, name := range vip {
			waitBound(t, c, name)
		}
	}
	agree("a gang that preempts")
	sameAttempts("a gang that preempts", vip)
	for _, name := range trio {
		if m := podScheduledMessage(t, up.client, name); m != "" {
			t.Errorf("kube-scheduler tried %s, which its gang gates: %s", name, m)
		}
	}
}

// placements maps each pod of the cluster to its node ("" while pending).
func placements(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	pods, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = p.Spec.NodeName
	}
	return out
}

func podScheduledMessage(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	p, err := c.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Status.Conditions, func(c v1.PodCondition) bool { return c.Type == v1.PodScheduled })
	if i < 0 {
		return ""
	}
	return string(p.Status.Conditions[i].Reason) + ": " + p.Status.Conditions[i].Message
}
