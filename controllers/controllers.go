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
	"slices"
	"strings"
	"time"

	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/controller-manager/pkg/clientbuilder"
	controllerhealthz "k8s.io/controller-manager/pkg/healthz"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmconfig "k8s.io/kubernetes/cmd/kube-controller-manager/app/config"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
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
		bare := strings.TrimPrefix(name, "-")
		if canonical, ok := aliases[bare]; ok {
			bare = canonical
			if strings.HasPrefix(name, "-") {
				name = "-" + canonical
			} else {
				name = canonical
			}
		}
		if name != "*" && !slices.Contains(known, bare) {
			return nil, fmt.Errorf("--controllers: unknown controller %q (known: %s)", bare, strings.Join(known, ", "))
		}
		list = append(list, name)
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
	restCfg := rest.CopyConfig(cfg.RESTConfig)
	client, err := clientset.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("building the controllers' client: %w", err)
	}
	completed := (&kcmconfig.Config{ComponentConfig: cc, Client: client, Kubeconfig: restCfg}).Complete()
	// One client per controller, each with its own user agent, as
	// kube-controller-manager does without service-account credentials.
	builder := clientbuilder.SimpleControllerClientBuilder{ClientConfig: restCfg}

	ctx, cancel := context.WithCancel(ctx)
	m := &Manager{cancel: cancel, done: make(chan struct{})}
	cctx, err := kcm.CreateControllerContext(ctx, completed, builder, builder)
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
