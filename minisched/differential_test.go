package minisched_test

import (
	"context"
	"fmt"
	"math/rand"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"minisched/event"
	"minisched/examples/extender"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
)

// This file (over 400 lines: the runs, and how the two clusters are driven
// and compared, read together; the stories, the workload, the states and the
// figures are in differential_*_test.go) holds the placement differential.
//
// The placement differential runs the real kube-scheduler (pkg/scheduler of
// k8s.io/kubernetes) in this process, on a second embedded control plane,
// next to minisched on the package's control plane. Both get the same
// seeded cluster and the same pods, one at a time, and after every pod the
// whole state of both clusters must be the same: where every pod is, which
// pods preemption deleted, for the pods left pending the plugins that
// rejected them and how many times they were tried, and for the pods bound
// since the last pod the attempts that bound them.
//
// Seeds 1-5 run kube-scheduler's default configuration; seeds 6 and 7 two
// profiles (twoProfiles), the random pods spread over them; seeds 8 and 9
// an extender (withExtender), the example's, which both schedulers call;
// seed 10 the default configuration with SchedulerAsyncAPICalls on, so
// that both send their status patches and bindings through upstream's API
// dispatcher.
//
// Both schedulers run with parallelism 1 and minisched with a seed, so that
// Filter checks the nodes one at a time in order on both sides.
// OpportunisticBatching is on for both, as by default: these profiles
// sign no pod (PodTopologySpread's default constraints refuse), so no pod
// is batched; TestBatchingAgreesWithUpstream compares batching itself.
// kube-scheduler's choice is then deterministic, ties included: the head of
// its score heap over the feasible nodes in filter order. So every node
// must agree exactly.
//
// Every seed also runs the stories (differential_stories_test.go): three of
// preemption, an external nomination, and one of DRA (a claim, and pods
// asking for an extended resource a DeviceClass names), whose allocated
// devices must agree too. Seed slowVolumeSeed adds one more: a volume that
// takes over 30 s to bind, which both must wait for at PreBind.
//
// The random pods cannot preempt (priority 0, or a class with
// preemptionPolicy Never): DefaultPreemption picks its first candidate at a
// random offset, so only the stories preempt, each on the one node its
// preemptor may use.

// diffConfig is kube-scheduler's default configuration with parallelism 1.
const diffConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 1
`

// twoProfiles adds a second profile that packs pods (MostAllocated, no
// balancing, no image locality): the random pods pick one of the two by
// spec.schedulerName, as kube-scheduler's users do.
const twoProfiles = diffConfig + `profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
      - name: ImageLocality
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`

// withExtender calls the example extender at EXTENDER (its URL, set at
// run time) to filter, prioritize and preempt, on both sides. Each node is a
// zone of its own (see generator.cluster), so the extender scores one node
// at most, no tie between two is broken at random (upstream's Randomizer),
// and the nodes must agree exactly.
const withExtender = diffConfig + `extenders:
- urlPrefix: EXTENDER
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 5
  preemptVerb: preempt
