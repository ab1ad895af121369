// Package kubelet simulates the kubelets of the embedded cluster: one
// process plays the kubelet of every node, as a 1.37 kubelet behaves
// towards the apiserver, and runs no container. Each node keeps its Lease
// and its Ready condition fresh and declares its features; a bound pod
// becomes Running and Ready with an IP and a start time; a graceful
// deletion completes; a pod that says how long it runs then Succeeds or
// Fails. docs/FIDELITY.md says what it does not do.
//
// The shape is etcd embed's: one Config, one Start, one Close.
package kubelet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"minisched/event"
)

// Annotations a person sets to steer a simulated kubelet, with kubectl
// annotate, a manifest, the REST API or a scenario.
const (
	// StateAnnotation on a node: Ready (the default), NotReady (the kubelet
	// reports Ready=False and keeps its Lease), or Stopped (the kubelet is
	// gone: no Lease renewal, no status, as a node that lost its network;
	// node lifecycle then marks it unreachable).
	StateAnnotation = event.KubeletStateAnnotation
	// RunForAnnotation on a pod: how long its containers run (a Go duration
	// such as 30s) before they exit with ExitCodeAnnotation's code. Without
	// it they run until the pod is deleted.
	RunForAnnotation = "kubelet.minisched.io/run-for"
	// ExitCodeAnnotation on a pod: the code its containers exit with after
	// run-for; 0 by default.
	ExitCodeAnnotation = "kubelet.minisched.io/exit-code"
)

// The states of StateAnnotation.
const (
	StateReady    = "Ready"
	StateNotReady = "NotReady"
	StateStopped  = "Stopped"
)

// Config tunes the kubelets. Zero values take the defaults named.
type Config struct {
	Client kubernetes.Interface
	// StartDelay is how long a bound pod takes to become Running
	// (DefaultStartDelay).
	StartDelay time.Duration
	// MaxGracePeriod caps a graceful deletion's wait, so that a pod with
	// kubectl's 30 s or a Deployment's default goes quickly
	// (DefaultMaxGracePeriod). Negative: no cap, the pod's own period.
	MaxGracePeriod time.Duration
	// LeaseDuration is the kubelet's nodeLeaseDurationSeconds (40 s); the
	// Lease is renewed every quarter of it, as the kubelet does.
	LeaseDuration time.Duration
	// StatusReportFrequency is how often an unchanged node status is
	// written anyway (the kubelet's nodeStatusReportFrequency, 5 min).
	StatusReportFrequency time.Duration
	// Machine is what a node made without capacity or allocatable reports
	// (a node from kubectl create, whose status the apiserver drops). Nil:
	// 4 CPUs, 16Gi, 110 pods.
	Machine v1.ResourceList
}

// The defaults of Config.
const (
	DefaultStartDelay            = 500 * time.Millisecond
	DefaultMaxGracePeriod        = 2 * time.Second
	DefaultLeaseDuration         = 40 * time.Second
	DefaultStatusReportFrequency = 5 * time.Minute
)

// Kubelets is the running set of simulated kubelets.
type Kubelets struct {
	cfg    Config
	client kubernetes.Interface
	nodes  corelisters.NodeLister
	pods   corelisters.PodLister
	// podsByNode finds a node's pods when its state changes.
	podsByNode cache.Indexer
	nodeQueue  workqueue.TypedDelayingInterface[string]
	// leaseQueue renews the Leases apart from the nodes' status, as the
	// kubelet's lease controller runs apart from its status loop: a renewal
	// never waits in line behind status writes (a node's first carries its
	// whole machine), and a late Lease is what node lifecycle takes for a
	// node gone.
	leaseQueue workqueue.TypedDelayingInterface[string]
	podQueue   workqueue.TypedDelayingInterface[string]
	addresses  *addresses
	leases     *leases

	mu sync.Mutex
	// seen is when each pod was first seen bound, by uid: the start delay
	// counts from there.
	seen map[string]time.Time

	cancel context.CancelFunc
	done   sync.WaitGroup
}

const byNode = "nodeName"

// workers is how many nodes and how many pods are worked on at once.
const workers = 4

