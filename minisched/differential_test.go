package minisched_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	metricstestutil "k8s.io/component-base/metrics/testutil"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"minisched/event"
	"minisched/k8sapiserver"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
)

// The placement differential runs the real kube-scheduler (pkg/scheduler of
// k8s.io/kubernetes) in this process, on a second embedded control plane,
// next to minisched on the package's control plane. Both get the same
// seeded cluster and the same pods, one at a time, and after every pod the
// whole state of both clusters must be the same: where every pod is, which
// pods preemption deleted, for the pods left pending the plugins that
// rejected them and how many times they were tried, and for the pods bound
// since the last pod the attempts that bound them.
//
// Both schedulers run with parallelism 1 and minisched with a seed, so that
// Filter checks the nodes one at a time in order on both sides, and
// kube-scheduler runs without OpportunisticBatching, which minisched
// deliberately does not do (docs/FIDELITY.md). kube-scheduler's choice is
// then deterministic, ties included: the head of its score heap over the
// feasible nodes in filter order. So every node must agree exactly.
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

const (
	diffSeeds = 5
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
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.OpportunisticBatching, false)
	second := startSecondControlPlane(t)
	for _, c := range []kubernetes.Interface{client, second} {
		ensurePriorityClasses(t, c)
	}
	var total figures
	begun := time.Now()
	for seed := int64(1); seed <= diffSeeds; seed++ {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			f := runSeed(t, seed, second)
			t.Logf("seed %d: %s", seed, f)
			total.add(f)
		})
	}
	t.Logf("all %d seeds in %v: %s", diffSeeds, time.Since(begun).Round(time.Second), &total)
}

