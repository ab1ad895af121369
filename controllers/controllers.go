// Package controllers runs kube-controller-manager's own controllers in
// process, against the embedded apiserver: the Deployment, ReplicaSet, Job,
// garbage collector, node lifecycle and every other controller a real
// cluster runs, built and started the way cmd/kube-controller-manager
// builds and starts them, from the same v1.37.2 code.
//
// The shape is etcd embed's: one Config, one Start, one Close.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/controller-manager/pkg/clientbuilder"
	controllerhealthz "k8s.io/controller-manager/pkg/healthz"
	"k8s.io/controller-manager/pkg/informerfactory"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	ctrlconfig "k8s.io/kubernetes/pkg/controller/apis/config"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	gcconfig "k8s.io/kubernetes/pkg/controller/garbagecollector/config"
)

// Config says which controllers run.
type Config struct {
	// RESTConfig reaches the apiserver with a credential that may do what
	// kube-controller-manager does (the embedded apiserver's loopback one).
	RESTConfig *rest.Config
	// Controllers is kube-controller-manager's --controllers: "*" for every
	// controller on by default, "name" to add one, "-name" to drop one.
	// Nil means {"*"}; an empty, non-nil list runs none.
	Controllers []string
	// NodeMonitorGracePeriod is node lifecycle's --node-monitor-grace-period:
	// how long a node's Lease may go unrenewed before the node counts as
	// gone. Zero means upstream's 50 s, for the kubelets' 40 s Lease.
	NodeMonitorGracePeriod time.Duration
}

// Manager is a running set of controllers.
type Manager struct {
	names  []string
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done closes
}

// ParseList splits a --controllers value and checks each name against
// kube-controller-manager's own, so that a typo is refused at start rather
// than silently running nothing. An empty value gives an empty list.
func ParseList(value string) ([]string, error) {
	list := []string{}
	known := kcm.KnownControllers()
	aliases := kcm.ControllerAliases()
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "*" {
			list = append(list, name)
			continue
		}
		bare, drop := strings.CutPrefix(name, "-")
		if canonical, ok := aliases[bare]; ok {
			bare = canonical
		}
		if !slices.Contains(known, bare) {
			return nil, fmt.Errorf("--controllers: unknown controller %q (known: %s)", bare, strings.Join(known, ", "))
		}
		if drop {
			bare = "-" + bare
		}
		list = append(list, bare)
	}
	return list, nil
}

// componentConfig is kube-controller-manager's defaulted configuration, as
// its options build it, with the controllers asked for and no leader
// election (one process owns the embedded cluster).
func componentConfig(controllers []string) (ctrlconfig.KubeControllerManagerConfiguration, error) {
	cc, err := kcmoptions.NewDefaultComponentConfig()
	if err != nil {
		return cc, fmt.Errorf("defaulting kube-controller-manager's configuration: %w", err)
	}
	if controllers == nil {
		controllers = []string{"*"}
	}
	cc.Generic.Controllers = controllers
	cc.Generic.LeaderElection.LeaderElect = false
	// NewKubeControllerManagerOptions sets these; the defaulted
	// configuration alone leaves them empty.
	for r := range garbagecollector.DefaultIgnoredResources() {
		cc.GarbageCollectorController.GCIgnoredResources = append(cc.GarbageCollectorController.GCIgnoredResources,
			gcconfig.GroupResource{Group: r.Group, Resource: r.Resource})
	}
	return cc, nil
}

// Start builds the controllers and starts them with their informers. It
// returns once they are built; each controller then waits for its caches,
// so that an object created after Start returns is seen by them.
func Start(ctx context.Context, cfg Config) (*Manager, error) {
	cc, err := componentConfig(cfg.Controllers)
	if err != nil {
		return nil, err
	}
	if cfg.NodeMonitorGracePeriod > 0 {
		cc.NodeLifecycleController.NodeMonitorGracePeriod.Duration = cfg.NodeMonitorGracePeriod
	}
	restCfg := rest.CopyConfig(cfg.RESTConfig)
	ctx, cancel := context.WithCancel(ctx)
	m := &Manager{cancel: cancel, done: make(chan struct{})}
	cctx, err := controllerContext(ctx, cc, restCfg)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("building the controllers' context: %w", err)
	}
	descriptors := kcm.NewControllerDescriptors()
	built, err := kcm.BuildControllers(ctx, cctx, descriptors, nil, controllerhealthz.NewMutableHealthzHandler())
	if err != nil {
		cancel()
		return nil, fmt.Errorf("building the controllers: %w", err)
	}
	for _, c := range built {
		m.names = append(m.names, c.Name())
	}
	slices.Sort(m.names)
	cctx.InformerFactory.Start(ctx.Done())
	cctx.ObjectOrMetadataInformerFactory.Start(ctx.Done())
	close(cctx.InformersStarted)
	// Their first lists done, a Deployment created from now on is seen,
	// and closing soon after cuts off no list halfway (the apiserver's
	// etcd client would print that on the console).
	for informer, ok := range cctx.InformerFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("the controllers' %v informer did not sync: %w", informer, context.Cause(ctx))
		}
	}
	go func() {
		defer close(m.done)
		defer cctx.InformerFactory.Shutdown()
		if len(built) == 0 {
			<-ctx.Done()
			return
		}
		if !kcm.RunControllers(ctx, cctx, built, kcm.ControllerStartJitter, shutdownTimeout) {
			m.err = errors.New("the controllers did not stop within " + shutdownTimeout.String())
		}
	}()
	return m, nil
}

