package queue

// The differential test (over 400 lines: the operations, the generator
// and the comparison of both queues read together) drives upstream's own PriorityQueue
// (k8s.io/kubernetes/pkg/scheduler/backend/queue) and this queue through the
// same random sequences of operations, as the scheduler and the informers
// would, and checks after every one that both hold every pod in the same
// place with the same bookkeeping, pop the same pod, and give the same
// nominated pods.
//
//	go test ./minisched/queue -run 'TestDifferential$'                   # the sequences
//	go test ./minisched/queue -run 'TestDifferential$' -seed=N -v        # replay one
//	go test ./minisched/queue -run '^$' -fuzz FuzzDifferential -fuzztime 30s

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	_ "unsafe" // go:linkname, to call upstream's flushes

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	upstream "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	testingclock "k8s.io/utils/clock/testing"

	"minisched/event"
)

var (
	seedFlag      = flag.Int64("seed", 0, "replay the differential sequence with this seed")
	sequencesFlag = flag.Int("sequences", 0, "how many differential sequences to run (default 2000, 200 with -short or -race)")
	gangsFlag     = flag.Bool("gangs", false, "replay -seed with GenericWorkload on")
)

// Upstream runs its flushes from goroutines on real tickers; the test calls
// them directly, at the fake clock's time.
//
//go:linkname upstreamFlushBackoff k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushBackoffQCompleted
func upstreamFlushBackoff(p *upstream.PriorityQueue, logger klog.Logger)

//go:linkname upstreamFlushLeftover k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushUnschedulableEntitiesLeftover
func upstreamFlushLeftover(p *upstream.PriorityQueue, logger klog.Logger)

// Two profiles, as kube-scheduler may run: each pod is scheduled by one of
// them (spec.schedulerName), and meets that profile's PreEnqueue plugins and
// QueueingHints only. The second has fewer gates and hears fewer events.
const (
	profileName   = "default-scheduler"
	secondProfile = "second-scheduler"
)

var profileNames = []string{profileName, secondProfile}

// The plugins. Rejections name Fit, Affinity, Taints, Claims (as Pending
// too) and Deaf, which registered no event. GateA and GateB gate pods
// labelled gate=a and gate=b; GateA hears pod label updates, GateB node adds.
var (
	rejectingPlugins = []string{"Fit", "Affinity", "Taints", "Claims", "Deaf"}
	wakeValues       = []string{"", "", "Fit", "Affinity", "Taints", "Claims", "GateA", "GateB", "all", "err"}
)

func registrations(profile string) map[string][]fwk.ClusterEventWithHint {
	ev := func(r fwk.EventResource, a fwk.ActionType) fwk.ClusterEvent {
		return fwk.ClusterEvent{Resource: r, ActionType: a}
	}
	if profile == secondProfile {
		return map[string][]fwk.ClusterEventWithHint{
			"Fit":    {{Event: ev(fwk.Node, fwk.Add), QueueingHintFn: wakeHint("Fit")}},
			"Taints": {{Event: ev(fwk.Node, fwk.UpdateNodeTaint), QueueingHintFn: wakeHint("Taints")}},
			"GateA":  {{Event: ev(fwk.Pod, fwk.UpdatePodLabel)}},
		}
	}
	return map[string][]fwk.ClusterEventWithHint{
		"Fit": {
			{Event: ev(fwk.Node, fwk.Add|fwk.UpdateNodeAllocatable), QueueingHintFn: wakeHint("Fit")},
			{Event: ev(fwk.Pod, fwk.Delete)},
			{Event: ev(fwk.Pod, fwk.UpdatePodScaleDown), QueueingHintFn: wakeHint("Fit")},
		},
		"Affinity": {
			{Event: ev(fwk.Node, fwk.Add|fwk.UpdateNodeLabel), QueueingHintFn: wakeHint("Affinity")},
			{Event: ev(fwk.Pod, fwk.Add|fwk.UpdatePodLabel), QueueingHintFn: wakeHint("Affinity")},
		},
		"Taints": {
			{Event: ev(fwk.Node, fwk.Add|fwk.UpdateNodeTaint), QueueingHintFn: wakeHint("Taints")},
			{Event: ev(fwk.Pod, fwk.UpdatePodToleration), QueueingHintFn: wakeHint("Taints")},
		},
		"Claims": {{Event: ev(fwk.ResourceClaim, fwk.Add|fwk.Update), QueueingHintFn: wakeHint("Claims")}},
		"GateA":  {{Event: ev(fwk.Pod, fwk.UpdatePodLabel), QueueingHintFn: wakeHint("GateA")}},
		"GateB":  {{Event: ev(fwk.Node, fwk.Add), QueueingHintFn: wakeHint("GateB")}},
	}
}

