// Command bench measures minisched's speed and memory targets and prints the
// figures that docs/BENCHMARKS.md records. Each subcommand compares runs made
// one after the other, so that a noisy machine affects both sides of a ratio
// alike; throughput runs each in a process of its own.
//
//	go run ./hack/bench startup -bin bin/minisched -runs 5
//	go run ./hack/bench throughput -nodes 5000 -pods 10000
//	go run ./hack/bench stream -clients 20 -nodes 100 -pods 1000
//	go run ./hack/bench memory -nodes 5000 -pods 50000 -churn=false
//	go run ./hack/bench churn -nodes 100 -pods 100000 [-batch 500 -pace 25]
//	go run ./hack/bench history -nodes 100 -pods 10000
//	go run ./hack/bench reset -nodes 50 -pods 300
//	go run ./hack/bench import -nodes 5000 -pods 50000
//	go run ./hack/bench mirror -nodes 500 -rate 50 -seconds 30
//	go run ./hack/bench explain -nodes 5000
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"minisched/app"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench startup|throughput|stream|memory|churn|history|reset|import|mirror|explain [flags]")
		os.Exit(2)
	}
	app.QuietKlog(0)
	cmds := map[string]func([]string) error{
		"startup": startup, "throughput": throughput, "throughput-one": throughputOne, "stream": stream, "memory": memory, "history": historyBench, "reset": reset, "churn": churn, "import": importCopy, "import-source": importSource, "mirror": mirrorLag, "explain": explainBench,
	}
	cmd, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown benchmark %q\n", os.Args[1])
		os.Exit(2)
	}
	// throughput measures in processes of its own, which take the profiles.
	profiled := os.Args[1] != "throughput" && os.Args[1] != "import-source"
	if addr := os.Getenv("BENCH_PPROF_ADDR"); addr != "" && profiled {
		// net/http/pprof's handlers, to look at a run while it goes.
		go func() { fmt.Fprintln(os.Stderr, http.ListenAndServe(addr, nil)) }()
	}
	// throughput-one profiles its scheduling phase alone (phaseProfile).
	if path := os.Getenv("BENCH_CPUPROFILE"); path != "" && profiled && os.Args[1] != "throughput-one" {
		f, err := os.Create(path)
		if err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if err := cmd(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

var quiet = slog.New(slog.DiscardHandler)

// workload creates nodes and pods with a few creators at once. podCPU ""
// varies each pod's requests, so that no two pods in a row look alike.
func workload(ctx context.Context, c kubernetes.Interface, nodes, pods int, podCPU string) error {
	if err := parallel(nodes, func(i int) error {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i),
			Labels: map[string]string{v1.LabelHostname: fmt.Sprintf("node-%04d", i), v1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3)}}}
		// The apiserver keeps a node's status on create.
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("32"),
			v1.ResourceMemory: resource.MustParse("64Gi"), v1.ResourcePods: resource.MustParse("110")}
		n.Status.Capacity = n.Status.Allocatable
		_, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	return createPods(ctx, c, 0, pods, podCPU)
}

func createPods(ctx context.Context, c kubernetes.Interface, from, count int, cpu string) error {
	return parallel(count, func(i int) error {
		n := from + i
		podCPU, memory := cpu, "64Mi"
		if cpu == "" {
			podCPU, memory = fmt.Sprintf("%dm", 10+n%41), fmt.Sprintf("%dMi", 32+n%37)
		}
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("pod-%05d", n),
			Labels: map[string]string{"app": fmt.Sprintf("app-%d", n%13)}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(podCPU),
					v1.ResourceMemory: resource.MustParse(memory)}}}}}}
		_, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		return err
	})
}

func parallel(n int, f func(i int) error) error {
	const workers = 16
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// boundCounter counts bound pods through an informer, and says when a number
// of them are bound.
type boundCounter struct {
	bound   atomic.Int64
	reached chan struct{}
	want    int64
	once    sync.Once
	stop    chan struct{}
}

func countBound(c kubernetes.Interface, want int) *boundCounter {
	b := &boundCounter{reached: make(chan struct{}), want: int64(want), stop: make(chan struct{})}
	factory := informers.NewSharedInformerFactory(c, 0)
	seen := sync.Map{}
	check := func(obj any) {
		if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName != "" {
			if _, dup := seen.LoadOrStore(p.UID, true); !dup && b.bound.Add(1) >= b.want {
				b.once.Do(func() { close(b.reached) })
			}
		}
	}
	_, _ = factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: check, UpdateFunc: func(_, obj any) { check(obj) },
	})
	factory.Start(b.stop)
	factory.WaitForCacheSync(b.stop)
	return b
}

func (b *boundCounter) wait(timeout time.Duration) error {
	defer close(b.stop)
	select {
	case <-b.reached:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("only %d of %d pods bound after %v", b.bound.Load(), b.want, timeout)
	}
}

func flagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ExitOnError) }