// controllerContext builds what kube-controller-manager's
// CreateControllerContext builds (the shared and metadata informers, a
// client per controller, the RESTMapper, the garbage collector's graph),
// from the same parts. Upstream's registers its informers under the
// process-wide name "kube-controller-manager", which a second control plane
// in the same process (tests, scenario diff, what-if) cannot take again.
func controllerContext(ctx context.Context, cc ctrlconfig.KubeControllerManagerConfiguration, restCfg *rest.Config) (kcm.ControllerContext, error) {
	// One client per controller, each with its own user agent, as
	// kube-controller-manager does without service-account credentials.
	builder := clientbuilder.SimpleControllerClientBuilder{ClientConfig: restCfg}
	// Managed fields are trimmed, as upstream's informers trim them.
	trim := func(obj any) (any, error) {
		if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
			accessor.SetManagedFields(nil)
		}
		return obj, nil
	}
	resync := func() time.Duration {
		return time.Duration(float64(cc.Generic.MinResyncPeriod.Nanoseconds()) * (rand.Float64() + 1))
	}
	client, err := builder.Client("shared-informers")
	if err != nil {
		return kcm.ControllerContext{}, err
	}
	shared := informers.NewSharedInformerFactoryWithOptions(client, resync(), informers.WithTransform(trim))
	metadataClient, err := metadata.NewForConfig(rest.AddUserAgent(rest.CopyConfig(restCfg), "metadata-informers"))
	if err != nil {
		return kcm.ControllerContext{}, err
	}
	metadataInformers := metadatainformer.NewSharedInformerFactoryWithOptions(metadataClient, resync(), metadatainformer.WithTransform(trim))
	discoveryClient, err := builder.DiscoveryClient("controller-discovery")
	if err != nil {
		return kcm.ControllerContext{}, err
	}
	restMapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(discoveryClient))
	go wait.Until(restMapper.Reset, 30*time.Second, ctx.Done())
	cctx := kcm.ControllerContext{
		ClientBuilder:                   builder,
		InformerFactory:                 shared,
		ObjectOrMetadataInformerFactory: informerfactory.NewInformerFactory(shared, metadataInformers),
		ComponentConfig:                 cc,
		RESTMapper:                      restMapper,
		InformersStarted:                make(chan struct{}),
		ResyncPeriod:                    resync,
		ControllerManagerMetrics:        controllersmetrics.NewControllerManagerMetrics("kube-controller-manager"),
	}
	if cc.GarbageCollectorController.EnableGarbageCollector &&
		cctx.IsControllerEnabled(kcm.NewControllerDescriptors()[names.GarbageCollectorController]) {
		ignored := map[schema.GroupResource]struct{}{}
		for _, r := range cc.GarbageCollectorController.GCIgnoredResources {
			ignored[schema.GroupResource{Group: r.Group, Resource: r.Resource}] = struct{}{}
		}
		cctx.GraphBuilder = garbagecollector.NewDependencyGraphBuilder(ctx, metadataClient, restMapper, ignored,
			cctx.ObjectOrMetadataInformerFactory, cctx.InformersStarted)
	}
	controllersmetrics.Register()
	return cctx, nil
}

// shutdownTimeout is kube-controller-manager's own.
const shutdownTimeout = 10 * time.Second

// Names are the controllers that run, sorted.
func (m *Manager) Names() []string { return slices.Clone(m.names) }

// Close stops the controllers and waits for them, at most shutdownTimeout.
func (m *Manager) Close() error {
	m.cancel()
	<-m.done
	return m.err
}
