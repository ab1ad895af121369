package app

// The server's part of a running minisched: the cluster's view, the
// dashboard's listener, and their stop.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/client-go/metadata"

	"minisched/cluster"
	"minisched/server"
	"minisched/web"
)

// watchCluster builds the cluster's view and the server, and starts the
// server's watch of the cluster.
func (inst *Instance) watchCluster(ctx context.Context, s *settings) error {
	var health func() error
	if inst.ControlPlane != nil {
		health = inst.ControlPlane.Healthy
	}
	webFS := web.FS()
	if s.WebDir != "" {
		webFS = os.DirFS(s.WebDir)
	}
	var meta metadata.Interface
	if !s.attached {
		var err error
		if meta, err = metadata.NewForConfig(inst.RESTConfig); err != nil {
			return fmt.Errorf("building a metadata client: %w", err)
		}
	}
	inst.Cluster = cluster.New(cluster.Options{
		Client: inst.Client, Observer: inst.observer, Writes: writes(s.attached, s.AllowWrites), MaxNodes: s.MaxNodes, MaxPods: s.MaxPods,
		Namespaces: splitList(s.AllowWritesIn), HostAccess: s.AllowHostAccess, SchedulerName: s.schedulerName,
		Metadata: meta, Pause: inst.owner.Pause,
		Hold: func() func() { return inst.Scheduler.Hold("the cluster is being reset") },
	})
	inst.Server = server.New(server.Options{
		Client: inst.Client, Cluster: inst.Cluster, Owner: inst.owner, Scheduler: inst.Scheduler, Recorder: inst.Recorder, Observer: inst.observer,
		Web: webFS, Bundled: s.scenarios, SchedulerName: s.schedulerName, Metrics: inst.registry, StreamMetrics: inst.metrics,
		Addr: s.Addr, AllowedOrigins: splitList(s.AllowedOrigins), AllowReset: !s.attached, Health: health,
		Token: s.Token, RateLimit: s.rateLimit, TrustedProxies: s.proxies, TLSCert: s.TLSCert, TLSKey: s.TLSKey,
		StreamBuffer: s.StreamBuffer, StreamWriteTimeout: s.StreamWriteTimeout, CopyOf: s.snapshot.copyOf(), FeatureGates: s.gates,
		DataDir: s.DataDir,
	})
	if err := inst.Server.Start(ctx); err != nil {
		return fmt.Errorf("watching the cluster: %w", err)
	}
	return nil
}

// listen opens the dashboard's address and serves it.
func (inst *Instance) listen(s *settings) error {
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.Addr, err)
	}
	inst.served = make(chan error, 1)
	go func() { inst.served <- inst.Server.Serve(l) }()
	scheme := "http"
	if s.TLSCert != "" {
		scheme = "https"
	}
	inst.URL = scheme + "://" + l.Addr().String() + "/"
	return nil
}

// shutdown stops the server, and its serving if it began, within a few
// seconds.
func (inst *Instance) shutdown() error {
	if inst.Server == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if err := inst.Server.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping the server: %w", err))
	}
	if inst.served != nil {
		if err := <-inst.served; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