`

// The runs: each seed under a configuration; the random pods of a
// configuration with several profiles are spread over them, and those of a
// configuration with an extender carry its labels.
var diffRuns = []struct {
	config   string
	profiles []string
	extender bool
	seeds    []int64
	// gates are set for both schedulers (they share the process's gates).
	gates map[featuregate.Feature]bool
}{
	{config: diffConfig, seeds: []int64{1, 2, 3, 4, 5}},
	{config: twoProfiles, profiles: []string{"default-scheduler", "packer"}, seeds: []int64{6, 7}},
	{config: withExtender, extender: true, seeds: []int64{8, 9}},
	{config: diffConfig, seeds: []int64{10}, gates: map[featuregate.Feature]bool{features.SchedulerAsyncAPICalls: true}},
}

// slowVolumeSeed runs slowVolumeStory, which takes over 30 s.
const slowVolumeSeed = 2

const (
	// randomPods per seed; the stories add ten more.
	randomPods = 44
	// Upper bounds only: every wait polls a condition.
	settleTimeout  = 90 * time.Second
	preemptTimeout = 60 * time.Second
	diffPoll       = 25 * time.Millisecond
)

// Labels, taints and images of the generated clusters.
const (
	storyNodeLabel = "example.com/story-node"
	rackLabel      = "example.com/rack"
	storyTaint     = "example.com/story"
	diskLabel      = "example.com/disk"
	tierLabel      = "example.com/tier"
	holdGate       = "example.com/hold"
)

var diffImages = []v1.ContainerImage{
	{Names: []string{"example.com/web:1.0"}, SizeBytes: 600 << 20},
	{Names: []string{"example.com/db:2.1"}, SizeBytes: 900 << 20},
	{Names: []string{"example.com/cache:7"}, SizeBytes: 250 << 20},
}

// The priority classes. Random pods use the batch classes, which never
// preempt; only the stories' preemptor preempts.
var diffPriorityClasses = []schedulingv1.PriorityClass{
	{ObjectMeta: metav1.ObjectMeta{Name: "story-low"}, Value: 1},
	{ObjectMeta: metav1.ObjectMeta{Name: "story-mid"}, Value: 2},
	{ObjectMeta: metav1.ObjectMeta{Name: "story-high"}, Value: 1000},
	{ObjectMeta: metav1.ObjectMeta{Name: "batch-low"}, Value: 10, PreemptionPolicy: ptrTo(v1.PreemptNever)},
	{ObjectMeta: metav1.ObjectMeta{Name: "batch-high"}, Value: 100, PreemptionPolicy: ptrTo(v1.PreemptNever)},
}

// TestAgreesWithUpstream is the placement differential; see above.
func TestAgreesWithUpstream(t *testing.T) {
	second := startSecondControlPlane(t)
	for _, c := range []kubernetes.Interface{client, second} {
		ensurePriorityClasses(t, c)
	}
	ext := httptest.NewServer(&extender.Server{})
	defer ext.Close()
	var total figures
	begun := time.Now()
	seeds := 0
	for _, run := range diffRuns {
		for _, seed := range run.seeds {
			name := fmt.Sprintf("seed-%d", seed)
			if len(run.profiles) > 1 {
				name += "-profiles-" + strings.Join(run.profiles, "-")
			}
			if run.extender {
				name += "-extender"
			}
			for gate, on := range run.gates {
				name += fmt.Sprintf("-%s=%t", gate, on)
			}
			t.Run(name, func(t *testing.T) {
				for gate, on := range run.gates {
					featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, gate, on)
				}
				config := strings.Replace(run.config, "EXTENDER", ext.URL, 1)
				f := runSeed(t, seed, second, config, run.profiles, run.extender)
				t.Logf("seed %d: %s", seed, f)
				total.add(f)
				seeds++
			})
		}
	}
	t.Logf("all %d seeds in %v: %s", seeds, time.Since(begun).Round(time.Second), &total)
}

// runSeed generates a cluster and a workload from seed and runs them
// through both schedulers, each started afresh on an emptied cluster.
func runSeed(t *testing.T, seed int64, second kubernetes.Interface, config string, profiles []string, withExtender bool) *figures {
	emptyCluster(t, second)
	h := start(t, config, func(o *minisched.ServiceOptions) { o.Tuning.Seed = seed })
	cfg, err := schedconfig.Load([]byte(config), "")
	if err != nil {
		t.Fatal(err)
	}
	d := &diff{t: t, seed: seed, h: h, up: startUpstream(t, second, cfg), tracks: map[string]*podTrack{},
		upBound: sets.New[string](), bindings: readAttemptsMetric(t)}
	if async := utilfeature.DefaultFeatureGate.Enabled(features.SchedulerAsyncAPICalls); (d.up.sched.APIDispatcher != nil) != async {
		t.Fatalf("kube-scheduler's API dispatcher: %v, with SchedulerAsyncAPICalls %t", d.up.sched.APIDispatcher, async)
	}
	if n := h.svc.Scheduler().NodeCount(); n != 0 {
		t.Fatalf("minisched's cache starts with %d nodes", n)
	}
	if n := len(d.up.sched.Cache.Dump().Nodes); n != 0 {
		t.Fatalf("kube-scheduler's cache starts with %d nodes", n)
	}

	g := &generator{r: rand.New(rand.NewSource(seed)), profiles: profiles, extender: withExtender}
	nodes := g.cluster()
	createNodes(t, client, nodes...)
	createNodes(t, d.up.client, nodes...)
	d.settle("the nodes")

	steps := make([]func(), 0, randomPods+5)
	for i := range randomPods {
		p := g.randomPod(i + 1)
		steps = append(steps, func() { d.place(p) })
	}
	// The stories go in at random places, so that they meet different
	// clusters from one seed to the next.
	usable := g.regular
	if len(usable) == 0 {
		usable = g.all
	}
	stories := []func(){d.preemptionStory, d.budgetAndAgeStory, d.nominatedNodeGetsRoomStory, func() { d.externalNominationStory(usable) }, d.draStory}
	if seed == slowVolumeSeed {
		stories = append(stories, d.slowVolumeStory)
	}
	for _, s := range stories {
		at := 5 + g.r.Intn(len(steps)-5)
		steps = slices.Insert(steps, at, s)
	}
	for _, step := range steps {
		step()
		if d.diverged {
			break
		}
	}
	return d.figures()
}

// diff drives both schedulers through one seed and compares them.
type diff struct {
	t    *testing.T
	seed int64
	h    *harness
	up   *upstream
	// created lists every pod made, in order; tracks keeps what the
	// comparisons found for each.
	created  []string
	tracks   map[string]*podTrack
	diverged bool
	stories  storyFigures
	// upBound are the pods kube-scheduler has bound so far, and bindings
	// the count and sum of its PodSchedulingAttempts histogram then: each
	// binding observes the pod's attempts there.
	upBound  sets.Set[string]
	bindings attemptsMetric
	timing   timing
}

type podTrack struct {
	nodeOK                             bool
	pendingSeen, pluginsOK, attemptsOK bool
	// boundAttempts: the attempts that bound the pod could be compared;
	// boundAttemptsOK: they agreed.
	boundAttempts, boundAttemptsOK bool
}

// outcome is one pod as a scheduler left it: on a node, or pending with
// the plugins that rejected it and the number of attempts.
type outcome struct {
	Node     string
	Plugins  []string
	Gating   string
	Attempts int
	Message  string
}

func (o outcome) pending() bool { return o.Node == "" }

// place creates the pod in both clusters and compares once both settle.
func (d *diff) place(p *v1.Pod) {
	d.create(p)
	d.check("after " + p.Name)
}

func (d *diff) create(p *v1.Pod) {
	d.t.Helper()
	createPod(d.t, client, p.DeepCopy())
	createPod(d.t, d.up.client, p.DeepCopy())
	d.created = append(d.created, p.Name)
	d.tracks[p.Name] = &podTrack{nodeOK: true, pluginsOK: true, attemptsOK: true}
}

// check waits until both schedulers have settled and compares every pod.
func (d *diff) check(when string) (mini, up map[string]outcome) {
	d.t.Helper()
	mini, up = d.settle(when)
	d.compare(when, mini, up)
	d.compareBindings(when, up)
	return mini, up
}

// newlyBound lists the pods bound in up that kube-scheduler had not bound
// at the last check.
func (d *diff) newlyBound(up map[string]outcome) []string {
	var out []string
	for _, name := range d.created {
		if o, ok := up[name]; ok && !o.pending() && !d.upBound.Has(name) {
			out = append(out, name)
		}
	}
	return out
}

// compareBindings compares the attempts that bound the pods bound since the
// last check: minisched's from its event log, kube-scheduler's from the
// growth of its attempts histogram. One pod bound: its own attempts; more:
// their sum.
func (d *diff) compareBindings(when string, up map[string]outcome) {
	d.t.Helper()
	newly := d.newlyBound(up)
	now := readAttemptsMetric(d.t)
	upSum := int(now.sum - d.bindings.sum)
	d.bindings = now
	d.upBound.Insert(newly...)
	if len(newly) == 0 || d.diverged {
		return
	}
	miniSum, each := 0, make([]string, 0, len(newly))
	for _, name := range newly {
		a := bindingAttempt(d.h.log, name)
		miniSum += a
		each = append(each, fmt.Sprintf("%s %d", name, a))
	}
	agree := miniSum == upSum
	for _, name := range newly {
		tr := d.tracks[name]
		tr.boundAttempts = true
		tr.boundAttemptsOK = agree
	}
	if !agree {
		subject := "pod " + newly[0]
		if len(newly) > 1 {
			subject = fmt.Sprintf("pods %v, bound in the same step", newly)
		}
		d.t.Errorf("seed %d, %s: %s: minisched bound after %d attempts (%s), kube-scheduler after %d%s",
			d.seed, when, subject, miniSum, strings.Join(each, ", "), upSum, d.explain(newly[0]))
	}
}

// bindingAttempt is the attempt of the pod's last cycle in minisched, the
// one that bound it.
func bindingAttempt(log *eventLog, name string) int {
	starts := log.find(name, func(e event.Event) bool { return e.Kind == event.KindCycleStart })
	if len(starts) == 0 {
		return 0
	}
	return starts[len(starts)-1].CycleStart.Attempt
}

// settle waits until both schedulers have handled every change of their
// cluster and have nothing left to try: every pod bound and in the cache,
// or parked in the unschedulable set, nothing in activeQ, backoffQ or in
// flight, no preemption under way, and kube-scheduler's binding cycles
// through to the attempts metric. The state must hold for two polls in a
// row (an event handler updates the cache a moment before the queue).
func (d *diff) settle(when string) (mini, up map[string]outcome) {
	d.t.Helper()
	var last, why string
	// When each side was last seen to become settled.
	begun := time.Now()
	var miniAt, upAt time.Duration
	settledAt := func(at *time.Duration, why string) {
		switch {
		case why != "":
			*at = 0
		case *at == 0:
			*at = max(time.Since(begun), time.Nanosecond)
		}
	}
	err := wait.PollUntilContextTimeout(context.Background(), diffPoll, settleTimeout, true, func(ctx context.Context) (bool, error) {
		m, whyMini := d.miniState(ctx)
		u, whyUp := d.upState(ctx)
		if whyUp == "" {
			if n, observed := len(d.newlyBound(u)), readAttemptsMetric(d.t).count-d.bindings.count; observed != uint64(n) {
				whyUp = fmt.Sprintf("kube-scheduler bound %d pods and observed the attempts of %d", n, observed)
			}
		}
		settledAt(&miniAt, whyMini)
		settledAt(&upAt, whyUp)
		if whyMini != "" || whyUp != "" {
			last, why = "", strings.TrimSpace(whyMini+"; "+whyUp)
			return false, nil
		}
		if fp := fingerprint(m) + "|" + fingerprint(u); fp != last {
			last, why = fp, "the state changed between two polls"
			return false, nil
		}
		mini, up = m, u
		return true, nil
	})
	if err != nil {
		d.t.Fatalf("seed %d, %s: the schedulers did not settle within %v: %s", d.seed, when, settleTimeout, why)
	}
	d.timing.add(when, miniAt, upAt)
	return mini, up
}

// compare checks every pod made so far. A pod on different nodes, or
// deleted on one side only, makes the clusters diverge: the seed stops
// there. Different plugins or attempts are reported once per pod.
func (d *diff) compare(when string, mini, up map[string]outcome) {
	d.t.Helper()
	for _, name := range d.created {
		m, inMini := mini[name]
		u, inUp := up[name]
		tr := d.tracks[name]
		switch {
		case !inMini && !inUp:
			continue
		case inMini != inUp:
			tr.nodeOK = false
			d.diverged = true
			d.t.Errorf("seed %d, %s: pod %s deleted by preemption in %s only (minisched: %s; kube-scheduler: %s)%s",
				d.seed, when, name, map[bool]string{true: "kube-scheduler's cluster", false: "minisched's cluster"}[inMini],
				describe(m, inMini), describe(u, inUp), d.explain(name))
			continue
		case m.Node != u.Node:
			tr.nodeOK = false
			d.diverged = true
			d.t.Errorf("seed %d, %s: pod %s: minisched %s, kube-scheduler %s%s",
				d.seed, when, name, describe(m, true), describe(u, true), d.explain(name))
			continue
		case !m.pending():
			continue
		}
		tr.pendingSeen = true
		if tr.pluginsOK && (!slices.Equal(m.Plugins, u.Plugins) || m.Gating != u.Gating) {
			tr.pluginsOK = false
			d.t.Errorf("seed %d, %s: pending pod %s: minisched blames %v (gated by %q), kube-scheduler %v (gated by %q)\n  minisched: %s\n  kube-scheduler: %s",
				d.seed, when, name, m.Plugins, m.Gating, u.Plugins, u.Gating, m.Message, u.Message)
		}
		// A pod an extender turned away is queued again on every cluster
		// event, by both (upstream's fake Extender plugin hears them all):
		// how many attempts it makes then depends on when the events of
		// each cluster arrive, not on the scheduler.
		if tr.attemptsOK && m.Attempts != u.Attempts && !slices.Contains(m.Plugins, "Extender") {
			tr.attemptsOK = false
			d.t.Errorf("seed %d, %s: pending pod %s, parked as unschedulable by both: minisched tried it %d times, kube-scheduler %d times%s",
				d.seed, when, name, m.Attempts, u.Attempts, d.explain(name))
		}
	}
}

// preempt creates a pod that must preempt and waits until it is bound in
// both clusters (or the timeout, after which the comparison tells the
// rest); the pods preemption deleted must be the same.
func (d *diff) preempt(p *v1.Pod) (miniVictims, upVictims []string, mini, up map[string]outcome) {
	d.t.Helper()
	before := d.live()
	d.create(p)
	begun := time.Now()
	var miniAt, upAt time.Duration
	_ = wait.PollUntilContextTimeout(context.Background(), diffPoll, preemptTimeout, true, func(ctx context.Context) (bool, error) {
		if miniAt == 0 && nodeOf(d.t, client, p.Name) != "" {
			miniAt = time.Since(begun)
		}
		if upAt == 0 && nodeOf(d.t, d.up.client, p.Name) != "" {
			upAt = time.Since(begun)
		}
		return miniAt != 0 && upAt != 0, nil
	})
	d.timing.add("binding the preemptor "+p.Name, miniAt, upAt)
	mini, up = d.check("after the preemptor " + p.Name)
	for _, name := range before {
		if _, ok := mini[name]; !ok {
			miniVictims = append(miniVictims, name)
		}
		if _, ok := up[name]; !ok {
			upVictims = append(upVictims, name)
		}
	}
	if len(upVictims) == 0 {
		d.t.Errorf("seed %d: kube-scheduler preempted nothing for %s (it is %s): the story no longer tests preemption",
			d.seed, p.Name, describe(up[p.Name], true))
	}
	d.stories.preemptions++
	if slices.Equal(miniVictims, upVictims) && mini[p.Name].Node == up[p.Name].Node {
		d.stories.preemptionsAgree++
	}
	return miniVictims, upVictims, mini, up
}

// live lists the pods made so far that still exist in kube-scheduler's
// cluster.
func (d *diff) live() []string {
	_, up := d.settle("before a preemption")
	var out []string
	for _, name := range d.created {
		if _, ok := up[name]; ok {
			out = append(out, name)
		}
	}
	return out
}