// runSeed generates a cluster and a workload from seed and runs them
// through both schedulers, each started afresh on an emptied cluster.
func runSeed(t *testing.T, seed int64, second kubernetes.Interface) *figures {
	emptyCluster(t, second)
	h := start(t, diffConfig, func(o *minisched.ServiceOptions) { o.Tuning.Seed = seed })
	cfg, err := schedconfig.Load([]byte(diffConfig), "")
	if err != nil {
		t.Fatal(err)
	}
	d := &diff{t: t, seed: seed, h: h, up: startUpstream(t, second, cfg), tracks: map[string]*podTrack{},
		upBound: sets.New[string](), bindings: readAttemptsMetric(t)}
	if n := h.svc.Scheduler().NodeCount(); n != 0 {
		t.Fatalf("minisched's cache starts with %d nodes", n)
	}
	if n := len(d.up.sched.Cache.Dump().Nodes); n != 0 {
		t.Fatalf("kube-scheduler's cache starts with %d nodes", n)
	}

	g := &generator{r: rand.New(rand.NewSource(seed))}
	nodes := g.cluster()
	createNodes(t, client, nodes...)
	createNodes(t, d.up.client, nodes...)
	d.settle("the nodes")

	steps := make([]func(), 0, randomPods+4)
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
	stories := []func(){d.preemptionStory, d.budgetAndAgeStory, d.nominatedNodeGetsRoomStory, func() { d.externalNominationStory(usable) }}
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

// timing is how long each scheduler took to settle after the steps: not
// compared, reported, since the queues may retry at different times.
type timing struct {
	mini, up time.Duration
	// worst is the step where the two differed most.
	worst              string
	worstMini, worstUp time.Duration
}

func (t *timing) add(step string, mini, up time.Duration) {
	t.mini += mini
	t.up += up
	if (mini - up).Abs() > (t.worstMini - t.worstUp).Abs() {
		t.worst, t.worstMini, t.worstUp = step, mini, up
	}
}

func (t *timing) merge(o timing, seed int64) {
	t.add(fmt.Sprintf("seed %d, %s", seed, o.worst), o.worstMini, o.worstUp)
	t.mini += o.mini - o.worstMini
	t.up += o.up - o.worstUp
}

func (t *timing) String() string {
	return fmt.Sprintf("time to settle after the steps: minisched %v, kube-scheduler %v; widest gap %s: minisched %v, kube-scheduler %v",
		t.mini.Round(time.Millisecond), t.up.Round(time.Millisecond), t.worst, t.worstMini.Round(time.Millisecond), t.worstUp.Round(time.Millisecond))
}

type podTrack struct {
	nodeOK                             bool
	pendingSeen, pluginsOK, attemptsOK bool
	// boundAttempts: the attempts that bound the pod could be compared;
	// boundAttemptsOK: they agreed.
	boundAttempts, boundAttemptsOK bool
}

// attemptsMetric reads kube-scheduler's PodSchedulingAttempts histogram,
// which only kube-scheduler observes in this process: minisched keeps no
// such metric.
type attemptsMetric struct {
	count uint64
	sum   float64
}

func readAttemptsMetric(t *testing.T) attemptsMetric {
	t.Helper()
	count, err := metricstestutil.GetHistogramMetricCount(schedmetrics.PodSchedulingAttempts.ObserverMetric)
	if err != nil {
		t.Fatalf("reading kube-scheduler's attempts metric: %v", err)
	}
	sum, err := metricstestutil.GetHistogramMetricValue(schedmetrics.PodSchedulingAttempts.ObserverMetric)
	if err != nil {
		t.Fatalf("reading kube-scheduler's attempts metric: %v", err)
	}
	return attemptsMetric{count: count, sum: sum}
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
		a := d.miniBindingAttempt(name)
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

// miniBindingAttempt is the attempt of the pod's last cycle in minisched,
// the one that bound it.
func (d *diff) miniBindingAttempt(name string) int {
	starts := d.h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindCycleStart })
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

// miniState reads minisched's view; a non-empty reason says why it has not
// settled.
func (d *diff) miniState(ctx context.Context) (map[string]outcome, string) {
	s := d.h.svc.Scheduler()
	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	for _, n := range nodes.Items {
		if !s.Seen("Node", "", n.Name, n.ResourceVersion) {
			return nil, "minisched has not handled node " + n.Name + " at its latest version"
		}
	}
	queued := map[string]int{}
	entries := s.Queue().List()
	for i, e := range entries {
		if e.Queue != event.Unschedulable {
			return nil, fmt.Sprintf("minisched holds %s in %s", e.Pod.Name, e.Queue)
		}
		queued[e.Pod.Name] = i
	}
	out := map[string]outcome{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !s.Seen("Pod", p.Namespace, p.Name, p.ResourceVersion) {
			return nil, "minisched has not handled pod " + p.Name + " at its latest version"
		}
		if p.Spec.NodeName != "" {
			out[p.Name] = outcome{Node: p.Spec.NodeName}
			continue
		}
		i, ok := queued[p.Name]
		if !ok {
			return nil, "minisched's queue does not hold the pending pod " + p.Name
		}
		e := entries[i]
		if e.GatingPlugin == "DefaultPreemption" {
			return nil, "minisched is still preempting for " + p.Name
		}
		// The plugins include the gating plugin, as upstream's
		// UnschedulablePlugins do.
		out[p.Name] = outcome{Plugins: e.Plugins, Gating: e.GatingPlugin, Attempts: e.Attempts, Message: scheduledMessage(p)}
	}
	for _, name := range d.created {
		if _, ok := out[name]; !ok && !s.Seen("Pod", "default", name, "") {
			return nil, "minisched has not handled the deletion of " + name
		}
	}
	return out, ""
}

// upState reads kube-scheduler's view: its cache and its queue.
func (d *diff) upState(ctx context.Context) (map[string]outcome, string) {
	q := d.up.queue
	if n := len(q.PodsInActiveQ()); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler holds %d pods in activeQ", n)
	}
	if n := len(q.PodsInBackoffQ()); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler holds %d pods in backoffQ", n)
	}
	if n := len(q.InFlightPods()); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler has %d pods in flight", n)
	}
	pods, err := d.up.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	nodes, err := d.up.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	dump := d.up.sched.Cache.Dump()
	if n := dump.AssumedPods.Len(); n > 0 {
		return nil, fmt.Sprintf("kube-scheduler has %d assumed pods", n)
	}
	for _, n := range nodes.Items {
		ni := dump.Nodes[n.Name]
		if ni == nil || ni.Node() == nil || ni.Node().ResourceVersion != n.ResourceVersion {
			return nil, "kube-scheduler's cache does not hold node " + n.Name + " at its latest version"
		}
	}
	cached := map[string]*v1.Pod{}
	for _, ni := range dump.Nodes {
		for _, pi := range ni.GetPods() {
			cached[pi.GetPod().Name] = pi.GetPod()
		}
	}
	parked := map[string]*v1.Pod{}
	for _, p := range q.UnschedulablePods() {
		parked[p.Name] = p
	}
	out := map[string]outcome{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" {
			c := cached[p.Name]
			if c == nil || c.ResourceVersion != p.ResourceVersion || c.Spec.NodeName != p.Spec.NodeName {
				return nil, "kube-scheduler's cache does not hold " + p.Name + " at its latest version"
			}
			out[p.Name] = outcome{Node: p.Spec.NodeName}
			continue
		}
		u := parked[p.Name]
		if u == nil || u.ResourceVersion != p.ResourceVersion {
			return nil, "kube-scheduler has not parked " + p.Name + " at its latest version"
		}
		qpi, ok := q.GetPod(p.Name, p.Namespace, nil)
		if !ok {
			return nil, "kube-scheduler's queue lost " + p.Name
		}
		if qpi.GatingPlugin == "DefaultPreemption" {
			return nil, "kube-scheduler is still preempting for " + p.Name
		}
		out[p.Name] = outcome{
			Plugins: sets.List(qpi.UnschedulablePlugins.Union(qpi.PendingPlugins)), Gating: qpi.GatingPlugin,
			Attempts: qpi.Attempts, Message: scheduledMessage(p),
		}
	}
	for name := range cached {
		if _, ok := out[name]; !ok {
			return nil, "kube-scheduler's cache still holds the deleted pod " + name
		}
	}
	for name := range parked {
		if _, ok := out[name]; !ok {
			return nil, "kube-scheduler's queue still holds the deleted pod " + name
		}
	}
	return out, ""
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
		if tr.attemptsOK && m.Attempts != u.Attempts {
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

// preemptionStory: two pods fill a 2-CPU node; a high-priority pod that
// may only go there preempts the one of lowest priority.
func (d *diff) preemptionStory() {
	d.place(storyPod("sa-low", "story-low", "1", "story-z"))
	d.place(storyPod("sa-mid", "story-mid", "1", "story-z"))
	mv, uv, mini, up := d.preempt(storyPod("sa-high", "story-high", "1", "story-z"))
	d.t.Logf("seed %d, preemption: victims minisched %v, kube-scheduler %v; preemptor on %s / %s; minisched's queue: %s",
		d.seed, mv, uv, mini["sa-high"].Node, up["sa-high"].Node, d.queuePath("sa-high"))
}

// budgetAndAgeStory: story-w holds three pods of one priority: sd-old and
// sd-young, started three and two hours ago, and sd-guarded, the youngest,
// under a PodDisruptionBudget that allows no disruption (its status written
// as the disruption controller would; none runs here). The preemptor needs
// one victim: the budget's pod is reprieved first, then the older of the
// others (upstream's selectVictimsOnNode), so sd-young goes. Without the
// budget it would be sd-guarded; without start times, the order of the
// node's pods would decide.
func (d *diff) budgetAndAgeStory() {
	ctx := context.Background()
	clients := []kubernetes.Interface{client, d.up.client}
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "sd-guarded", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sd-guarded"}}}}
	for _, c := range clients {
		pdb, err := c.PolicyV1().PodDisruptionBudgets("default").Create(ctx, budget.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			d.t.Fatal(err)
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
		if _, err := c.PolicyV1().PodDisruptionBudgets("default").UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			d.t.Fatal(err)
		}
		defer func() {
			if err := c.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, budget.Name, metav1.DeleteOptions{}); err != nil {
				d.t.Error(err)
			}
		}()
	}
	// One instant for both clusters, whole seconds as the API keeps them.
	now := time.Now().Truncate(time.Second)
	for _, victim := range []struct {
		name string
		age  time.Duration
	}{{"sd-old", 3 * time.Hour}, {"sd-young", 2 * time.Hour}, {"sd-guarded", time.Hour}} {
		d.place(storyPod(victim.name, "story-low", "1", "story-w", withLabels("app", victim.name)))
		started := metav1.NewTime(now.Add(-victim.age))
		for _, c := range clients {
			d.updatePod(c, victim.name, func(p *v1.Pod) { p.Status.StartTime = &started }, true)
		}
	}
	// The preemptor's add comes after the start times on the same watch.
	mv, uv, mini, up := d.preempt(storyPod("sd-high", "story-high", "1", "story-w"))
	if !slices.Equal(uv, []string{"sd-young"}) {
		d.t.Errorf("seed %d: kube-scheduler evicted %v for sd-high, not sd-young: the story no longer tests the budget and the ages", d.seed, uv)
	}
	d.t.Logf("seed %d, budget and ages: victims minisched %v, kube-scheduler %v; preemptor on %s / %s",
		d.seed, mv, uv, mini["sd-high"].Node, up["sd-high"].Node)
}