// wakeHint answers Queue when the event's object is labelled wake=<plugin>
// or wake=all, unless the pod is labelled picky=<plugin>; wake=err fails.
func wakeHint(plugin string) fwk.QueueingHintFn {
	return func(_ klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
		obj := newObj
		if obj == nil {
			obj = oldObj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return fwk.QueueSkip, nil
		}
		switch m.GetLabels()["wake"] {
		case "err":
			return fwk.QueueSkip, errors.New("the hint failed")
		case plugin, "all":
			if pod.Labels["picky"] == plugin {
				return fwk.QueueSkip, nil
			}
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
}

type labelGate struct{ name, value string }

func (g labelGate) Name() string { return g.name }
func (g labelGate) PreEnqueue(_ context.Context, p *v1.Pod) *fwk.Status {
	if p.Labels["gate"] == g.value {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "waiting for gate "+g.value)
	}
	return nil
}

// gatesOf are a profile's PreEnqueue plugins: the second has no GateB.
func gatesOf(profile string) []fwk.PreEnqueuePlugin {
	if profile == secondProfile {
		return []fwk.PreEnqueuePlugin{labelGate{"GateA", "a"}}
	}
	return []fwk.PreEnqueuePlugin{labelGate{"GateA", "a"}, labelGate{"GateB", "b"}}
}

// upstreamHintMap builds upstream's map as its scheduler does
// (buildQueueingHintMap): no hint means Queue, Pod unrolls.
func upstreamHintMap() upstream.QueueingHintMapPerProfile {
	always := func(klog.Logger, *v1.Pod, any, any) (fwk.QueueingHint, error) { return fwk.Queue, nil }
	perProfile := upstream.QueueingHintMapPerProfile{}
	for _, profile := range profileNames {
		m := upstream.QueueingHintMap{}
		regs := registrations(profile)
		for _, plugin := range sets.List(sets.KeySet(regs)) {
			for _, reg := range regs[plugin] {
				fn := reg.QueueingHintFn
				if fn == nil {
					fn = always
				}
				events := []fwk.ClusterEvent{reg.Event}
				if reg.Event.Resource == fwk.Pod {
					events = framework.UnrollPodEvent(reg.Event)
				}
				for _, e := range events {
					m[e] = append(m[e], &upstream.QueueingHintFunction{PluginName: plugin, QueueingHintFn: fn})
				}
			}
		}
		perProfile[profile] = m
	}
	return perProfile
}

// ourProfiles are the two profiles as minisched's queue takes them.
func ourProfiles() map[string]Profile {
	out := map[string]Profile{}
	for _, profile := range profileNames {
		out[profile] = Profile{PreEnqueue: gatesOf(profile), Hints: registrations(profile)}
	}
	return out
}

// quiet drops the queues' logs: hints fail on purpose here.
var quiet = logr.New(funcr.New(func(string, string) {}, funcr.Options{}).GetSink())

var setupOnce sync.Once

func setupUpstream() {
	setupOnce.Do(func() {
		metrics.Register()
		// Hint errors are reported through HandleError, which would
		// otherwise log and rate-limit to one a millisecond.
		utilruntime.ErrorHandlers = nil
	})
}

// pod states in the model.
const (
	queued  = iota // in activeQ, backoff or the unschedulable set
	flying         // popped, its attempt under way
	binding        // Done called; PreBind and Bind under way
	gone           // bound or deleted
)

type modelPod struct {
	pod     *v1.Pod // the informer's current object
	state   int
	ours    *PodInfo
	theirs  *framework.QueuedPodInfo
	deleted bool // deleted while in flight: the attempt can only end with Done
}

// chooser is where a sequence takes its choices: a seeded source, or the
// fuzzer's bytes.
type chooser interface {
	intn(n int) int
	exhausted() bool
}

type seeded struct {
	r    *rand.Rand
	left int
}

func (s *seeded) intn(n int) int  { return s.r.Intn(n) }
func (s *seeded) exhausted() bool { s.left--; return s.left < 0 }

type fuzzed struct {
	data []byte
	i    int
}

func (f *fuzzed) intn(n int) int {
	if f.i >= len(f.data) {
		return 0
	}
	v := int(f.data[f.i])
	f.i++
	if n > 256 && f.i < len(f.data) {
		v = v<<8 | int(f.data[f.i])
		f.i++
	}
	return v % n
}
func (f *fuzzed) exhausted() bool { return f.i >= len(f.data) }

// harness holds both queues and the model of the cluster around them.
type harness struct {
	t       testing.TB
	c       chooser
	clk     *testingclock.FakeClock
	ours    *Queue
	theirs  *upstream.PriorityQueue
	stop    chan struct{}
	indexer cache.Indexer
	pods    []*modelPod
	log     []string
	rec     *recorder
	ops     int
	// gangs: GenericWorkload is on; pods may name a group (g0..g2), and
	// the PodGroup objects come and go. cycle is the group popped last
	// while its cycle lasts: no pop until it ends, as the scheduler's loop.
	gangs  bool
	groups map[string]*schedulingv1beta1.PodGroup
	cycle  *groupCycle
}

type groupCycle struct {
	name   string
	ours   *GroupInfo
	theirs *framework.QueuedPodGroupInfo
}

func newHarness(t testing.TB, c chooser) *harness {
	setupUpstream()
	h := &harness{t: t, c: c, stop: make(chan struct{}), rec: &recorder{}, groups: map[string]*schedulingv1beta1.PodGroup{},
		gangs: utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload)}
	h.clk = testingclock.NewFakeClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(c.intn(1000)) * time.Millisecond))
	h.indexer = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	lister := corelisters.NewPodLister(h.indexer)
	less := (&queuesort.PrioritySort{}).Less
	// Upstream reads SchedulerPopFromBackoffQ when its queue is made.
	h.ours = New(Options{
		Less: less, Profiles: ourProfiles(), PodLister: lister, Clock: h.clk, Logger: quiet, Observer: h.rec,
		NoPopFromBackoffQ: !utilfeature.DefaultFeatureGate.Enabled(features.SchedulerPopFromBackoffQ),
		GenericWorkload:   h.gangs,
	})
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	preEnqueue := map[string]map[string]fwk.PreEnqueuePlugin{}
	for _, profile := range profileNames {
		preEnqueue[profile] = map[string]fwk.PreEnqueuePlugin{}
		for _, g := range gatesOf(profile) {
			preEnqueue[profile][g.Name()] = g
		}
	}
	h.theirs = upstream.NewPriorityQueue(less, factory,
		upstream.WithClock(h.clk),
		upstream.WithPodInitialBackoffDuration(time.Second),
		upstream.WithPodMaxBackoffDuration(10*time.Second),
		upstream.WithPodMaxInUnschedulablePodsDuration(5*time.Minute),
		upstream.WithPreEnqueuePluginMap(preEnqueue),
		upstream.WithQueueingHintMapPerProfile(upstreamHintMap()),
		upstream.WithPodLister(lister),
		upstream.WithMetricsRecorder(metrics.NewMetricsAsyncRecorder(100, time.Hour, h.stop)),
	)
	return h
}

