package minisched_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"minisched/event"
	"minisched/minisched/schedconfig"
)

// TestBatchingAgreesWithUpstream is the placement differential of
// opportunistic batching: the signable profile (signable), with
// OpportunisticBatching on for both schedulers, so that batching is
// compared, not switched off.
//
// Each node fits one pod, the case upstream's batching is made for: the
// last chosen node is full, and the next pod of the same signature is
// offered the best node left. Pods are made in bursts, without waiting, so
// that both pop them one after the other. Whether a pod is placed from
// the batch depends on time (a batch serves for 500 ms), which differs
// between the two schedulers on a busy machine; the nodes are of sizes
// whose scores never tie, so a batch's hint is the node a full cycle
// chooses, and the nodes must agree whichever pods were batched. A pod
// that will not sign (topology spread) comes between the bursts, and the
// last pod finds no room: both must blame NodeResourcesFit.
func TestBatchingAgreesWithUpstream(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.OpportunisticBatching, true)
	second := startSecondControlPlane(t)
	emptyCluster(t, second)
	const seed = 1
	h := start(t, signable)
	cfg, err := schedconfig.Load([]byte(signable), "")
	if err != nil {
		t.Fatal(err)
	}
	d := &diff{t: t, seed: seed, h: h, up: startUpstream(t, second, cfg), tracks: map[string]*podTrack{},
		upBound: sets.New[string](), bindings: readAttemptsMetric(t)}

	// Each fits one 3-CPU pod, which LeastAllocated gives a score of its
	// own on each size.
	sizes := []string{"3500m", "3600m", "3700m", "3800m", "3900m", "4", "4200m", "4400m", "4600m", "4800m", "5", "5300m", "5600m", "5900m"}
	var nodes []*v1.Node
	for i, cpu := range sizes {
		nodes = append(nodes, node(fmt.Sprintf("node-%02d", i+1), cpu))
	}
	createNodes(t, client, nodes...)
	createNodes(t, d.up.client, nodes...)
	d.settle("the nodes")

	before := batchAttempts(t)
	burst := func(from, to int) {
		for i := from; i <= to; i++ {
			d.create(diffPod(fmt.Sprintf("same-%02d", i), "3"))
		}
		d.check(fmt.Sprintf("after same-%02d to same-%02d", from, to))
	}
	burst(1, 8)
	d.place(diffPod("spread", "3", func(p *v1.Pod) {
		p.Labels = map[string]string{"app": "spread"}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}},
		}}
	}))
	burst(9, 13)
	d.place(diffPod("no-room", "3"))

	// Both schedulers count into upstream's metric (one process): the
	// difference is kube-scheduler's.
	mini := len(h.log.Find(func(e event.Event) bool {
		return e.CycleEnd != nil && e.CycleEnd.Batch != nil && e.CycleEnd.Batch.Used
	}))
	up := int(batchAttempts(t)-before) - mini
	// All but the first pod of each burst could be.
	t.Logf("pods placed from a batch: minisched %d, kube-scheduler %d, of 11 that could be; %s", mini, up, d.figures())
	if mini == 0 || up == 0 {
		t.Errorf("minisched placed %d pods from a batch, kube-scheduler %d: the run compared no batching", mini, up)
	}
	for name, tr := range d.tracks {
		if !tr.nodeOK || !tr.pluginsOK || !tr.attemptsOK {
			t.Errorf("%s: the schedulers disagree (see above)", name)
		}
	}
}