// nominatedNodeGetsRoomStory: a blocker on story-x keeps the preemptor, by
// required anti-affinity over the rack, off story-x and story-y. Preemption
// evicts the blocker and nominates story-x; its deletion frees both nodes
// at once. story-y, empty and twice as big, scores higher, but the
// nominated node is tried first.
func (d *diff) nominatedNodeGetsRoomStory() {
	d.place(storyPod("sb-blocker", "story-low", "1", "story-x", withLabels("app", "sb-blocker")))
	anti := func(p *v1.Pod) {
		affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: rackLabel, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sb-blocker"}},
		}}}
	}
	mv, uv, mini, up := d.preempt(storyPod("sb-pre", "story-high", "1", "story-x", onStoryNodes("story-x", "story-y"), anti))
	if up["sb-pre"].Node == "story-x" {
		d.stories.nominatedFirst++
	}
	d.t.Logf("seed %d, nominated node gets room: victims minisched %v, kube-scheduler %v; preemptor on %s / %s; minisched's queue: %s",
		d.seed, mv, uv, mini["sb-pre"].Node, up["sb-pre"].Node, d.queuePath("sb-pre"))
}

// externalNominationStory: a gated pod is nominated by someone else (its
// status.nominatedNodeName) to the most loaded of the nodes where it fits,
// which the scoring would not choose, then ungated. Both schedulers must
// try that node first.
func (d *diff) externalNominationStory(candidates []string) {
	p := diffPod("sc-held", "500m", func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: holdGate}} })
	d.place(p)
	target := d.mostLoaded(candidates, p.Spec.Containers[0].Resources.Requests.Cpu())
	for _, c := range []kubernetes.Interface{client, d.up.client} {
		d.updatePod(c, p.Name, func(p *v1.Pod) { p.Status.NominatedNodeName = target }, true)
	}
	d.check("after nominating sc-held to " + target)
	for _, c := range []kubernetes.Interface{client, d.up.client} {
		d.updatePod(c, p.Name, func(p *v1.Pod) { p.Spec.SchedulingGates = nil }, false)
	}
	mini, up := d.check("after ungating sc-held")
	if up["sc-held"].Node == target {
		d.stories.nominatedFirst++
	}
	d.t.Logf("seed %d, external nomination to %s: sc-held %s / %s", d.seed, target, describe(mini["sc-held"], true), describe(up["sc-held"], true))
}