func (h *harness) close() { close(h.stop) }

// run plays operations until the chooser is exhausted, checking both queues
// after each. It returns false (having reported) on the first difference.
func (h *harness) run() bool {
	for !h.c.exhausted() {
		// Each operation takes a moment, so that no two pods share a
		// timestamp: their order would then be the heaps' whim.
		h.clk.Step(time.Millisecond)
		h.ops++
		desc, ok := h.step()
		h.log = append(h.log, desc)
		if !ok {
			return false
		}
		if diff := h.compare(); diff != "" {
			h.fail(diff)
			return false
		}
	}
	return true
}

func (h *harness) fail(diff string) {
	h.t.Helper()
	h.t.Errorf("after operation %d: %s\noperations:\n  %s", len(h.log), diff, strings.Join(h.log, "\n  "))
}

func (h *harness) pick(state ...int) *modelPod {
	var candidates []*modelPod
	for _, p := range h.pods {
		if slices.Contains(state, p.state) {
			candidates = append(candidates, p)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	return candidates[h.c.intn(len(candidates))]
}

func (h *harness) oneOf(values ...string) string { return values[h.c.intn(len(values))] }

// step plays one operation and describes it.
func (h *harness) step() (string, bool) {
	if h.gangs && h.c.intn(6) == 0 {
		return h.groupOp()
	}
	switch op := h.c.intn(100); {
	case op < 12:
		return h.add(), true
	case op < 30:
		return h.pop()
	case op < 40:
		if p := h.pick(flying); p != nil && !p.deleted && h.mayFail(p) {
			return h.reject(p), true
		}
	case op < 44:
		if p := h.pick(flying); p != nil {
			return h.done(p), true
		}
	case op < 47:
		if p := h.pick(binding); p != nil && h.mayFail(p) {
			return h.bindingFailed(p), true
		}
	case op < 49:
		if p := h.pick(binding); p != nil {
			return h.bound(p), true
		}
	case op < 55:
		if p := h.pick(queued, flying); p != nil && !p.deleted {
			return h.update(p), true
		}
	case op < 58:
		if p := h.pick(queued, flying, binding); p != nil && !p.deleted {
			return h.remove(p), true
		}
	case op < 61:
		return h.activate(), true
	case op < 75:
		return h.clusterEvent(), true
	case op < 80:
		// The failure handler nominates even a pod that is gone meanwhile.
		if p := h.pick(queued, flying, binding, gone); p != nil {
			return h.nominate(p), true
		}
	case op < 88:
		d := []time.Duration{10 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond, time.Second,
			2 * time.Second, 4 * time.Second, 11 * time.Second, 5 * time.Minute, 6 * time.Minute}[h.c.intn(9)]
		h.clk.Step(d)
		return fmt.Sprintf("step %v (now %s)", d, h.clk.Now().Format("15:04:05.000")), true
	case op < 95:
		h.ours.FlushBackoffQCompleted()
		upstreamFlushBackoff(h.theirs, quiet)
		return "flush backoff", true
	default:
		h.ours.FlushUnschedulableLeftover()
		upstreamFlushLeftover(h.theirs, quiet)
		return "flush leftover", true
	}
	h.clk.Step(time.Millisecond)
	return "nothing to do", true
}

func (h *harness) add() string {
	i := len(h.pods)
	priority := []int32{0, 10, 100}[h.c.intn(3)]
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			ResourceVersion: "1", Labels: map[string]string{}},
		Spec: v1.PodSpec{SchedulerName: h.oneOf(profileName, profileName, secondProfile), Priority: &priority, Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}}}}},
	}
	if g := h.oneOf("", "", "", "a", "b"); g != "" {
		pod.Labels["gate"] = g
	}
	if p := h.oneOf("", "", "Fit", "Affinity", "GateA", "GateB"); p != "" {
		pod.Labels["picky"] = p
	}
	if h.gangs && h.c.intn(3) > 0 {
		group := h.oneOf("g0", "g1", "g2")
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	}
	pod.Status.NominatedNodeName = h.oneOf("", "", "", "n1", "n2")
	h.pods = append(h.pods, &modelPod{pod: pod, state: queued})
	h.must(h.indexer.Add(pod))
	h.ours.Add(pod)
	h.theirs.Add(klog.NewContext(context.Background(), quiet), pod)
	return fmt.Sprintf("add %s priority=%d labels=%v nominated=%q group=%s", pod.Name, priority, pod.Labels, pod.Status.NominatedNodeName, groupName(pod))
}

