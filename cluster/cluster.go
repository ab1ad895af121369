// Package cluster is minisched's side of the cluster it shows: it watches
// nodes and pods and reports every change as an event, and it creates
// objects the way a person expects of a teaching cluster (a node gets its
// status and defaults, a pod no grace period), within limits and, on a
// cluster minisched shares, labelled as its own. The REST API and scenarios
// both change the cluster through it.
package cluster

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"minisched/event"
	"minisched/seen"
)

// Writes says what minisched may change in the cluster. On a real cluster
// it reads by default (WritesNone); with --allow-writes it may create
// nodes, pods and PriorityClasses, marks each with OwnerLabel and deletes
// only what carries the label (WritesOwned). The embedded cluster is
// minisched's own (WritesAll).
type Writes int

const (
	WritesAll Writes = iota
	WritesOwned
	WritesNone
)

// OwnerLabel marks the objects minisched created on a cluster it shares.
const OwnerLabel = "minisched.dev/created-by"

// BuiltInLabel marks the classes the embedded cluster starts with (the
// default StorageClass, the built-in DeviceClass): a copy of another
// cluster gets that cluster's own classes instead.
const BuiltInLabel = "minisched.io/built-in"

// Options configure a Cluster.
type Options struct {
	// Client reaches the apiserver; nil gives a cluster with nothing in it
	// (for tests of the HTTP side alone).
	Client clientset.Interface
	// Observer receives a node or pod event for every change, and the reset
	// event.
	Observer event.Observer
	Writes   Writes
	// MaxNodes and MaxPods bound what Create may add. Zero: 5,000 nodes and
	// 50,000 pods.
	MaxNodes, MaxPods int
	// Namespaces, HostAccess and SchedulerName hold what minisched creates
	// on a cluster it shares (WritesOwned): see CheckWrite. Namespaces
	// default to "default".
	Namespaces    []string
	HostAccess    bool
	SchedulerName string
	// MaxMetaBytes bounds the labels, annotations and taints of all nodes
	// and pods together, in bytes. Zero: DefaultMaxMetaBytes.
	MaxMetaBytes int64
	// NodeAllocatable is what a node gets for each resource its manifest
	// does not state: a simulated kubelet reports what the node says.
	// Nil: DefaultNodeAllocatable().
	NodeAllocatable v1.ResourceList
	// Metadata lets Reset delete every kind of object the controllers
	// make, and clear finalizers; nil: Reset deletes pods, nodes and
	// PriorityClasses only.
	Metadata metadata.Interface
	// Pause, when set, stops what acts on the cluster beside the scheduler
	// (the controllers, the kubelets) during a reset, and returns what
	// starts it again: the operations' owner's (exclusive.Owner.Pause).
	Pause func() (resume func() error)
	// Hold, when set, stops the scheduler before its next pod during a
	// reset, and returns what lets it go on: the pods on their way out are
	// not tried again meanwhile (minisched.Service.Hold).
	Hold func() (release func())
}

// DefaultNodeAllocatable is a modest machine: 4 CPUs, 16Gi, 110 pods.
func DefaultNodeAllocatable() v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
}

// Cluster watches and changes the cluster.
type Cluster struct {
	opts    Options
	factory informers.SharedInformerFactory
	nodes   corelisters.NodeLister
	pods    corelisters.PodLister
	// nodeCount and podCount follow the watch, so that a limit check does
	// not list 50,000 pods on every create.
	nodeCount, podCount atomic.Int64
	// metaBytes follows the watch too: MetaBytes of every node and pod.
	metaBytes atomic.Int64
	// seen records the nodes and pods whose events were observed.
	seen   seen.Versions
	synced atomic.Bool
	cancel context.CancelFunc
	stop   sync.Once
	// onReset holds what must end before a reset empties the cluster.
	resetMu sync.Mutex
	onReset []func()
}

// OnReset registers f to run at the start of every Reset: what follows the
// cluster as it is (a mirror, the copy's banner) ends with it.
func (c *Cluster) OnReset(f func()) {
	c.resetMu.Lock()
	defer c.resetMu.Unlock()
	c.onReset = append(c.onReset, f)
}

// New returns a Cluster; Start begins watching.
func New(opts Options) *Cluster {
	if opts.Observer == nil {
		opts.Observer = event.Discard
	}
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = 5000
	}
	if opts.MaxPods <= 0 {
		opts.MaxPods = 50000
	}
	if len(opts.Namespaces) == 0 {
		opts.Namespaces = []string{"default"}
	}
	if opts.MaxMetaBytes <= 0 {
		opts.MaxMetaBytes = DefaultMaxMetaBytes
	}
	if opts.NodeAllocatable == nil {
		opts.NodeAllocatable = DefaultNodeAllocatable()
	}
	c := &Cluster{opts: opts}
	if opts.Client != nil {
		c.factory = informers.NewSharedInformerFactory(opts.Client, 0)
		c.nodes = c.factory.Core().V1().Nodes().Lister()
		c.pods = c.factory.Core().V1().Pods().Lister()
	}
	return c
}