// mostLoaded returns the candidate with the largest share of its CPU
// requested that still has room for cpu, as kube-scheduler's cluster
// holds them; the first candidate when none has room.
func (d *diff) mostLoaded(candidates []string, cpu *resource.Quantity) string {
	d.t.Helper()
	ctx := context.Background()
	pods, err := d.up.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	used := map[string]int64{}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			used[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	best, bestShare := candidates[0], -1.0
	for _, name := range candidates {
		n, err := d.up.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			d.t.Fatal(err)
		}
		alloc := n.Status.Allocatable.Cpu().MilliValue()
		if alloc-used[name] < cpu.MilliValue() {
			continue
		}
		if share := float64(used[name]) / float64(alloc); share > bestShare {
			best, bestShare = name, share
		}
	}
	return best
}

func (d *diff) updatePod(c kubernetes.Interface, name string, change func(*v1.Pod), status bool) {
	d.t.Helper()
	ctx := context.Background()
	p, err := c.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	change(p)
	if status {
		_, err = c.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
	} else {
		_, err = c.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{})
	}
	if err != nil {
		d.t.Fatalf("updating %s: %v", name, err)
	}
}

// queuePath tells how the pod went through minisched's queue, with the
// time of each move from the first.
func (d *diff) queuePath(name string) string {
	var parts []string
	var first time.Time
	for _, e := range d.h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindQueue }) {
		if first.IsZero() {
			first = e.Time
		}
		q := e.Queue
		part := fmt.Sprintf("+%v %s", e.Time.Sub(first).Round(time.Millisecond), q.Action)
		if q.From != "" || q.To != "" {
			part += fmt.Sprintf(" %s->%s", q.From, q.To)
		}
		if q.Event != "" {
			part += " (" + q.Event + ")"
		}
		if q.BackoffUntil != nil {
			part += fmt.Sprintf(" until +%v", q.BackoffUntil.Sub(first).Round(time.Millisecond))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// explain tells what minisched saw of the pod's cycles, and what
// kube-scheduler wrote on it, for a failure message.
func (d *diff) explain(name string) string {
	var b strings.Builder
	ends := d.h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindCycleEnd })
	fmt.Fprintf(&b, "\n  minisched's cycles of %s:", name)
	for _, e := range ends {
		c := e.CycleEnd
		fmt.Fprintf(&b, "\n    cycle %d: %s node=%q feasible=%d ties=%v plugins=%v %s", e.Cycle, c.Result, c.Node, c.FeasibleNodes, c.Ties, c.Plugins, c.Message)
	}
	if len(ends) > 0 {
		last := ends[len(ends)-1].Cycle
		for _, e := range d.h.log.find(name, func(e event.Event) bool { return e.Cycle == last }) {
			switch e.Kind {
			case event.KindFilter:
				label := "filter, in order"
				if e.Filter.NominatedNode {
					label = "filter on the nominated node"
				}
				fmt.Fprintf(&b, "\n    last cycle's %s:", label)
				for _, r := range e.Filter.Rows() {
					verdict := "fits"
					if r.Reason != "" {
						verdict = r.Reason
					}
					fmt.Fprintf(&b, " %s: %s;", r.Node, verdict)
				}
			case event.KindScore:
				rows := e.Score.Rows()
				slices.SortStableFunc(rows, func(a, b event.NodeScore) int { return cmp.Compare(b.Total, a.Total) })
				fmt.Fprintf(&b, "\n    last cycle's scores:")
				for _, r := range rows {
					var parts []string
					for j, pl := range e.Score.Plugins {
						if j < len(r.Weighted) && r.Weighted[j] != 0 {
							parts = append(parts, fmt.Sprintf("%s=%d", pl.Name, r.Weighted[j]))
						}
					}
					fmt.Fprintf(&b, "\n      %s %d (%s)", r.Node, r.Total, strings.Join(parts, " "))
				}
			}
		}
	}
	p, err := d.up.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintf(&b, "\n  kube-scheduler's cluster: %v", err)
		return b.String()
	}
	fmt.Fprintf(&b, "\n  kube-scheduler: node=%q nominated=%q %s", p.Spec.NodeName, p.Status.NominatedNodeName, scheduledMessage(p))
	if qpi, ok := d.up.queue.GetPod(name, "default", nil); ok {
		fmt.Fprintf(&b, "; in its queue: attempts %d, plugins %v, pending plugins %v, gated by %q",
			qpi.Attempts, sets.List(qpi.UnschedulablePlugins), sets.List(qpi.PendingPlugins), qpi.GatingPlugin)
	}
	return b.String()
}

