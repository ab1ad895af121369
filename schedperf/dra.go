package schedperf

// allocResourceClaims: claims allocated before any pod asks for them, so
// that a workload starts on a cluster whose devices are partly taken, as
// upstream's runner does it (dra.go's allocResourceClaimsOp): one claim at
// a time, on the first node of a shuffled list where upstream's structured
// allocator finds devices, each allocation written at once and assumed, so
// that the next claim sees it without waiting for the informer.

import (
	"context"
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/cel"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

type allocResourceClaimsOp struct {
	Opcode string `json:"opcode"`
	// Namespace holds the claims to allocate; empty means every namespace.
	Namespace string `json:"namespace"`
}

func (e *executor) allocResourceClaims(ctx context.Context, o *allocResourceClaimsOp) error {
	claims, err := e.o.Client.ResourceV1().ResourceClaims(o.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the claims to allocate: %w", err)
	}
	e.o.Progress(fmt.Sprintf("allocating %d ResourceClaims", len(claims.Items)))
	ctx, cancel := context.WithCancel(ctx)
	cluster, err := startDRAView(ctx, e)
	if err != nil {
		cancel()
		return err
	}
	// Shutdown waits for the informers, which stop when ctx ends.
	defer func() { cancel(); cluster.factory.Shutdown() }()

	// The nodes and slices are taken to be fixed from here on, as upstream
	// takes them.
	nodes, err := cluster.factory.Core().V1().Nodes().Lister().List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	slices, err := cluster.manager.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return fmt.Errorf("listing resource slices: %w", err)
	}
	gate := utilfeature.DefaultFeatureGate.Enabled
	// The features upstream's op gives its allocator, no more.
	fts := structured.Features{
		PrioritizedList:      gate(features.DRAPrioritizedList),
		AdminAccess:          gate(features.DRAAdminAccess),
		DeviceTaints:         gate(features.DRADeviceTaints),
		PartitionableDevices: gate(features.DRAPartitionableDevices),
		ConsumableCapacity:   gate(features.DRAConsumableCapacity),
		CompatibilityGroups:  gate(features.DRADeviceCompatibilityGroups),
	}
	celCache := cel.NewCache(10, cel.Features{
		EnableConsumableCapacity: gate(features.DRAConsumableCapacity),
		EnableListTypeAttributes: gate(features.DRAListTypeAttributes),
	})
	for i := range claims.Items {
		claim := &claims.Items[i]
		if claim.Status.Allocation != nil {
			continue
		}
		state, err := allocatedState(cluster.manager)
		if err != nil {
			return err
		}
		allocator, err := structured.NewAllocator(ctx, fts, state, cluster.manager.DeviceClasses(), slices, celCache)
		if err != nil {
			return fmt.Errorf("building the allocator: %w", err)
		}
		if err := allocateOnSomeNode(ctx, e, cluster.manager, allocator, claim, nodes); err != nil {
			return fmt.Errorf("claim %d of %d: %w", i, len(claims.Items), err)
		}
	}
	return nil
}

// draView is the scheduler's view of DRA, built apart from the scheduler's:
// the claims' assume cache, the slice tracker and the manager over them.
type draView struct {
	factory informers.SharedInformerFactory
	manager *dynamicresources.DefaultDRAManager
}

func startDRAView(ctx context.Context, e *executor) (*draView, error) {
	factory := informers.NewSharedInformerFactory(e.o.Client, 0)
	claimInformer := factory.Resource().V1().ResourceClaims().Informer()
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               e.o.Client,
	}
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
	}
	tracker, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("starting the resource slice tracker: %w", err)
	}
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), claimInformer, "ResourceClaim", "", nil)
	manager := dynamicresources.NewDRAManager(ctx, claims, tracker, factory)
	factory.Core().V1().Nodes().Informer()
	factory.Start(ctx.Done())
	for informer, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("the %v informer did not sync: %w", informer, context.Cause(ctx))
		}
	}
	// The tracker lags behind its informers when it applies taint rules,
	// and the assume cache has no HasSynced of its own: a handler's tells.
	handle := claims.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	if !cache.WaitForCacheSync(ctx.Done(), tracker.HasSynced, handle.HasSynced) {
		factory.Shutdown()
		return nil, fmt.Errorf("the claims and slices did not sync: %w", context.Cause(ctx))
	}
	return &draView{factory: factory, manager: manager}, nil
}

// allocatedState is what the claims allocated so far take, as upstream's op
// gathers it: every allocated device counts as taken, even one shared, and
// a shared one also counts its share and the capacity the share consumes.
func allocatedState(manager *dynamicresources.DefaultDRAManager) (structured.AllocatedState, error) {
	claims, err := manager.ResourceClaims().List()
	if err != nil {
		return structured.AllocatedState{}, fmt.Errorf("listing claims: %w", err)
	}
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			state.AllocatedDevices.Insert(id)
			if r.ShareID == nil {
				continue
			}
			state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
		}
	}
	return state, nil
}

// allocateOnSomeNode writes claim's allocation on the first node, in random
// order, where the allocator finds devices for it.
func allocateOnSomeNode(ctx context.Context, e *executor, manager *dynamicresources.DefaultDRAManager, allocator structured.Allocator,
	claim *resourceapi.ResourceClaim, nodes []*v1.Node) error {
	rand.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	for _, node := range nodes {
		result, err := allocator.Allocate(ctx, node, []*resourceapi.ResourceClaim{claim})
		if err != nil {
			return fmt.Errorf("allocating on node %s: %w", node.Name, err)
		}
		if result == nil {
			continue
		}
		claim = claim.DeepCopy()
		claim.Status.Allocation = &result[0]
		written, err := e.o.Client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("writing the allocation: %w", err)
		}
		if err := manager.ResourceClaims().AssumeClaimAfterAPICall(written); err != nil {
			return fmt.Errorf("assuming the allocation: %w", err)
		}
		return nil
	}
	return fmt.Errorf("no node of %d has devices for it", len(nodes))
}