func (h *harness) must(err error) {
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) pop() (string, bool) {
	// Pop blocks when it has nothing to give: both must agree first.
	h.ours.mu.RLock()
	mineReady := h.ours.readyLocked()
	h.ours.mu.RUnlock()
	// Upstream pops from backoffQ only with SchedulerPopFromBackoffQ on.
	theirsReady := len(h.theirs.PodsInActiveQ()) > 0 ||
		utilfeature.DefaultFeatureGate.Enabled(features.SchedulerPopFromBackoffQ) && len(h.upstreamRejectedBackoff()) > 0
	if mineReady != theirsReady {
		h.fail(fmt.Sprintf("minisched can pop: %v, upstream: %v", mineReady, theirsReady))
		return "pop", false
	}
	if !mineReady {
		return "pop: nothing to pop", true
	}
	if h.cycle != nil {
		// The scheduler's loop ends a group's cycle before it pops again.
		return h.endCycle()
	}
	theirActiveEmpty := len(h.theirs.PodsInActiveQ()) == 0
	e, err := h.ours.Pop()
	h.must(err)
	entity, err := h.theirs.Pop(quiet)
	h.must(err)
	popped, _ := h.rec.Last(isPop)
	from := popped.Queue.From
	if g, ok := e.(*GroupInfo); ok {
		return h.popGroup(g, entity, from, theirActiveEmpty)
	}
	mine := e.(*PodInfo)
	theirs, ok := entity.(*framework.QueuedPodInfo)
	if !ok {
		h.fail(fmt.Sprintf("popped %s, upstream popped %T", mine.Pod.Name, entity))
		return "pop", false
	}
	desc := fmt.Sprintf("pop -> %s from %s (upstream %s)", mine.Pod.Name, from, theirs.Pod.Name)
	if mine.Pod.Name != theirs.Pod.Name {
		h.fail(fmt.Sprintf("popped %s, upstream popped %s", mine.Pod.Name, theirs.Pod.Name))
		return desc, false
	}
	if (from == event.BackoffQ) != theirActiveEmpty {
		h.fail(fmt.Sprintf("popped %s from %s, upstream's activeQ empty: %v", mine.Pod.Name, from, theirActiveEmpty))
		return desc, false
	}
	if mine.Attempts != theirs.Attempts {
		h.fail(fmt.Sprintf("popped %s with %d attempts, upstream %d", mine.Pod.Name, mine.Attempts, theirs.Attempts))
		return desc, false
	}
	p := h.byName(mine.Pod.Name)
	p.state, p.ours, p.theirs = flying, mine, theirs
	return desc, true
}