// figures are what one seed, or all of them, compared.
type figures struct {
	pods, bound, pending, deleted            int
	nodesAgree                               int
	pendingSeen, pluginsAgree, attemptsAgree int
	boundAttempts, boundAttemptsAgree        int
	ties                                     int
	stories                                  storyFigures
	diverged                                 int
	seed                                     int64
	timing                                   timing
}

type storyFigures struct {
	preemptions, preemptionsAgree, nominatedFirst int
}

func (d *diff) figures() *figures {
	f := &figures{seed: d.seed, stories: d.stories}
	if d.diverged {
		f.diverged = 1
	}
	mini, up := d.settle("at the end")
	for _, name := range d.created {
		tr := d.tracks[name]
		f.pods++
		m, inMini := mini[name]
		u, inUp := up[name]
		switch {
		case !inMini && !inUp:
			f.deleted++
		case inMini && inUp && !m.pending() && !u.pending():
			f.bound++
		case inMini && inUp && m.pending() && u.pending():
			f.pending++
		}
		if tr.nodeOK && inMini == inUp && m.Node == u.Node {
			f.nodesAgree++
		}
		if tr.boundAttempts {
			f.boundAttempts++
			if tr.boundAttemptsOK {
				f.boundAttemptsAgree++
			}
		}
		if tr.pendingSeen {
			f.pendingSeen++
			if tr.pluginsOK {
				f.pluginsAgree++
			}
			if tr.attemptsOK {
				f.attemptsAgree++
			}
		}
	}
	for _, name := range d.created {
		for _, e := range d.h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindCycleEnd }) {
			if e.CycleEnd.Result == event.ResultScheduled && len(e.CycleEnd.Ties) > 0 {
				f.ties++
			}
		}
	}
	f.timing = d.timing
	return f
}