// Start watches nodes and pods, apart from the scheduler's informers, so
// that the dashboard shows pods of every scheduler name and survives a
// scheduler restart. It returns once the caches have synced.
func (c *Cluster) Start(ctx context.Context) error {
	if c.factory == nil {
		c.synced.Store(true)
		return nil
	}
	ctx, c.cancel = context.WithCancel(ctx)
	if _, err := c.factory.Core().V1().Nodes().Informer().AddEventHandler(c.seen.Track("Node", reporter(c.opts.Observer, &c.nodeCount, &c.metaBytes, nodeEvent))); err != nil {
		return fmt.Errorf("watching nodes: %w", err)
	}
	if _, err := c.factory.Core().V1().Pods().Informer().AddEventHandler(c.seen.Track("Pod", reporter(c.opts.Observer, &c.podCount, &c.metaBytes, podEvent))); err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}
	c.factory.Start(ctx.Done())
	for typ, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("watching %v: cache did not sync", typ)
		}
	}
	c.synced.Store(true)
	return nil
}

// Stop ends the watch.
func (c *Cluster) Stop() {
	c.stop.Do(func() {
		if c.cancel != nil {
			c.cancel()
			c.factory.Shutdown()
		}
	})
}

// Synced says whether the watch's caches have synced.
func (c *Cluster) Synced() bool { return c.synced.Load() }

// Writes says what minisched may change.
func (c *Cluster) Writes() Writes { return c.opts.Writes }

// Limits are the most nodes and pods the cluster may hold (--max-nodes,
// --max-pods); a snapshot loaded whole is held to them too.
func (c *Cluster) Limits() (nodes, pods int) { return c.opts.MaxNodes, c.opts.MaxPods }

// reporter turns an informer's notifications into events and keeps count;
// a deletion seen only as a tombstone reports the object's last known
// state.
func reporter[T any](o event.Observer, count, metaBytes *atomic.Int64, toEvent func(event.ChangeAction, T) event.Event) cache.ResourceEventHandler {
	report := func(action event.ChangeAction, obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if typed, ok := obj.(T); ok {
			e := toEvent(action, typed)
			e.Time = time.Now()
			o.Observe(e)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { count.Add(1); metaBytes.Add(MetaBytes(obj)); report(event.Added, obj) },
		UpdateFunc: func(old, obj any) {
			metaBytes.Add(MetaBytes(obj) - MetaBytes(old))
			report(event.Updated, obj)
		},
		DeleteFunc: func(obj any) {
			count.Add(-1)
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				metaBytes.Add(-MetaBytes(t.Obj))
			} else {
				metaBytes.Add(-MetaBytes(obj))
			}
			report(event.Deleted, obj)
		},
	}
}

func nodeEvent(action event.ChangeAction, node *v1.Node) event.Event {
	return event.Event{Kind: event.KindNode, Node: &event.NodeChange{Action: action, Node: event.SummarizeNode(node)}}
}

func podEvent(action event.ChangeAction, pod *v1.Pod) event.Event {
	return event.Event{Kind: event.KindPod, Pod: event.RefOf(pod), PodChange: &event.PodChange{Action: action, Pod: event.SummarizePod(pod)}}
}

// Seen says whether the cluster's watch has reported the node or pod
// (kind "Node" or "Pod") at resourceVersion rv or later to the observer;
// with rv "", its deletion. With no watch there is nothing to wait for.
func (c *Cluster) Seen(kind, namespace, name, rv string) bool {
	return c.factory == nil || c.seen.Seen(kind, namespace, name, rv)
}

// Summaries lists the current nodes and pods, sorted by name, for a
// snapshot.
func (c *Cluster) Summaries() ([]event.NodeSummary, []event.PodSummary) {
	nodes, pods := []event.NodeSummary{}, []event.PodSummary{}
	for _, n := range c.Nodes() {
		nodes = append(nodes, event.SummarizeNode(n))
	}
	for _, p := range c.Pods("") {
		pods = append(pods, event.SummarizePod(p))
	}
	return nodes, pods
}

// Nodes lists the watched nodes, sorted by name.
func (c *Cluster) Nodes() []*v1.Node {
	if c.factory == nil {
		return nil
	}
	nodes, _ := c.nodes.List(labels.Everything())
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes
}

// Pods lists the watched pods of a namespace (all when empty), sorted by
// namespace and name.
func (c *Cluster) Pods(namespace string) []*v1.Pod {
	if c.factory == nil {
		return nil
	}
	pods, _ := c.pods.Pods(namespace).List(labels.Everything())
	sort.Slice(pods, func(i, j int) bool {
		return pods[i].Namespace < pods[j].Namespace || pods[i].Namespace == pods[j].Namespace && pods[i].Name < pods[j].Name
	})
	return pods
}
