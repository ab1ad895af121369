package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"

	"minisched/cluster"
	"minisched/controllers"
	"minisched/devices"
	"minisched/kubelet"
	"minisched/provisioner"
)

// machinery is what acts on the embedded cluster beside the scheduler, as
// on a real one: kube-controller-manager's controllers, the simulated
// kubelets with a DRA driver's plugin on each node and, beside the PV
// controller, a storage provisioner. A reset stops it while it empties the cluster, so that no
// ReplicaSet makes its pods again halfway, and starts it afresh.
type machinery struct {
	restConfig  *rest.Config
	client      kubernetes.Interface
	controllers []string // as --controllers; empty: none
	kubelets    *kubelet.Config
	gracePeriod time.Duration // node lifecycle's, for the kubelets' Lease duration
	log         *slog.Logger

	mu      sync.Mutex
	ctx     context.Context // the instance's: what runs ends with it
	manager *controllers.Manager
	nodes   *kubelet.Kubelets
	storage *provisioner.Provisioner
	devices *devices.Devices
}

// minLeaseDuration keeps a renewal (every quarter) at a second or more.
const minLeaseDuration = 4 * time.Second

// newMachinery returns the machinery the flags ask for, or nil for none.
func newMachinery(f Flags, restConfig *rest.Config, client kubernetes.Interface, log *slog.Logger) (*machinery, error) {
	list, err := controllers.ParseList(f.Controllers)
	if err != nil {
		return nil, err
	}
	m := &machinery{restConfig: restConfig, client: client, controllers: list, log: log}
	if f.Kubelets {
		if f.NodeLeaseDuration < minLeaseDuration || f.NodeLeaseDuration%time.Second != 0 {
			return nil, fmt.Errorf("--node-lease-duration %v: want whole seconds, at least %v", f.NodeLeaseDuration, minLeaseDuration)
		}
		m.kubelets = &kubelet.Config{Client: client, StartDelay: f.PodStartDelay, MaxGracePeriod: f.MaxGracePeriod,
			LeaseDuration: f.NodeLeaseDuration, Machine: cluster.DefaultNodeAllocatable()}
		// Node lifecycle allows what upstream allows a 40 s Lease (50 s):
		// a few renewals missed before a node counts as gone.
		m.gracePeriod = f.NodeLeaseDuration * 5 / 4
	}
	if len(list) == 0 && m.kubelets == nil {
		return nil, nil
	}
	return m, nil
}

// start starts the kubelets, then the controllers, and returns once both
// watch the cluster: what is created after it is acted on.
func (m *machinery) start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctx = ctx
	return m.startLocked()
}

func (m *machinery) startLocked() error {
	started := time.Now()
	if m.kubelets != nil {
		k, err := kubelet.Start(m.ctx, *m.kubelets)
		if err != nil {
			return fmt.Errorf("starting the kubelets: %w", err)
		}
		m.nodes = k
		// A DRA driver's kubelet plugin publishes a node's devices.
		d, err := devices.Start(m.ctx, devices.Config{Client: m.client, Class: devices.Class(map[string]string{cluster.BuiltInLabel: "true"})})
		if err != nil {
			return fmt.Errorf("starting the devices driver: %w", err)
		}
		m.devices = d
	}
	if len(m.controllers) > 0 {
		mgr, err := controllers.Start(m.ctx, controllers.Config{RESTConfig: m.restConfig, Controllers: m.controllers,
			NodeMonitorGracePeriod: m.gracePeriod})
		if err != nil {
			return fmt.Errorf("starting the controllers: %w", err)
		}
		m.manager = mgr
		m.log.Debug("controllers started", "controllers", len(mgr.Names()), "took", time.Since(started).Round(time.Millisecond))
		// A provisioner works only with the PV controller, which hands it
		// claims; the default class comes with it.
		if slices.Contains(mgr.Names(), names.PersistentVolumeBinderController) {
			p, err := provisioner.Start(m.ctx, provisioner.Config{Client: m.client, DefaultClass: true})
			if err != nil {
				return fmt.Errorf("starting the storage provisioner: %w", err)
			}
			m.storage = p
		}
	}
	return nil
}

// pause stops the controllers and kubelets for a reset, and returns what
// starts them again.
func (m *machinery) pause() (resume func() error) {
	m.mu.Lock()
	m.stopLocked()
	return func() error {
		defer m.mu.Unlock()
		if m.ctx.Err() != nil {
			return nil
		}
		return m.startLocked()
	}
}

func (m *machinery) stopLocked() error {
	var errs []error
	if m.storage != nil {
		m.storage.Close()
		m.storage = nil
	}
	if m.manager != nil {
		errs = append(errs, m.manager.Close())
		m.manager = nil
	}
	if m.nodes != nil {
		m.nodes.Close()
		m.nodes = nil
	}
	if m.devices != nil {
		m.devices.Close()
		m.devices = nil
	}
	return errors.Join(errs...)
}

// names are the controllers that run now.
func (m *machinery) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.manager == nil {
		return nil
	}
	return m.manager.Names()
}

// close stops everything for good.
func (m *machinery) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopLocked()
}