func (f *figures) add(o *figures) {
	f.pods += o.pods
	f.bound += o.bound
	f.pending += o.pending
	f.deleted += o.deleted
	f.nodesAgree += o.nodesAgree
	f.pendingSeen += o.pendingSeen
	f.pluginsAgree += o.pluginsAgree
	f.attemptsAgree += o.attemptsAgree
	f.boundAttempts += o.boundAttempts
	f.boundAttemptsAgree += o.boundAttemptsAgree
	f.ties += o.ties
	f.stories.preemptions += o.stories.preemptions
	f.stories.preemptionsAgree += o.stories.preemptionsAgree
	f.stories.nominatedFirst += o.stories.nominatedFirst
	f.timing.merge(o.timing, o.seed)
	f.diverged += o.diverged
}

func (f *figures) String() string {
	return fmt.Sprintf("%d pods compared (at the end %d bound, %d pending, %d deleted by preemption); "+
		"nodes agree for %d/%d (%d placements among equally scored nodes); "+
		"attempts that bound a pod agree for %d/%d; "+
		"of %d pods seen pending, rejecting plugins agree for %d and attempts for %d; "+
		"preemptions with the same victims and node %d/%d; nominated node taken first by kube-scheduler %d times; seeds that diverged %d",
		f.pods, f.bound, f.pending, f.deleted, f.nodesAgree, f.pods, f.ties,
		f.boundAttemptsAgree, f.boundAttempts,
		f.pendingSeen, f.pluginsAgree, f.attemptsAgree,
		f.stories.preemptionsAgree, f.stories.preemptions, f.stories.nominatedFirst, f.diverged) + "; " + f.timing.String()
}

// generator makes a seed's cluster and pods.
type generator struct {
	r *rand.Rand
	// regular are the generated nodes pods may use: neither tainted
	// NoSchedule nor unschedulable.
	regular []string
	all     []string
}

func (g *generator) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g *generator) chance(percent int) bool { return g.r.Intn(100) < percent }

// cluster makes 8 to 12 nodes of varied sizes over three zones, with
// labels, taints, images and maybe one unschedulable node, then the three
// story nodes, tainted so that only the stories' pods go there.
func (g *generator) cluster() []*v1.Node {
	var nodes []*v1.Node
	count := 8 + g.r.Intn(5)
	unschedulable := -1
	if g.chance(60) {
		unschedulable = g.r.Intn(count)
	}
	for i := range count {
		name := fmt.Sprintf("n%02d", i+1)
		z := []string{"a", "b", "c"}[i%3]
		if i >= 3 {
			z = g.pick("a", "b", "c")
		}
		n := node(name, g.pick("2", "4", "4", "8", "8", "16"), zone(z), nodeMemory(g.pick("4Gi", "8Gi", "16Gi", "32Gi")))
		n.Labels[diskLabel] = g.pick("ssd", "hdd")
		if g.chance(50) {
			n.Labels[tierLabel] = g.pick("front", "back")
		}
		usable := true
		switch {
		case g.chance(15):
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule})
			usable = false
		case g.chance(15):
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule})
		}
		if i == unschedulable {
			n.Spec.Unschedulable = true
			usable = false
		}
		for _, img := range diffImages {
			if g.chance(30) {
				n.Status.Images = append(n.Status.Images, img)
			}
		}
		nodes = append(nodes, n)
		g.all = append(g.all, name)
		if usable {
			g.regular = append(g.regular, name)
		}
	}
	return append(nodes,
		storyNode("story-x", "4", "8Gi", "r1"),
		storyNode("story-y", "8", "16Gi", "r1"),
		storyNode("story-z", "2", "4Gi", ""),
		storyNode("story-w", "3", "6Gi", ""),
	)
}