func (h *harness) byName(name string) *modelPod {
	for _, p := range h.pods {
		if p.pod.Name == name {
			return p
		}
	}
	h.t.Fatalf("no pod %s", name)
	return nil
}

// reject ends an attempt with a rejection or an error, as the scheduler's
// failure handler does: the plugins are replaced, the object is the
// informer's current one.
func (h *harness) reject(p *modelPod) string {
	var unschedulable, pending []string
	isError := h.c.intn(4) == 0
	if !isError {
		for _, pl := range rejectingPlugins {
			if h.c.intn(3) == 0 {
				unschedulable = append(unschedulable, pl)
			}
		}
		if h.c.intn(4) == 0 {
			pending = append(pending, "Claims")
		}
	}
	f := Failure{Plugins: sets.New(unschedulable...), Pending: sets.New(pending...), Message: "failed"}
	if isError && h.c.intn(2) == 0 {
		// An error that names plugins anyway: they are dropped.
		f.Error, f.Plugins = true, sets.New("Fit")
	}
	h.requeue(p, f, sets.New(unschedulable...), sets.New(pending...))
	p.state = queued
	return fmt.Sprintf("fail %s unschedulable=%v pending=%v error=%v", p.pod.Name, unschedulable, pending, isError)
}

// requeue hands a failed attempt back to both queues.
func (h *harness) requeue(p *modelPod, f Failure, unschedulable, pending sets.Set[string]) {
	theirs := p.theirs.DeepCopy()
	theirs.ClearRejectorPlugins()
	if unschedulable.Len()+pending.Len() > 0 {
		theirs.UnschedulablePlugins, theirs.PendingPlugins = unschedulable, pending
	}
	theirs.PodInfo, _ = framework.NewPodInfo(p.pod)
	h.must(h.theirs.AddUnschedulablePodIfNotPresent(quiet, theirs, h.theirs.SchedulingCycle()))
	p.ours.Pod = p.pod
	h.ours.AddUnschedulableIfNotPresent(p.ours, f)
}

func (h *harness) done(p *modelPod) string {
	h.ours.Done(p.pod.UID)
	h.theirs.Done(p.pod.UID)
	if p.deleted {
		p.state = gone
		return fmt.Sprintf("done %s (deleted)", p.pod.Name)
	}
	p.state = binding
	return fmt.Sprintf("done %s, binding", p.pod.Name)
}

// bindingFailed: PreBind or Bind failed after Done; an error.
func (h *harness) bindingFailed(p *modelPod) string {
	h.requeue(p, Failure{Message: "bind failed"}, sets.New[string](), sets.New[string]())
	p.state = queued
	return fmt.Sprintf("binding of %s failed", p.pod.Name)
}

// bound: the informer sees the pod assigned and takes it out of the queue.
func (h *harness) bound(p *modelPod) string {
	bound := p.pod.DeepCopy()
	bound.Spec.NodeName = "n1"
	bound.ResourceVersion = bump(bound.ResourceVersion)
	h.must(h.indexer.Update(bound))
	h.ours.Delete(p.pod)
	h.theirs.Delete(quiet, p.pod)
	p.pod, p.state = bound, gone
	return fmt.Sprintf("bound %s", p.pod.Name)
}

func bump(rv string) string {
	var n int
	fmt.Sscan(rv, &n)
	return fmt.Sprint(n + 1)
}

func (h *harness) update(p *modelPod) string {
	old, pod := p.pod, p.pod.DeepCopy()
	pod.ResourceVersion = bump(pod.ResourceVersion)
	var changes []string
	for len(changes) == 0 || len(changes) < 4 && h.c.intn(3) == 0 {
		switch h.c.intn(7) {
		case 0:
			delete(pod.Labels, "gate")
			changes = append(changes, "ungate")
		case 1:
			pod.Labels["gate"] = h.oneOf("a", "b")
			changes = append(changes, "gate="+pod.Labels["gate"])
		case 2:
			pod.Labels["wake"] = h.oneOf(wakeValues...)
			changes = append(changes, "wake="+pod.Labels["wake"])
		case 3:
			pod.Labels["picky"] = h.oneOf("", "Fit", "Affinity", "Taints", "GateA")
			changes = append(changes, "picky="+pod.Labels["picky"])
		case 4:
			cpu := h.oneOf("100m", "500m", "900m")
			pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(cpu)
			changes = append(changes, "cpu="+cpu)
		case 5:
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: fmt.Sprint("k", len(pod.Spec.Tolerations)), Operator: v1.TolerationOpExists})
			changes = append(changes, "toleration")
		case 6:
			pod.Status.NominatedNodeName = h.oneOf("", "n1", "n2")
			changes = append(changes, fmt.Sprintf("nominated=%q", pod.Status.NominatedNodeName))
		}
	}
	events := framework.PodSchedulingPropertiesChange(pod, old, true)
	h.must(h.indexer.Update(pod))
	p.pod = pod
	h.ours.Update(old, pod, events)
	h.theirs.Update(klog.NewContext(context.Background(), quiet), old, pod)
	var labels []string
	for _, e := range events {
		labels = append(labels, e.Label())
	}
	return fmt.Sprintf("update %s %v %v", pod.Name, changes, labels)
}

