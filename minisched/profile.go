package minisched

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// profile is one configured framework and the plugin instances it holds,
// listed per extension point in the order they run. minisched calls these
// instances itself so that every call can be timed and reported; the
// framework stays the plugins' Handle (snapshot, waiting pods, client...).
type profile struct {
	fw   framework.Framework
	name string
	// cfg is the profile as configured, to build the framework again
	// (an explanation's, on a snapshot of its own).
	cfg *config.KubeSchedulerProfile
	// explainer is that framework, built at the first explanation and
	// used by one at a time.
	explainer explainer

	preFilter  []fwk.PreFilterPlugin
	filter     []fwk.FilterPlugin
	postFilter []fwk.PostFilterPlugin
	preScore   []fwk.PreScorePlugin
	score      []fwk.ScorePlugin
	weights    map[string]int64
	reserve    []fwk.ReservePlugin
	permit     []fwk.PermitPlugin
	preBind    []fwk.PreBindPlugin
	bind       []fwk.BindPlugin
	postBind   []fwk.PostBindPlugin

	percentageOfNodesToScore int32
	// extenders are the scheduler's: they count in how many nodes Filter
	// looks for.
	extenders *extenders
	// batch is the profile's opportunistic batching (batch.go).
	batch *batch
}

// frameworkDeps are what a framework needs from the scheduler around it.
type frameworkDeps struct {
	client          clientset.Interface
	restConfig      *rest.Config
	informerFactory informers.SharedInformerFactory
	snapshot        *internalcache.Snapshot
	cache           internalcache.Cache
	recorder        events.EventRecorderLogger
	parallelism     int
	draManager      fwk.SharedDRAManager
	// shared are the options every profile's framework takes alike: the
	// one map of waiting pods and the one of pods in PreBind (each option
	// holds its map).
	shared []frameworkruntime.Option
}

// dra is what the DynamicResources plugin shares with the scheduler around
// it, built the way kube-scheduler builds it. The queue takes ResourceClaim
// and ResourceSlice events from the claims' assume cache and the slice
// tracker, not from the informers, as upstream does: the manager's record
// of allocated devices, which listens there first, is then up to date when
// a hint moves a pod (a deallocated claim's device is free for its next
// attempt).
type dra struct {
	manager *dynamicresources.DefaultDRAManager
	claims  *assumecache.AssumeCache
	slices  *resourceslicetracker.Tracker
}

// newDRA builds the DRA manager; without it the plugin dereferences nil in
// PreFilter. Nil when DynamicResourceAllocation is off.
func newDRA(ctx context.Context, client clientset.Interface, factory informers.SharedInformerFactory) (*dra, error) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		return nil, nil
	}
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
	}
	tracker, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("starting the resource slice tracker: %w", err)
	}
	return &dra{manager: dynamicresources.NewDRAManager(ctx, claims, tracker, factory), claims: claims, slices: tracker}, nil
}

// sharedManager is the manager as the framework takes it: nil, not a nil
// pointer in an interface, when DRA is off.
func (d *dra) sharedManager() fwk.SharedDRAManager {
	if d == nil {
		return nil
	}
	return d.manager
}

// newProfile builds the framework for cfg's profile with the in-tree
// plugins, the learning plugins and any out-of-tree ones, and keeps each
// plugin instance it creates.
func newProfile(ctx context.Context, cfg *config.KubeSchedulerProfile, outOfTree frameworkruntime.Registry, deps frameworkDeps) (*profile, error) {
	registry, err := registry(outOfTree)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	instances := map[string]fwk.Plugin{}
	for name, factory := range registry {
		registry[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := factory(ctx, args, h)
			if err == nil {
				mu.Lock()
				instances[p.Name()] = p
				mu.Unlock()
			}
			return p, err
		}
	}

	opts := append([]frameworkruntime.Option{
		frameworkruntime.WithClientSet(deps.client),
		frameworkruntime.WithKubeConfig(deps.restConfig),
		frameworkruntime.WithInformerFactory(deps.informerFactory),
		frameworkruntime.WithSnapshotSharedLister(deps.snapshot),
		frameworkruntime.WithMutableSnapshotLister(deps.snapshot),
		frameworkruntime.WithEventRecorder(deps.recorder),
		frameworkruntime.WithParallelism(deps.parallelism),
		frameworkruntime.WithSharedDRAManager(deps.draManager),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(deps.informerFactory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithPodGroupManager(deps.cache),
	}, deps.shared...)
	fw, err := frameworkruntime.NewFramework(ctx, registry, cfg, opts...)
	if err != nil {
		return nil, fmt.Errorf("building the framework: %w", err)
	}

	p := &profile{fw: fw, name: cfg.SchedulerName, cfg: cfg, weights: map[string]int64{}}
	if cfg.PercentageOfNodesToScore != nil {
		p.percentageOfNodesToScore = *cfg.PercentageOfNodesToScore
	}
	list := fw.ListPlugins()
	for _, pl := range list.Score.Enabled {
		p.weights[pl.Name] = int64(pl.Weight)
	}
	if err := errors.Join(
		collect(&p.preFilter, list.PreFilter, instances),
		collect(&p.filter, list.Filter, instances),
		collect(&p.postFilter, list.PostFilter, instances),
		collect(&p.preScore, list.PreScore, instances),
		collect(&p.score, list.Score, instances),
		collect(&p.reserve, list.Reserve, instances),
		collect(&p.permit, list.Permit, instances),
		collect(&p.preBind, list.PreBind, instances),
		collect(&p.bind, list.Bind, instances),
		collect(&p.postBind, list.PostBind, instances),
	); err != nil {
		return nil, err
	}
	return p, nil
}

// collect resolves the plugins enabled at one extension point to the
// instances the framework created, in order.
func collect[T fwk.Plugin](dst *[]T, set config.PluginSet, instances map[string]fwk.Plugin) error {
	for _, enabled := range set.Enabled {
		p, ok := instances[enabled.Name]
		if !ok {
			return fmt.Errorf("plugin %q is enabled but was never built", enabled.Name)
		}
		typed, ok := p.(T)
		if !ok {
			return fmt.Errorf("plugin %q does not implement the extension point it is enabled for", enabled.Name)
		}
		*dst = append(*dst, typed)
	}
	return nil
}

// hints maps each plugin that can reject a pod to the cluster events it
// registered, for the queue's QueueingHints.
func (p *profile) hints(ctx context.Context) (map[string][]fwk.ClusterEventWithHint, error) {
	out := map[string][]fwk.ClusterEventWithHint{}
	for _, ext := range p.fw.EnqueueExtensions() {
		events, err := ext.EventsToRegister(ctx)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: registering events: %w", ext.Name(), err)
		}
		out[ext.Name()] = append(out[ext.Name()], events...)
	}
	return out, nil
}

// bindingWait is the longest an upstream plugin of the profile may wait in
// the binding cycle: VolumeBinding for its volumes (bindTimeoutSeconds),
// DynamicResources for its devices' binding conditions (bindingTimeout).
// The profile is defaulted, so both have their args.
func bindingWait(p *config.KubeSchedulerProfile) time.Duration {
	wait := time.Duration(0)
	for _, pc := range p.PluginConfig {
		switch args := pc.Args.(type) {
		case *config.VolumeBindingArgs:
			wait = max(wait, time.Duration(args.BindTimeoutSeconds)*time.Second)
		case *config.DynamicResourcesArgs:
			d := config.DynamicResourcesBindingTimeoutDefault
			if args.BindingTimeout != nil {
				d = args.BindingTimeout.Duration
			}
			wait = max(wait, d)
		}
	}
	return wait
}
