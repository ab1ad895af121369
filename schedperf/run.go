package schedperf

// Running a planned workload against a cluster: the ops in order, each
// createPods op waiting until its pods are scheduled (unless told not to),
// and the measured ops sampled as upstream's throughput collector samples.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Options are what a run writes with and how long it waits.
type Options struct {
	Client kubernetes.Interface
	// RESTConfig is the same cluster's, for createAny, which writes
	// objects of any kind.
	RESTConfig *rest.Config
	// Timeout bounds each wait for pods to be scheduled or deleted;
	// upstream's is 10 minutes.
	Timeout time.Duration
	// Progress, when set, hears what each op does as it starts.
	Progress func(string)
}

// Result is what a run measured: a Measure for each window the workload
// collects metrics in (a createPods with collectMetrics, or
// startCollectingMetrics to stopCollectingMetrics).
type Result struct {
	Measures []Measure
}

// Measure is one measured window.
type Measure struct {
	Name string `json:"name"`
	// Pods were created in the window, Placed were scheduled by its end.
	Pods    int     `json:"pods"`
	Placed  int     `json:"placed"`
	Seconds float64 `json:"seconds"`
	// PodsPerSecond is Placed over Seconds: the window's whole rate.
	PodsPerSecond float64 `json:"podsPerSecond"`
	// Throughput is upstream's SchedulingThroughput: pods scheduled per
	// second, sampled every second from the first pod scheduled; nil when
	// the window was too short to take a sample (upstream warns so).
	Throughput *Throughput `json:"throughput,omitempty"`
	// Rates are those samples in the order they were taken: pods/s over
	// time.
	Rates []float64 `json:"rates,omitempty"`
	// CPUPerPod is the process's CPU in the window over the pods placed,
	// in milliseconds; APICalls the requests the apiserver served in it,
	// per pod placed (CallsPer).
	CPUPerPod float64 `json:"cpuPerPod"`
	APICalls  string  `json:"apiCalls"`
	// Backlog is the pods a steady state keeps pending throughout: made,
	// and not to be placed by the window's end.
	Backlog int `json:"backlog,omitempty"`
}

// Throughput is upstream's summary of the samples, in pods/s.
type Throughput struct {
	Average float64 `json:"average"`
	Perc50  float64 `json:"perc50"`
	Perc90  float64 `json:"perc90"`
	Perc95  float64 `json:"perc95"`
	Perc99  float64 `json:"perc99"`
	Samples int     `json:"samples"`
}

// Run runs the ops on the cluster of o.Client, against the scheduler that
// watches it.
func Run(ctx context.Context, tc *TestCase, ops []any, o Options) (*Result, error) {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e := &executor{tc: tc, o: o, expected: map[string]int{}, changed: make(chan struct{}, 1)}
	factory := informers.NewSharedInformerFactory(o.Client, 0)
	e.pods = factory.Core().V1().Pods().Informer()
	if _, err := e.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { e.signal() },
		UpdateFunc: func(any, any) { e.signal() },
		DeleteFunc: func(any) { e.signal() },
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	// Shutdown waits for the informer, which stops with ctx.
	defer func() { cancel(); factory.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), e.pods.HasSynced) {
		return nil, fmt.Errorf("the pod informer did not sync: %w", ctx.Err())
	}
	for i, op := range ops {
		if err := e.run(ctx, i, op); err != nil {
			e.stopSampling()
			e.stopBackground()
			return nil, fmt.Errorf("op %d (%s): %w", i, opcode(op), err)
		}
	}
	if e.sampling != nil {
		e.finish()
	}
	// What runs in the background ends with the workload, as upstream's.
	if err := e.stopBackground(); err != nil {
		return nil, err
	}
	return &Result{Measures: e.measures}, nil
}

type executor struct {
	tc *TestCase
	o  Options
	// expected is how many pods each namespace is to have scheduled, as
	// upstream's numPodsScheduledPerNamespace.
	expected map[string]int
	pods     cache.SharedIndexInformer
	changed  chan struct{}
	nodes    int // nodes made so far, for unique names
	measures []Measure
	// sampling is the window being measured.
	sampling *sampler
	// any writes createAny's objects; nil until one runs.
	any *anyClient
	// background stops each op left running in the background (churn,
	// deletes that skip waiting); running waits for them, and failed is
	// the first failure of one.
	background []context.CancelFunc
	running    sync.WaitGroup
	failed     atomic.Pointer[error]
}

func opcode(op any) string {
	return strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", op), "*schedperf."), "Op")
}