func (h *harness) remove(p *modelPod) string {
	h.must(h.indexer.Delete(p.pod))
	h.ours.Delete(p.pod)
	h.theirs.Delete(quiet, p.pod)
	if p.state == flying {
		p.deleted = true
	} else {
		p.state = gone
	}
	return fmt.Sprintf("delete %s", p.pod.Name)
}

func (h *harness) activate() string {
	pods := map[string]*v1.Pod{}
	for range 1 + h.c.intn(2) {
		if p := h.pick(queued, flying); p != nil {
			pods[p.pod.Namespace+"/"+p.pod.Name] = p.pod
		}
	}
	h.ours.Activate(quiet, pods)
	h.theirs.Activate(quiet, pods)
	return fmt.Sprintf("activate %v", slices.Sorted(maps.Keys(pods)))
}

func (h *harness) clusterEvent() string {
	wake := h.oneOf(wakeValues...)
	node := func(w string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"wake": w}}}
	}
	other := func(w string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", UID: "uid-other", Labels: map[string]string{"wake": w}},
			Spec: v1.PodSpec{NodeName: "n1"}}
	}
	claim := func(w string) *resourceapi.ResourceClaim {
		return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Labels: map[string]string{"wake": w}}}
	}
	var ev fwk.ClusterEvent
	var oldObj, newObj any
	switch h.c.intn(11) {
	case 0:
		ev, newObj = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, node(wake)
	case 1:
		ev, oldObj, newObj = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}, node(""), node(wake)
	case 2:
		ev, oldObj, newObj = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}, node(""), node(wake)
	case 3:
		ev, oldObj, newObj = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable}, node(""), node(wake)
	case 4:
		ev, oldObj = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Delete}, node(wake)
	case 5:
		ev, newObj = AssignedPodAdd, other(wake)
	case 6:
		ev, oldObj = AssignedPodDelete, other(wake)
	case 7:
		ev, oldObj, newObj = fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodLabel}, other(""), other(wake)
	case 8:
		ev, newObj = fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Add}, claim(wake)
	case 9:
		ev, oldObj, newObj = fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Update}, claim(""), claim(wake)
	default:
		ev, newObj = fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Add}, node(wake)
	}
	var check PreEnqueueCheck
	desc := fmt.Sprintf("event %s wake=%q", ev.Label(), wake)
	if h.c.intn(4) == 0 {
		limit := []int32{0, 10}[h.c.intn(2)]
		check = func(p *v1.Pod) bool { return *p.Spec.Priority <= limit }
		desc += fmt.Sprintf(" for priority <= %d", limit)
	}
	h.ours.MoveAllToActiveOrBackoffQueue(ev, oldObj, newObj, check)
	var theirCheck upstream.PreEnqueueCheck
	if check != nil {
		theirCheck = upstream.PreEnqueueCheck(check)
	}
	h.theirs.MoveAllToActiveOrBackoffQueue(quiet, ev, oldObj, newObj, theirCheck)
	return desc
}

// nominate records, clears or forgets a nomination, as preemption, the
// failure handler and assume do.
func (h *harness) nominate(p *modelPod) string {
	if h.c.intn(4) == 0 {
		h.ours.DeleteNominatedPodIfExists(p.pod)
		h.theirs.DeleteNominatedPodIfExists(p.pod)
		return fmt.Sprintf("forget the nomination of %s", p.pod.Name)
	}
	var ni *fwk.NominatingInfo
	desc := "noop"
	if h.c.intn(3) > 0 {
		ni = &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: h.oneOf("", "n1", "n2")}
		desc = fmt.Sprintf("override %q", ni.NominatedNodeName)
	}
	mine, _ := framework.NewPodInfo(p.pod)
	theirs, _ := framework.NewPodInfo(p.pod)
	h.ours.AddNominatedPod(quiet, mine, ni)
	h.theirs.AddNominatedPod(quiet, theirs, ni)
	return fmt.Sprintf("nominate %s %s", p.pod.Name, desc)
}

func (h *harness) upstreamRejectedBackoff() []string {
	var names []string
	for _, pod := range h.theirs.PodsInBackoffQ() {
		if h.gangs && pod.Spec.SchedulingGroup != nil {
			continue // its group waits in the error backoff
		}
		if pi, ok := h.theirs.GetPod(pod.Name, pod.Namespace, nil); ok && pi.UnschedulablePlugins.Len()+pi.PendingPlugins.Len() > 0 {
			names = append(names, pod.Name)
		}
	}
	return names
}

