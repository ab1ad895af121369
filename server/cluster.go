package server

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"minisched/minisched/event"
)

// clusterWatcher follows nodes and pods for the dashboard: it reports every
// change as an event and lists the current objects for snapshots. It is the
// server's own view, apart from the scheduler's, so the dashboard shows pods
// of every scheduler name and survives a scheduler restart.
type clusterWatcher struct {
	factory  informers.SharedInformerFactory
	nodes    corelisters.NodeLister
	pods     corelisters.PodLister
	observer event.Observer
	ready    atomic.Bool
	cancel   context.CancelFunc
	once     sync.Once
}

func newClusterWatcher(client clientset.Interface, observer event.Observer) *clusterWatcher {
	w := &clusterWatcher{observer: observer}
	if client == nil {
		return w
	}
	w.factory = informers.NewSharedInformerFactory(client, 0)
	w.nodes = w.factory.Core().V1().Nodes().Lister()
	w.pods = w.factory.Core().V1().Pods().Lister()
	return w
}

func (w *clusterWatcher) start(ctx context.Context) error {
	if w.factory == nil {
		return nil
	}
	ctx, w.cancel = context.WithCancel(ctx)
	nodeHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.node(event.Added, obj) },
		UpdateFunc: func(_, obj any) { w.node(event.Updated, obj) },
		DeleteFunc: func(obj any) { w.node(event.Deleted, obj) },
	}
	podHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.pod(event.Added, obj) },
		UpdateFunc: func(_, obj any) { w.pod(event.Updated, obj) },
		DeleteFunc: func(obj any) { w.pod(event.Deleted, obj) },
	}
	if _, err := w.factory.Core().V1().Nodes().Informer().AddEventHandler(nodeHandler); err != nil {
		return fmt.Errorf("watching nodes: %w", err)
	}
	if _, err := w.factory.Core().V1().Pods().Informer().AddEventHandler(podHandler); err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}
	w.factory.Start(ctx.Done())
	for typ, ok := range w.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("watching %v: cache did not sync", typ)
		}
	}
	w.ready.Store(true)
	return nil
}

func (w *clusterWatcher) stop() {
	w.once.Do(func() {
		if w.cancel != nil {
			w.cancel()
			w.factory.Shutdown()
		}
	})
}

func (w *clusterWatcher) synced() bool { return w.factory == nil || w.ready.Load() }

func (w *clusterWatcher) node(action event.ChangeAction, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	node, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	w.observer.Observe(event.Event{Time: time.Now(), Kind: event.KindNode,
		Node: &event.NodeChange{Action: action, Node: event.SummarizeNode(node)}})
}

func (w *clusterWatcher) pod(action event.ChangeAction, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	w.observer.Observe(event.Event{Time: time.Now(), Kind: event.KindPod, Pod: event.RefOf(pod),
		PodChange: &event.PodChange{Action: action, Pod: event.SummarizePod(pod)}})
}

// objects lists the current nodes and pods, sorted by name.
func (w *clusterWatcher) objects() ([]event.NodeSummary, []event.PodSummary) {
	nodes := []event.NodeSummary{}
	pods := []event.PodSummary{}
	if w.factory == nil {
		return nodes, pods
	}
	nodeList, _ := w.nodes.List(labels.Everything())
	for _, n := range nodeList {
		nodes = append(nodes, event.SummarizeNode(n))
	}
	podList, _ := w.pods.List(labels.Everything())
	for _, p := range podList {
		pods = append(pods, event.SummarizePod(p))
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	sort.Slice(pods, func(i, j int) bool {
		return pods[i].Namespace < pods[j].Namespace || pods[i].Namespace == pods[j].Namespace && pods[i].Name < pods[j].Name
	})
	return nodes, pods
}

type countWhat int

const (
	countNodes countWhat = iota
	countPods
)

// count says how many nodes or pods the watcher's cache holds.
func (w *clusterWatcher) count(what countWhat) int {
	if w.factory == nil {
		return 0
	}
	if what == countNodes {
		nodes, _ := w.nodes.List(labels.Everything())
		return len(nodes)
	}
	pods, _ := w.pods.List(labels.Everything())
	return len(pods)
}
