package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseTiming is how leader election waits, renews and retries.
type LeaseTiming struct {
	Duration, RenewDeadline, RetryPeriod time.Duration
}

// elect runs start while this process holds the lease and stop when it loses
// it, and tries again until ctx ends: with several replicas attached to one
// cluster, exactly one schedules.
func elect(ctx context.Context, client kubernetes.Interface, timing LeaseTiming, namespace, name string, log *slog.Logger, start func(context.Context), stop func()) error {
	host, _ := os.Hostname()
	identity := fmt.Sprintf("%s_%d_%d", host, os.Getpid(), time.Now().UnixNano())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, name,
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return fmt.Errorf("building the leader election lock: %w", err)
	}
	cfg := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   timing.Duration,
		RenewDeadline:   timing.RenewDeadline,
		RetryPeriod:     timing.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("leading: scheduling", "lease", namespace+"/"+name)
				start(ctx)
			},
			OnStoppedLeading: func() {
				log.Info("no longer leading: standing by", "lease", namespace+"/"+name)
				stop()
			},
			OnNewLeader: func(leader string) {
				if leader != identity {
					log.Info("standing by: another replica leads", "leader", leader)
				}
			},
		},
	}
	elector, err := leaderelection.NewLeaderElector(cfg)
	if err != nil {
		return fmt.Errorf("building the leader elector: %w", err)
	}
	go func() {
		for ctx.Err() == nil {
			elector.Run(ctx)
		}
	}()
	return nil
}