// view is what is compared of a pod.
type view struct {
	where                 event.QueueName
	attempts, unsch, errs int
	timestamp             int64
	initial               string
	gating                string
	plugins               string
	version               string
	expiry                time.Time // compared apart: upstream computes it late
}

func (v view) String() string {
	return fmt.Sprintf("%s attempts=%d unschedulable=%d errors=%d ts=%s initial=%s gating=%q plugins=%s rv=%s expiry=%s",
		v.where, v.attempts, v.unsch, v.errs, time.Unix(0, v.timestamp).UTC().Format("15:04:05.000"), v.initial, v.gating, v.plugins, v.version,
		v.expiry.Format("15:04:05.000"))
}

func plugins(u, p sets.Set[string]) string { return fmt.Sprintf("%v/%v", sets.List(u), sets.List(p)) }

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format("15:04:05.000")
}

func (h *harness) ourViews() map[string]view {
	q := h.ours
	q.mu.RLock()
	defer q.mu.RUnlock()
	views := map[string]view{}
	add := func(pi *PodInfo) {
		views[pi.Pod.Name] = view{where: pi.where, attempts: pi.Attempts, unsch: pi.UnschedulableCount, errs: pi.ConsecutiveErrorsCount,
			timestamp: pi.Timestamp.UnixNano(), initial: stamp(pi.InitialAttemptTimestamp), gating: pi.GatingPlugin,
			plugins: plugins(pi.UnschedulablePlugins, pi.PendingPlugins), version: pi.Pod.ResourceVersion, expiry: pi.BackoffExpiration}
	}
	for _, h := range []*entityHeap{q.active, q.backoff.rejected, q.backoff.errored} {
		for _, e := range h.items {
			for _, pi := range e.members() {
				add(pi)
			}
		}
	}
	for _, e := range q.unschedulable {
		for _, pi := range e.members() {
			add(pi)
		}
	}
	for _, pi := range q.incomplete.sorted() {
		add(pi)
	}
	for _, pi := range q.pending.sorted() {
		add(pi)
	}
	for _, pi := range q.flight.pods() {
		views[pi.Pod.Name] = view{where: event.InFlight, attempts: pi.Attempts}
	}
	return views
}

func (h *harness) theirViews() map[string]view {
	views := map[string]view{}
	add := func(pods []*v1.Pod, where event.QueueName) {
		for _, pod := range pods {
			pi, ok := h.theirs.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
			if !ok {
				h.t.Fatalf("upstream lists %s but cannot get it", pod.Name)
			}
			w := where
			// A group waits in the error backoff, whatever its pods' plugins.
			if w == event.BackoffQ && (pi.UnschedulablePlugins.Len()+pi.PendingPlugins.Len() == 0 || h.gangs && pod.Spec.SchedulingGroup != nil) {
				w = event.ErrorBackoffQ
			}
			views[pod.Name] = view{where: w, attempts: pi.Attempts, unsch: pi.UnschedulableCount, errs: pi.ConsecutiveErrorsCount,
				timestamp: pi.Timestamp.UnixNano(), initial: stamp(pi.InitialAttemptTimestamp), gating: pi.GatingPlugin,
				plugins: plugins(pi.UnschedulablePlugins, pi.PendingPlugins), version: pi.Pod.ResourceVersion, expiry: pi.BackoffExpiration}
		}
	}
	add(h.theirs.PodsInActiveQ(), event.ActiveQ)
	add(h.theirs.PodsInBackoffQ(), event.BackoffQ)
	add(h.theirs.UnschedulablePods(), event.Unschedulable)
	add(h.theirs.IncompletePodGroupPodsPods(), event.IncompleteGroup)
	add(h.theirs.PendingPodGroupPods(), event.PendingGroup)
	for _, pod := range h.theirs.InFlightPods() {
		views[pod.Name] = view{where: event.InFlight, attempts: h.byName(pod.Name).theirs.Attempts}
	}
	return views
}