func (e *executor) run(ctx context.Context, index int, op any) error {
	switch o := op.(type) {
	case *createNodesOp:
		e.o.Progress(fmt.Sprintf("creating %d nodes", o.Count))
		return e.createNodes(ctx, index, o)
	case *createNamespacesOp:
		e.o.Progress(fmt.Sprintf("creating %d namespaces", o.Count))
		for i := range o.Count {
			ns := &v1.Namespace{}
			if o.NamespaceTemplatePath != nil {
				if err := render(e.tc.File(*o.NamespaceTemplatePath), map[string]any{"Index": i, "Count": o.Count}, ns); err != nil {
					return err
				}
			}
			ns.Name = fmt.Sprintf("%s-%d", o.Prefix, i)
			if _, err := e.o.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
				return err
			}
			if _, ok := e.expected[ns.Name]; !ok {
				e.expected[ns.Name] = 0
			}
		}
		return nil
	case *createPodsOp:
		return e.createPods(ctx, index, o)
	case *barrierOp:
		attempted := o.StageRequirement == "Attempted"
		e.o.Progress(map[bool]string{false: "waiting for every pod to be scheduled", true: "waiting for every pod to be tried"}[attempted])
		namespaces := o.Namespaces
		if len(namespaces) == 0 {
			namespaces = sortedKeys(e.expected)
		}
		for _, ns := range namespaces {
			want, ok := e.expected[ns]
			if !ok {
				return fmt.Errorf("unknown namespace %s", ns)
			}
			if err := e.waitPods(ctx, ns, labels.SelectorFromSet(o.LabelSelector), want, attempted); err != nil {
				return err
			}
		}
		// Upstream forgets the pods a barrier saw scheduled, not the ones
		// it saw tried: they are still to be scheduled.
		if attempted {
			return nil
		}
		if len(o.Namespaces) == 0 {
			e.expected = map[string]int{}
		}
		for _, ns := range o.Namespaces {
			delete(e.expected, ns)
		}
		return nil
	case *sleepOp:
		d, _ := time.ParseDuration(o.Duration)
		e.o.Progress("sleeping " + d.String())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
		return nil
	case *deletePodsOp:
		return e.deletePods(ctx, o)
	case *createAnyOp:
		e.o.Progress("creating from " + o.TemplatePath)
		return e.createAny(ctx, o)
	case *updateAnyOp:
		e.o.Progress("updating from " + o.TemplatePath)
		return e.updateAny(ctx, o)
	case *churnOp:
		e.o.Progress(fmt.Sprintf("churning (%s) from %s in the background", o.Mode, strings.Join(o.TemplatePaths, ", ")))
		return e.churn(ctx, index, o)
	case *allocResourceClaimsOp:
		return e.allocResourceClaims(ctx, o)
	case *createPodGroupsOp:
		e.o.Progress(fmt.Sprintf("creating %d PodGroups", o.Count))
		return e.createPodGroups(ctx, o)
	case *startCollectingMetricsOp:
		if e.sampling != nil {
			return fmt.Errorf("metrics are collected already")
		}
		e.startSampling(cmp.Or(o.Name, fmt.Sprintf("op %d", index)), o.Namespaces, labels.SelectorFromSet(o.LabelSelector), -1)
		return nil
	case *stopCollectingMetricsOp:
		if e.sampling == nil {
			return fmt.Errorf("no metrics are collected")
		}
		e.finish()
		return nil
	}
	return fmt.Errorf("op %T is not interpreted", op)
}

// ensureNamespace creates an op's namespace the first time one names it,
// as upstream's runner does (createNamespaceIfNotPresent).
func (e *executor) ensureNamespace(ctx context.Context, ns string) error {
	if _, ok := e.expected[ns]; ok {
		return nil
	}
	_, err := e.o.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	e.expected[ns] = 0
	return nil
}

