// Package mirror keeps minisched's copy of a cluster in step with the real
// one, by list and watch, and never writes the real one. Nodes,
// PriorityClasses and pods follow the source: a pod the source shows
// pending is created unbound in the copy, for minisched to schedule there;
// once the real scheduler binds it, the copy's pod is annotated with the
// real node (RealNodeAnnotation), so that the dashboard can show both.
//
// Each change is applied level-based: a worker reads the source object's
// current state from the informer's cache and makes the copy match it, so
// events that come in bursts or out of order end in the same state.
package mirror

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"minisched/event"
)

// RealNodeAnnotation, on a pod of the copy, names the node the real
// scheduler bound the pod to in the source.
const RealNodeAnnotation = event.RealNodeAnnotation

// sourceUIDAnnotation, on a pod the mirror created, is the source pod's
// uid: a pod deleted and created again under its name is another pod.
const sourceUIDAnnotation = "minisched.io/source-uid"

// workers apply changes in parallel: a burst of pods in the source is
// created in the copy at the apiserver's pace, not one round trip's.
const workers = 8

// Options say what to follow.
type Options struct {
	// Source reads the real cluster; give it a read-only transport
	// (snapshot.ReadOnly).
	Source kubernetes.Interface
	// Copy writes minisched's embedded cluster.
	Copy kubernetes.Interface
	// Namespaces, when set, are the only namespaces whose pods are
	// followed; Selector picks the pods by label.
	Namespaces []string
	Selector   string
	// MaxNodes and MaxPods bound the copy, as --max-nodes and --max-pods
	// bound the cluster: a change past them fails (and says so) until
	// room is made. Zero: no bound.
	MaxNodes, MaxPods int
}

// Status says how far behind the copy is.
type Status struct {
	// Synced is true once the source's first lists are in.
	Synced bool `json:"synced"`
	// Behind counts the changes seen and not yet applied; Lag is how long
	// the oldest of them has waited (0 when none waits).
	Behind int           `json:"behind"`
	Lag    time.Duration `json:"lagNanos"`
	// Applied counts the changes applied; Errors the failures (a change
	// that failed is tried again, a watch that broke starts again);
	// LastError says the newest, until a change is applied after it.
	Applied   int64  `json:"applied"`
	Errors    int64  `json:"errors"`
	LastError string `json:"lastError,omitempty"`
	// Stopped is true after Stop (a reset ends the mirror).
	Stopped bool `json:"stopped"`
}

// key names one source object: kind, namespace/name.
type key struct {
	kind string // node, pod or priorityclass
	name string
}

// Mirror follows one source cluster.
type Mirror struct {
	opts     Options
	selector labels.Selector
	// The source's caches: factories holds one for nodes and
	// PriorityClasses, and one per namespace followed for pods.
	factories []informers.SharedInformerFactory
	nodes     corelisters.NodeLister
	pods      []corelisters.PodLister
	classes   schedulinglisters.PriorityClassLister
	// The copy's own caches: a change is compared with them, and only
	// what differs is written (a stale cache makes a write fail, and the
	// change is tried again). The counts follow them, for the bounds.
	copyFactory                 informers.SharedInformerFactory
	copyNodes                   corelisters.NodeLister
	copyPods                    corelisters.PodLister
	copyClasses                 schedulinglisters.PriorityClassLister
	copyNodeCount, copyPodCount atomic.Int64

	queue  workqueue.TypedRateLimitingInterface[key]
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu sync.Mutex
	// since holds, per key waiting, when it was first seen.
	since map[key]time.Time
	// pendingSeen holds the pods the source showed pending: the copy
	// creates them unbound even when the real scheduler bound them before
	// a worker got to them, so that minisched decides too.
	pendingSeen map[string]bool
	status      Status
}