// compare returns the differences between the two queues, "" if none.
func (h *harness) compare() string {
	mine, theirs := h.ourViews(), h.theirViews()
	var diffs []string
	for _, p := range h.pods {
		name := p.pod.Name
		m, inMine := mine[name]
		u, inTheirs := theirs[name]
		switch {
		case !inMine && !inTheirs:
			continue
		case !inMine || !inTheirs || m.where != u.where:
			diffs = append(diffs, fmt.Sprintf("%s: minisched %q, upstream %q", name, m.where, u.where))
			continue
		}
		// Upstream computes the expiry when it first needs it; it must be
		// there for a pod in backoff.
		if !u.expiry.IsZero() || u.where == event.BackoffQ || u.where == event.ErrorBackoffQ {
			if !m.expiry.Equal(u.expiry) {
				diffs = append(diffs, fmt.Sprintf("%s: expiry %s, upstream %s", name, m.expiry, u.expiry))
			}
		}
		m.expiry, u.expiry = time.Time{}, time.Time{}
		if m != u {
			diffs = append(diffs, fmt.Sprintf("%s:\n      minisched %v\n      upstream  %v", name, m, u))
		}
	}
	diffs = append(diffs, h.compareGroups()...)
	for _, node := range []string{"n1", "n2"} {
		if m, u := nominated(h.ours.NominatedPodsForNode(node)), nominated(h.theirs.NominatedPodsForNode(node)); m != u {
			diffs = append(diffs, fmt.Sprintf("nominated to %s: minisched %s, upstream %s", node, m, u))
		}
	}
	return strings.Join(diffs, "\n    ")
}

func nominated(pods []fwk.PodInfo) string {
	var s []string
	for _, pi := range pods {
		s = append(s, pi.GetPod().Name+"@"+pi.GetPod().ResourceVersion)
	}
	return fmt.Sprint(s)
}

// TestDifferential runs seeded sequences against upstream's queue.
func TestDifferential(t *testing.T) {
	const opsPerSequence = 150
	if *seedFlag != 0 {
		if *gangsFlag {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.GenericWorkload, true)
		}
		h := newHarness(t, &seeded{r: rand.New(rand.NewSource(*seedFlag)), left: opsPerSequence})
		defer h.close()
		if h.run() {
			t.Logf("seed %d: %d operations agree:\n  %s", *seedFlag, h.ops, strings.Join(h.log, "\n  "))
		}
		return
	}
	sequences := *sequencesFlag
	if sequences == 0 {
		sequences = 2000
		if testing.Short() || raceEnabled {
			sequences = 200
		}
	}
	start, ops, moves := time.Now(), 0, map[string]int{}
	for seed := int64(1); seed <= int64(sequences); seed++ {
		h := newHarness(t, &seeded{r: rand.New(rand.NewSource(seed)), left: opsPerSequence})
		ok := h.run()
		h.close()
		ops += h.ops
		// The transitions, to show what the sequences covered.
		for _, e := range h.rec.Find(func(e event.Event) bool { return e.Kind == event.KindQueue && e.Queue.From != e.Queue.To }) {
			moves[fmt.Sprintf("%s->%s", e.Queue.From, e.Queue.To)]++
		}
		if !ok {
			t.Fatalf("seed %d differs; replay: go test ./minisched/queue -run 'TestDifferential$' -seed=%d -v", seed, seed)
		}
	}
	t.Logf("%d sequences, %d operations, agree with upstream in %v", sequences, ops, time.Since(start).Round(time.Millisecond))
	for _, k := range slices.Sorted(maps.Keys(moves)) {
		t.Logf("  %-28s %d", k, moves[k])
	}

	// GenericWorkload on (it is off by default): pods come in groups too.
	t.Run("GenericWorkload=true", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.GenericWorkload, true)
		groupPops := 0
		for seed := int64(1); seed <= int64(sequences); seed++ {
			h := newHarness(t, &seeded{r: rand.New(rand.NewSource(seed)), left: opsPerSequence})
			ok := h.run()
			h.close()
			groupPops += len(h.rec.Find(func(e event.Event) bool {
				return e.Kind == event.KindQueue && e.Queue.Action == event.ActionPop && e.Queue.PodGroup != ""
			}))
			if !ok {
				t.Fatalf("seed %d differs with GenericWorkload on; replay: go test ./minisched/queue -run 'TestDifferential$' -seed=%d -gangs -v", seed, seed)
			}
		}
		t.Logf("%d sequences agree with upstream; %d pods popped with their groups", sequences, groupPops)
	})

	// SchedulerPopFromBackoffQ off (it is on by default): a quarter as many
	// sequences, so that an A/B of the gate shows upstream's queue either way.
	t.Run("SchedulerPopFromBackoffQ=false", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.SchedulerPopFromBackoffQ, false)
		for seed := int64(1); seed <= int64(max(sequences/4, 1)); seed++ {
			h := newHarness(t, &seeded{r: rand.New(rand.NewSource(seed)), left: opsPerSequence})
			ok := h.run()
			h.close()
			if !ok {
				t.Fatalf("seed %d differs with the gate off", seed)
			}
		}
	})
}

// FuzzDifferential lets the fuzzer choose the operations.
func FuzzDifferential(f *testing.F) {
	f.Add([]byte("add add pop fail pop done flush"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 2000 {
			data = data[:2000]
		}
		h := newHarness(t, &fuzzed{data: data})
		defer h.close()
		h.run()
	})
}