func (e *executor) createPods(ctx context.Context, index int, o *createPodsOp) error {
	ns := fmt.Sprintf("namespace-%d", index)
	if o.Namespace != nil {
		ns = *o.Namespace
	}
	if err := e.ensureNamespace(ctx, ns); err != nil {
		return err
	}
	pods, err := e.renderPods(o, o.Count)
	if err != nil {
		return err
	}
	if o.CollectMetrics {
		if e.sampling != nil {
			return fmt.Errorf("metrics collection is overlapping")
		}
		pods := o.Count
		if o.SteadyState {
			pods = -1
		}
		e.startSampling(fmt.Sprintf("op %d", index), []string{ns}, labels.Everything(), pods)
	}
	if o.SteadyState {
		if err := e.createPodsSteadily(ctx, ns, o, pods); err != nil {
			return err
		}
		if o.CollectMetrics {
			e.finish()
		}
		return nil
	}
	volumes, err := e.volumeTemplates(o)
	if err != nil {
		return err
	}
	e.o.Progress(fmt.Sprintf("creating %d pods in %s", o.Count, ns))
	if err := parallel(ctx, len(pods), func(i int) error {
		if volumes != nil {
			if err := volumes.bind(ctx, e, ns, i, pods[i]); err != nil {
				return err
			}
		}
		_, err := e.o.Client.CoreV1().Pods(ns).Create(ctx, pods[i], metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	// As upstream's runner: the pods left to be scheduled count for the
	// barriers; otherwise the op waits for as many pods of the namespace,
	// any of them, to be scheduled.
	if o.SkipWaitToCompletion {
		e.expected[ns] += o.Count
		return nil
	}
	if err := e.waitPods(ctx, ns, labels.Everything(), o.Count, false); err != nil {
		return err
	}
	if o.CollectMetrics {
		e.finish()
	}
	return nil
}

// renderPods makes count pods from the op's template (or the test case's,
// or upstream's base pod), with the signature label upstream's runner
// gives each batch.
func (e *executor) renderPods(o *createPodsOp, count int) ([]*v1.Pod, error) {
	template := o.PodTemplatePath
	if template == nil {
		template = e.tc.DefaultPodTemplatePath
	}
	pods := make([]*v1.Pod, 0, count)
	for i := range count {
		p := basePod()
		if template != nil {
			p = &v1.Pod{}
			env := maps.Clone(o.TemplateParams)
			if env == nil {
				env = map[string]any{}
			}
			env["Index"], env["Count"] = i, count
			if err := render(e.tc.File(*template), env, p); err != nil {
				return nil, err
			}
		}
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels["signature"] = fmt.Sprintf("signature-label-%d", i/o.SignatureBatchSize)
		pods = append(pods, p)
	}
	return pods, nil
}

// deletePods deletes the pods of a namespace that the selector matches,
// as upstream's runner does: one by one at deletePodsPerSecond, or all in
// one request, with the apiserver's default grace; in the background when
// told to skip waiting. As upstream's, it does not wait for the pods to be
// gone.
func (e *executor) deletePods(ctx context.Context, o *deletePodsOp) error {
	sel := labels.SelectorFromSet(o.LabelSelector)
	var names []string
	for _, obj := range e.pods.GetStore().List() {
		p := obj.(*v1.Pod)
		if p.Namespace == o.Namespace && sel.Matches(labels.Set(p.Labels)) {
			names = append(names, p.Name)
		}
	}
	e.o.Progress(fmt.Sprintf("deleting %d pods in %s", len(names), o.Namespace))
	pods := e.o.Client.CoreV1().Pods(o.Namespace)
	del := func(ctx context.Context) error {
		if o.DeletePodsPerSecond == 0 {
			return pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel.String()})
		}
		tick := time.NewTicker(time.Second / time.Duration(o.DeletePodsPerSecond))
		defer tick.Stop()
		for _, name := range names {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting pod %s/%s: %w", o.Namespace, name, err)
			}
		}
		return nil
	}
	if o.SkipWaitToCompletion {
		e.inBackground(ctx, del)
		return nil
	}
	return del(ctx)
}

func (e *executor) signal() {
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

// waitPods waits until want pods of the namespace that sel matches are
// scheduled or, when attempted, at least tried once: scheduled, or with a
// PodScheduled condition, as upstream's isAttempted reads it.
func (e *executor) waitPods(ctx context.Context, ns string, sel labels.Selector, want int, attempted bool) error {
	what := map[bool]string{false: "scheduled", true: "tried"}[attempted]
	return e.wait(ctx, fmt.Sprintf("%d pods of %s %s", want, ns, what), func() bool {
		n := 0
		for _, obj := range e.pods.GetStore().List() {
			p := obj.(*v1.Pod)
			if p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) && (p.Spec.NodeName != "" || attempted && tried(p)) {
				n++
			}
		}
		return n >= want
	})
}

func tried(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return true
		}
	}
	return false
}

// wait waits for the informer's news until done holds, up to the timeout.
func (e *executor) wait(ctx context.Context, what string, done func() bool) error {
	timeout := time.NewTimer(e.o.Timeout)
	defer timeout.Stop()
	// Pods that change before the first check wake the next.
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return fmt.Errorf("waited %s for %s", e.o.Timeout, what)
		case <-e.changed:
		}
	}
	return nil
}

// sampler is upstream's throughput collector: every second, the pods
// scheduled since the last sample over the time since it, from the first
// sample that finds a pod scheduled. It counts the scheduled pods the
// informer's store holds, not its handlers' events as upstream's does: the
// handlers may lag behind the store, which the waits read. The pods a
// steady state deletes once scheduled are remembered, so that they still
// count.
type sampler struct {
	name       string
	namespaces map[string]bool
	selector   labels.Selector
	// pods is how many pods the window creates; -1 when it counts the pods
	// made in it (the ops between startCollectingMetrics and
	// stopCollectingMetrics, a steady state).
	pods  int
	store cache.Store
	// base is the matching pods scheduled before the window, existing
	// all the matching pods then.
	base, existing int
	// backlog is the pods a steady state keeps pending throughout.
	backlog int
	begun   time.Time
	cpu     time.Duration
	calls   map[string]float64
	stop    chan struct{}
	done    sync.WaitGroup
	samples []float64
	mu      sync.Mutex
	deleted map[types.UID]bool // guarded by mu
}

