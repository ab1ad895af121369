package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minisched/app"
)

// mirrorLag measures how far a mirror trails its source: a source control
// plane with its own scheduler running (the "real" one) gets pods at a
// steady rate, and a second minisched that mirrors it watches its own
// copy. The lag of a pod is from its create returning in the source to its
// appearing in the copy; the lag of a bind, from the pod appearing to the
// copy's pod naming the real scheduler's node.
func mirrorLag(args []string) error {
	fs := flagSet("mirror")
	nodes := fs.Int("nodes", 500, "nodes in the source")
	rate := fs.Int("rate", 50, "pods a second created in the source")
	seconds := fs.Int("seconds", 30, "how long pods are created")
	_ = fs.Parse(args)
	ctx := context.Background()

	f := app.DefaultFlags()
	f.Addr = "127.0.0.1:0"
	source, err := app.Start(ctx, f, quiet)
	if err != nil {
		return err
	}
	defer source.Close()
	if err := workload(ctx, source.Client, *nodes, 0, ""); err != nil {
		return err
	}
	began := time.Now()
	f.Mirror = source.ControlPlane.KubeconfigPath()
	dest, err := app.Start(ctx, f, quiet)
	if err != nil {
		return err
	}
	defer dest.Close()
	fmt.Printf("mirror of %d nodes ready in %.1fs\n", *nodes, time.Since(began).Seconds())

	// When each pod was created in the source, seen in the copy, and seen
	// there with the real node.
	var mu sync.Mutex
	created, seen, real := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	done := make(chan struct{}, 1)
	total := *rate * *seconds
	note := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, ok := seen[p.Name]; !ok {
			seen[p.Name] = now
		}
		if _, ok := real[p.Name]; !ok && p.Annotations["minisched.io/real-node"] != "" {
			real[p.Name] = now
			if len(real) == total {
				done <- struct{}{}
			}
		}
	}
	factory := informers.NewSharedInformerFactory(dest.Client, 0)
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) }}); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	tick := time.NewTicker(time.Second / time.Duration(*rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	var maxBehind int
	var maxLag time.Duration
	for i := range total {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("m-%05d", i)},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m")}}}}}}
			if _, err := source.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				fmt.Println("creating", p.Name, err)
				return
			}
			mu.Lock()
			created[p.Name] = time.Now()
			mu.Unlock()
		}()
		if i%*rate == 0 {
			st := dest.Mirror.Status()
			maxBehind, maxLag = max(maxBehind, st.Behind), max(maxLag, st.Lag)
		}
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		fmt.Println("not every pod reached the copy with its real node within 2 minutes")
	}
	mu.Lock()
	defer mu.Unlock()
	var lags, binds []time.Duration
	for name, t := range created {
		if s, ok := seen[name]; ok {
			// A pod the informer saw before its create returned has no lag.
			lags = append(lags, max(s.Sub(t), 0))
			if r, ok := real[name]; ok {
				binds = append(binds, r.Sub(s))
			}
		}
	}
	slices.Sort(lags)
	slices.Sort(binds)
	q := func(l []time.Duration, f float64) time.Duration {
		if len(l) == 0 {
			return 0
		}
		return l[int(float64(len(l)-1)*f)].Round(time.Millisecond)
	}
	fmt.Printf("mirror: %d pods at %d/s into %d nodes; in the copy: %d; with the real node: %d\n", total, *rate, *nodes, len(seen), len(real))
	fmt.Printf("mirror: lag source create -> copy p50 %v p99 %v max %v; copy -> real node p50 %v p99 %v; mirror said at most %d behind, %v\n",
		q(lags, 0.5), q(lags, 0.99), q(lags, 1), q(binds, 0.5), q(binds, 0.99), maxBehind, maxLag.Round(time.Millisecond))
	return nil
}
