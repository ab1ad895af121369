package schedperf

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// StartKubeScheduler runs upstream's scheduler on client, configured as
// cfg says and with the out-of-tree plugins: the contender minisched is
// measured against. It runs until stop, which ends it and waits for its
// informers to let go of their watches; call stop before closing the
// control plane, whose shutdown otherwise waits out the open watches.
func StartKubeScheduler(ctx context.Context, client kubernetes.Interface, cfg *config.KubeSchedulerConfiguration, outOfTree frameworkruntime.Registry) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	factory := scheduler.NewInformerFactory(client, 0, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	sched, err := scheduler.New(ctx, client, factory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(outOfTree),
		scheduler.WithParallelism(cfg.Parallelism), scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithExtenders(cfg.Extenders...))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting kube-scheduler: %w", err)
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sched.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		factory.Shutdown()
		broadcaster.Shutdown()
	}, nil
}