// scheduled is how many pods the window has seen scheduled.
func (s *sampler) scheduled() int {
	n, _ := s.count()
	return n - s.base
}

// watches says whether the window counts p.
func (s *sampler) watches(p *v1.Pod) bool {
	return (len(s.namespaces) == 0 || s.namespaces[p.Namespace]) && s.selector.Matches(labels.Set(p.Labels))
}

// count is how many pods the window watches are scheduled, and how many
// there are, the deleted ones included.
func (s *sampler) count() (scheduled, all int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, obj := range s.store.List() {
		p := obj.(*v1.Pod)
		if s.deleted[p.UID] || !s.watches(p) {
			continue
		}
		all++
		if p.Spec.NodeName != "" {
			scheduled++
		}
	}
	return scheduled + len(s.deleted), all + len(s.deleted)
}

func (e *executor) startSampling(name string, namespaces []string, sel labels.Selector, pods int) {
	s := &sampler{name: name, namespaces: map[string]bool{}, selector: sel, pods: pods, store: e.pods.GetStore(), begun: time.Now(),
		cpu: ProcessCPU(), calls: APICalls(), stop: make(chan struct{}), deleted: map[types.UID]bool{}}
	for _, ns := range namespaces {
		s.namespaces[ns] = true
	}
	s.base, s.existing = s.count()
	e.sampling = s
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var last int
		var lastAt time.Time
		started, skipped := false, 0
		for {
			select {
			case <-s.stop:
				return
			case now := <-tick.C:
				n := s.scheduled()
				switch {
				case n == 0:
				case !started:
					started, last, lastAt = true, n, now
				case n == last:
					skipped++
				default:
					rate := float64(n-last) / now.Sub(lastAt).Seconds()
					for range skipped + 1 {
						s.samples = append(s.samples, rate)
					}
					last, lastAt, skipped = n, now, 0
				}
			}
		}
	}()
}

func (e *executor) stopSampling() *sampler {
	s := e.sampling
	e.sampling = nil
	if s != nil {
		close(s.stop)
		s.done.Wait()
	}
	return s
}

// finish ends the measured window and keeps its figures.
func (e *executor) finish() {
	s := e.stopSampling()
	m := Measure{Name: s.name, Pods: s.pods, Placed: s.scheduled(), Backlog: s.backlog, Seconds: time.Since(s.begun).Seconds()}
	if s.pods < 0 {
		// A window of startCollectingMetrics, or a steady state: the pods
		// made in it.
		_, all := s.count()
		m.Pods = all - s.existing
	}
	if m.Seconds > 0 {
		m.PodsPerSecond = float64(m.Placed) / m.Seconds
	}
	if m.Placed > 0 {
		m.CPUPerPod = float64((ProcessCPU() - s.cpu).Microseconds()) / 1000 / float64(m.Placed)
		m.APICalls = CallsPer(s.calls, settledCalls(s.calls, m.Placed), float64(m.Placed), "pod")
	}
	if n := len(s.samples); n > 0 {
		m.Rates = slices.Clone(s.samples)
		sort.Float64s(s.samples)
		sum := 0.0
		for _, v := range s.samples {
			sum += v
		}
		perc := func(p int) float64 { return s.samples[int(math.Ceil(float64(n*p)/100))-1] }
		m.Throughput = &Throughput{Average: sum / float64(n), Perc50: perc(50), Perc90: perc(90), Perc95: perc(95), Perc99: perc(99), Samples: n}
	}
	e.measures = append(e.measures, m)
}

// settledCalls counts the apiserver's requests once it has counted the
// window's bindings: it counts a request when it has answered it, and the
// informer may see the pod bound a moment before (at most a second more).
func settledCalls(before map[string]float64, placed int) map[string]float64 {
	const binding = "POST pods/binding"
	after := APICalls()
	for deadline := time.Now().Add(time.Second); after[binding]-before[binding] < float64(placed) && time.Now().Before(deadline); after = APICalls() {
		time.Sleep(5 * time.Millisecond)
	}
	return after
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parallel runs f for 0..n-1 with a few writers at once, as upstream's
// runner creates objects; the first error stops the rest.
func parallel(ctx context.Context, n int, f func(i int) error) error {
	const workers = 16
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