// Start begins following the source; it returns once the source's first
// lists are in (or fail: a refused permission says which), and the copy
// then converges in the background. Stop ends it.
func Start(ctx context.Context, opts Options) (*Mirror, error) {
	selector, err := labels.Parse(opts.Selector)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %w", opts.Selector, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &Mirror{opts: opts, selector: selector, cancel: cancel, since: map[key]time.Time{}, pendingSeen: map[string]bool{},
		// Per change only: a write that met a cache not yet updated is
		// tried again within milliseconds, and a burst of them is not held
		// back by a budget shared with every other change.
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[key](5*time.Millisecond, 30*time.Second))}
	m.copyFactory = informers.NewSharedInformerFactory(opts.Copy, 0)
	m.copyNodes = m.copyFactory.Core().V1().Nodes().Lister()
	m.copyPods = m.copyFactory.Core().V1().Pods().Lister()
	m.copyClasses = m.copyFactory.Scheduling().V1().PriorityClasses().Lister()
	for inf, n := range map[cache.SharedIndexInformer]*atomic.Int64{
		m.copyFactory.Core().V1().Nodes().Informer(): &m.copyNodeCount,
		m.copyFactory.Core().V1().Pods().Informer():  &m.copyPodCount,
	} {
		if _, err := inf.AddEventHandler(counter(n)); err != nil {
			cancel()
			return nil, err
		}
	}
	m.copyFactory.Start(ctx.Done())
	for typ, ok := range m.copyFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("reading the copy's %v: %w", typ, ctx.Err())
		}
	}
	shared := informers.NewSharedInformerFactory(opts.Source, 0)
	nodes := shared.Core().V1().Nodes()
	classes := shared.Scheduling().V1().PriorityClasses()
	m.nodes, m.classes = nodes.Lister(), classes.Lister()
	m.factories = []informers.SharedInformerFactory{shared}
	infs := []cache.SharedIndexInformer{nodes.Informer(), classes.Informer()}
	kinds := []string{"node", "priorityclass"}
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(opts.Source, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
		pods := f.Core().V1().Pods()
		m.pods = append(m.pods, pods.Lister())
		m.factories = append(m.factories, f)
		infs = append(infs, pods.Informer())
		kinds = append(kinds, "pod")
	}
	for i, inf := range infs {
		if _, err := inf.AddEventHandler(m.handler(kinds[i])); err != nil {
			cancel()
			return nil, err
		}
	}
	// A refused list or watch would be retried for ever: the first one
	// ends the start, naming what was refused.
	refused := make(chan error, 1)
	onError := func(_ *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			select {
			case refused <- err:
			default:
			}
		}
		// Later, a source that went away is said, not hidden behind
		// "in step": the reflector tries again meanwhile.
		m.mu.Lock()
		m.status.Errors++
		m.status.LastError = "watching the source: " + err.Error()
		m.mu.Unlock()
	}
	var synced []cache.InformerSynced
	for _, inf := range infs {
		if err := inf.SetWatchErrorHandler(onError); err != nil {
			cancel()
			return nil, err
		}
		synced = append(synced, inf.HasSynced)
	}
	for _, f := range m.factories {
		f.Start(ctx.Done())
	}
	listed := make(chan bool, 1)
	go func() { listed <- cache.WaitForCacheSync(ctx.Done(), synced...) }()
	select {
	case err := <-refused:
		cancel()
		return nil, fmt.Errorf("following the source cluster: %w", err)
	case ok := <-listed:
		if !ok {
			cancel()
			return nil, fmt.Errorf("following the source cluster: %w", ctx.Err())
		}
	}
	m.mu.Lock()
	m.status.Synced = true
	m.mu.Unlock()
	for range workers {
		m.done.Add(1)
		go func() {
			defer m.done.Done()
			for m.next(ctx) {
			}
		}()
	}
	go func() {
		<-ctx.Done()
		m.queue.ShutDown()
	}()
	return m, nil
}

// Stop ends the mirror and waits for its workers. The copy keeps what it
// has.
func (m *Mirror) Stop() {
	m.cancel()
	m.queue.ShutDown()
	m.done.Wait()
	for _, f := range append(m.factories, m.copyFactory) {
		f.Shutdown()
	}
	m.mu.Lock()
	m.status.Stopped = true
	m.mu.Unlock()
}

// Status says how far behind the copy is.
func (m *Mirror) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.status
	s.Behind = len(m.since)
	now := time.Now()
	for _, t := range m.since {
		s.Lag = max(s.Lag, now.Sub(t))
	}
	return s
}

func (m *Mirror) handler(kind string) cache.ResourceEventHandler {
	add := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		name, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		k := key{kind: kind, name: name}
		m.mu.Lock()
		if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName == "" {
			m.pendingSeen[name] = true
		}
		if _, waiting := m.since[k]; !waiting {
			m.since[k] = time.Now()
		}
		m.mu.Unlock()
		m.queue.Add(k)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    add,
		UpdateFunc: func(_, obj any) { add(obj) },
		DeleteFunc: add,
	}
}

// next applies one change; false once the queue is shut down.
func (m *Mirror) next(ctx context.Context) bool {
	k, quit := m.queue.Get()
	if quit {
		return false
	}
	defer m.queue.Done(k)
	var err error
	switch k.kind {
	case "node":
		err = m.node(ctx, k.name)
	case "pod":
		err = m.pod(ctx, k.name)
	case "priorityclass":
		err = m.priorityClass(ctx, k.name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		m.status.Errors++
		m.status.LastError = fmt.Sprintf("%s %s: %v", k.kind, k.name, err)
		m.queue.AddRateLimited(k)
		return true
	}
	m.status.Applied++
	// A change applied says the source answers again.
	m.status.LastError = ""
	delete(m.since, k)
	m.queue.Forget(k)
	return true
}

// counter keeps n at the number of objects an informer holds.
func counter(n *atomic.Int64) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { n.Add(1) },
		DeleteFunc: func(any) { n.Add(-1) },
	}
}

// room refuses a create past the bound.
func room(n *atomic.Int64, limit int, what string) error {
	if have := n.Load(); limit > 0 && have >= int64(limit) {
		return fmt.Errorf("the copy holds %d %s, the limit (--max-%s %d): not copied until there is room", have, what, what, limit)
	}
	return nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