// podKind is one entry of the catalog of random pods.
type podKind struct {
	name   string
	weight int
	build  func(g *generator, p *v1.Pod)
}

var podKinds = []podKind{
	{"plain", 18, func(g *generator, p *v1.Pod) {
		if g.chance(40) {
			withLabels("app", g.pick("web", "db", "cache"))(p)
		}
	}},
	{"besteffort", 2, func(g *generator, p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = nil }},
	{"tolerates-gpu", 6, func(g *generator, p *v1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule})
	}},
	{"tolerates-spot", 4, func(g *generator, p *v1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "spot", Operator: v1.TolerationOpExists})
	}},
	{"needs-ssd", 5, func(g *generator, p *v1.Pod) {
		requireNode(p, v1.NodeSelectorRequirement{Key: diskLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}})
	}},
	{"needs-zones", 4, func(g *generator, p *v1.Pod) {
		requireNode(p, v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{g.pick("a", "b", "c")}})
	}},
	{"prefers", 6, func(g *generator, p *v1.Pod) {
		affinity(p).NodeAffinity = &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			{Weight: int32(1 + g.r.Intn(100)), Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{g.pick("a", "b", "c")}}}}},
			{Weight: int32(1 + g.r.Intn(100)), Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: diskLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}}}}},
		}}
	}},
	{"selector", 3, func(g *generator, p *v1.Pod) {
		p.Spec.NodeSelector = map[string]string{tierLabel: g.pick("front", "back")}
	}},
	{"near", 5, func(g *generator, p *v1.Pod) {
		withLabels("app", "near")(p)
		affinity(p).PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick("web", "db", "cache")}},
		}}}
	}},
	{"one-per-node", 6, func(g *generator, p *v1.Pod) {
		withLabels("app", "solo")(p)
		affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}},
		}}}
	}},
	{"soft-affinity", 5, func(g *generator, p *v1.Pod) {
		app := g.pick("web", "db", "cache")
		withLabels("app", app)(p)
		a := affinity(p)
		a.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: int32(1 + g.r.Intn(100)), PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: v1.LabelTopologyZone,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick("web", "db", "cache")}}},
		}}}
		a.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: int32(1 + g.r.Intn(100)), PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: v1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		}}}
	}},
	{"spread-zone", 6, func(g *generator, p *v1.Pod) {
		withLabels("app", "spread")(p)
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
	}},
	{"spread-host", 4, func(g *generator, p *v1.Pod) {
		withLabels("app", "web")(p)
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelHostname,
			WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	}},
	{"image", 6, func(g *generator, p *v1.Pod) {
		p.Spec.Containers[0].Image = diffImages[g.r.Intn(len(diffImages))].Names[0]
	}},
	{"fits-nowhere", 3, func(g *generator, p *v1.Pod) {
		switch g.r.Intn(3) {
		case 0:
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("64")
		case 1:
			p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("256Gi")
		default:
			requireNode(p, v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"z-missing"}})
		}
	}},
	{"priority", 5, func(g *generator, p *v1.Pod) { p.Spec.PriorityClassName = g.pick("batch-low", "batch-high") }},
	{"pinned", 3, func(g *generator, p *v1.Pod) {
		// A matchFields on the node's name makes NodeAffinity narrow the
		// nodes at PreFilter.
		affinity(p).NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
				{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{g.all[g.r.Intn(len(g.all))]}}}}}}}
	}},
	{"host-port", 4, func(g *generator, p *v1.Pod) {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}}
	}},
}

// randomPod draws a kind from the catalog and a size.
func (g *generator) randomPod(i int) *v1.Pod {
	total := 0
	for _, k := range podKinds {
		total += k.weight
	}
	n := g.r.Intn(total)
	k := podKinds[0]
	for _, c := range podKinds {
		if n < c.weight {
			k = c
			break
		}
		n -= c.weight
	}
	p := diffPod(fmt.Sprintf("p%02d-%s", i, k.name), g.pick("100m", "250m", "500m", "500m", "1", "1500m", "2"))
	if g.chance(35) {
		p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse(g.pick("128Mi", "512Mi", "1Gi", "2Gi", "4Gi"))
	}
	k.build(g, p)
	return p
}

