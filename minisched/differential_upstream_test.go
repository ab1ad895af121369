package minisched_test

// kube-scheduler for the placement differential: the real one, on a
// control plane of its own, in this process.

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"minisched/k8sapiserver"
)

// upstream is the real kube-scheduler, running in this process against the
// second control plane.
type upstream struct {
	client kubernetes.Interface
	sched  *scheduler.Scheduler
	queue  *internalqueue.PriorityQueue
}

// startUpstream runs kube-scheduler with cfg until the test ends.
func startUpstream(t *testing.T, c kubernetes.Interface, cfg *config.KubeSchedulerConfiguration) *upstream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	factory := scheduler.NewInformerFactory(c, 0, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.EventsV1()})
	sched, err := scheduler.New(ctx, c, factory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
	)
	if err != nil {
		cancel()
		t.Fatalf("building kube-scheduler: %v", err)
	}
	q, ok := sched.SchedulingQueue.(*internalqueue.PriorityQueue)
	if !ok {
		cancel()
		t.Fatalf("kube-scheduler's queue is a %T", sched.SchedulingQueue)
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sched.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		factory.Shutdown()
		broadcaster.Shutdown()
	})
	return &upstream{client: c, sched: sched, queue: q}
}

// startSecondControlPlane starts kube-scheduler's control plane for the
// whole test.
func startSecondControlPlane(t *testing.T) kubernetes.Interface {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cpB, err := k8sapiserver.Start(ctx, k8sapiserver.Config{})
	if err != nil {
		cancel()
		t.Fatalf("starting the second control plane: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cpB.Close()
	})
	return kubernetes.NewForConfigOrDie(cpB.RESTConfig())
}

func ensurePriorityClasses(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	for _, pc := range diffPriorityClasses {
		if _, err := c.SchedulingV1().PriorityClasses().Create(context.Background(), &pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating priority class %s: %v", pc.Name, err)
		}
	}
}