// Start starts the kubelets and returns once their caches are synced, so
// that every node and bound pod that exists then is handled.
func Start(ctx context.Context, cfg Config) (*Kubelets, error) {
	if cfg.Client == nil {
		return nil, errors.New("kubelet: no client")
	}
	if cfg.StartDelay == 0 {
		cfg.StartDelay = DefaultStartDelay
	}
	if cfg.MaxGracePeriod == 0 {
		cfg.MaxGracePeriod = DefaultMaxGracePeriod
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.StatusReportFrequency == 0 {
		cfg.StatusReportFrequency = DefaultStatusReportFrequency
	}
	ctx, cancel := context.WithCancel(ctx)
	k := &Kubelets{
		cfg: cfg, client: cfg.Client, cancel: cancel,
		nodeQueue:  workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "kubelet-nodes"}),
		leaseQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "kubelet-leases"}),
		podQueue:   workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "kubelet-pods"}),
		addresses:  newAddresses(),
		leases:     &leases{client: cfg.Client, duration: cfg.LeaseDuration, last: map[string]*coordinationv1.Lease{}},
		seen:       map[string]time.Time{},
	}
	nodeFactory := informers.NewSharedInformerFactory(cfg.Client, 0)
	// A kubelet watches only its node's pods; together they watch the
	// bound ones.
	podFactory := informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
		}))
	nodeInformer := nodeFactory.Core().V1().Nodes().Informer()
	podInformer := podFactory.Core().V1().Pods().Informer()
	if err := podInformer.AddIndexers(cache.Indexers{byNode: func(obj any) ([]string, error) {
		return []string{obj.(*v1.Pod).Spec.NodeName}, nil
	}}); err != nil {
		cancel()
		return nil, fmt.Errorf("kubelet: indexing pods: %w", err)
	}
	k.nodes = nodeFactory.Core().V1().Nodes().Lister()
	k.pods = podFactory.Core().V1().Pods().Lister()
	k.podsByNode = podInformer.GetIndexer()
	if _, err := nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			name := obj.(*v1.Node).Name
			k.leaseQueue.Add(name)
			k.nodeQueue.Add(name)
			// A pod bound before this cache saw its node was passed over
			// (syncPod found no node): look at the node's pods again.
			k.requeueNode(name)
		},
		UpdateFunc: func(old, cur any) {
			o, n := old.(*v1.Node), cur.(*v1.Node)
			if o.ResourceVersion == n.ResourceVersion {
				return
			}
			k.nodeQueue.Add(n.Name)
			if stateOf(o) != stateOf(n) {
				k.leaseQueue.Add(n.Name)
				k.requeueNode(n.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if n, ok := obj.(*v1.Node); ok {
				k.leaseQueue.Add(n.Name)
				k.nodeQueue.Add(n.Name)
			}
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("kubelet: watching nodes: %w", err)
	}
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.enqueuePod(obj) },
		UpdateFunc: func(_, cur any) { k.enqueuePod(cur) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				k.forget(p)
			}
		},
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("kubelet: watching pods: %w", err)
	}
	nodeFactory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodeInformer.HasSynced, podInformer.HasSynced) {
		cancel()
		nodeFactory.Shutdown()
		podFactory.Shutdown()
		return nil, fmt.Errorf("kubelet: caches did not sync: %w", context.Cause(ctx))
	}
	k.done.Go(func() {
		<-ctx.Done()
		k.nodeQueue.ShutDown()
		k.leaseQueue.ShutDown()
		k.podQueue.ShutDown()
		nodeFactory.Shutdown()
		podFactory.Shutdown()
	})
	// Every node's kubelet works on its own; a few workers stand for them
	// (a queue never hands one key to two workers at once).
	for range workers {
		k.done.Go(func() { k.run(ctx, k.leaseQueue, k.syncLease) })
		k.done.Go(func() { k.run(ctx, k.nodeQueue, k.syncNode) })
		k.done.Go(func() { k.run(ctx, k.podQueue, k.syncPod) })
	}
	return k, nil
}

// Close stops every kubelet and waits for them.
func (k *Kubelets) Close() {
	k.cancel()
	k.done.Wait()
}

// run works through a queue. A sync returns how long to wait before the
// item is looked at again (0: not again, until an event brings it back).
func (k *Kubelets) run(ctx context.Context, q workqueue.TypedDelayingInterface[string], sync func(context.Context, string) (time.Duration, error)) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		after, err := sync(ctx, key)
		switch {
		case ctx.Err() != nil:
		case apierrors.IsConflict(err), apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err):
			// Someone wrote the object since the cache saw it: look again
			// once the cache has the newer one.
			q.AddAfter(key, 100*time.Millisecond)
		case err != nil:
			q.AddAfter(key, time.Second)
		case after > 0:
			q.AddAfter(key, after)
		}
		q.Done(key)
	}
}

func stateOf(node *v1.Node) string {
	switch s := node.Annotations[StateAnnotation]; s {
	case StateNotReady, StateStopped:
		return s
	}
	return StateReady
}

// requeueNode looks at a node's pods again: a kubelet that comes back
// starts and stops what it had left.
func (k *Kubelets) requeueNode(name string) {
	objs, _ := k.podsByNode.ByIndex(byNode, name)
	for _, obj := range objs {
		k.enqueuePod(obj)
	}
}

func (k *Kubelets) enqueuePod(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		k.podQueue.Add(key)
	}
}

func (k *Kubelets) forget(p *v1.Pod) {
	k.mu.Lock()
	delete(k.seen, string(p.UID))
	k.mu.Unlock()
}