// diffPod is a pod that goes at once when deleted: no kubelet runs here,
// and the pods preemption evicts must be gone for the preemptor to fit.
func diffPod(name, cpu string, mutators ...func(*v1.Pod)) *v1.Pod {
	p := pod(name, cpu, mutators...)
	p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(0))
	return p
}

// storyPod tolerates the story nodes' taint and may only go to node.
func storyPod(name, class, cpu, node string, mutators ...func(*v1.Pod)) *v1.Pod {
	p := diffPod(name, cpu, onStoryNodes(node))
	p.Spec.PriorityClassName = class
	p.Spec.Tolerations = []v1.Toleration{{Key: storyTaint, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	for _, m := range mutators {
		m(p)
	}
	return p
}

func onStoryNodes(names ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		affinity(p).NodeAffinity = nil
		requireNode(p, v1.NodeSelectorRequirement{Key: storyNodeLabel, Operator: v1.NodeSelectorOpIn, Values: names})
	}
}

func storyNode(name, cpu, mem, rack string) *v1.Node {
	n := node(name, cpu, nodeMemory(mem))
	n.Labels[storyNodeLabel] = name
	if rack != "" {
		n.Labels[rackLabel] = rack
	}
	n.Spec.Taints = []v1.Taint{{Key: storyTaint, Value: "true", Effect: v1.TaintEffectNoSchedule}}
	return n
}

func nodeMemory(q string) func(*v1.Node) {
	return func(n *v1.Node) {
		n.Status.Allocatable[v1.ResourceMemory] = resource.MustParse(q)
		n.Status.Capacity[v1.ResourceMemory] = resource.MustParse(q)
	}
}

func affinity(p *v1.Pod) *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

func requireNode(p *v1.Pod, r v1.NodeSelectorRequirement) {
	a := affinity(p)
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{r}}},
	}
}

func withLabels(kv ...string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

func scheduledMessage(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return fmt.Sprintf("PodScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "no PodScheduled condition"
}

func describe(o outcome, exists bool) string {
	switch {
	case !exists:
		return "deleted"
	case o.pending():
		return fmt.Sprintf("pending (plugins %v, gated by %q, %d attempts)", o.Plugins, o.Gating, o.Attempts)
	}
	return "on " + o.Node
}

func fingerprint(m map[string]outcome) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(m)) {
		o := m[name]
		fmt.Fprintf(&b, "%s=%s/%v/%s/%d;", name, o.Node, o.Plugins, o.Gating, o.Attempts)
	}
	return b.String()
}

// upstream is the real kube-scheduler, running in this process against the
// second control plane.
type upstream struct {
	client kubernetes.Interface
	sched  *scheduler.Scheduler
	queue  *internalqueue.PriorityQueue
}

// startUpstream runs kube-scheduler with cfg until the test ends.
func startUpstream(t *testing.T, c kubernetes.Interface, cfg *config.KubeSchedulerConfiguration) *upstream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	factory := scheduler.NewInformerFactory(c, 0, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.EventsV1()})
	sched, err := scheduler.New(ctx, c, factory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
	)
	if err != nil {
		cancel()
		t.Fatalf("building kube-scheduler: %v", err)
	}
	q, ok := sched.SchedulingQueue.(*internalqueue.PriorityQueue)
	if !ok {
		cancel()
		t.Fatalf("kube-scheduler's queue is a %T", sched.SchedulingQueue)
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sched.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		factory.Shutdown()
		broadcaster.Shutdown()
	})
	return &upstream{client: c, sched: sched, queue: q}
}

// startSecondControlPlane starts kube-scheduler's control plane for the
// whole test.
func startSecondControlPlane(t *testing.T) kubernetes.Interface {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cpB, err := k8sapiserver.Start(ctx, k8sapiserver.Config{})
	if err != nil {
		cancel()
		t.Fatalf("starting the second control plane: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cpB.Close()
	})
	return kubernetes.NewForConfigOrDie(cpB.RESTConfig())
}

func ensurePriorityClasses(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	for _, pc := range diffPriorityClasses {
		if _, err := c.SchedulingV1().PriorityClasses().Create(context.Background(), &pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating priority class %s: %v", pc.Name, err)
		}
	}
}
