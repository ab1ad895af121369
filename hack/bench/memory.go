package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/app"
)

// memory schedules many pods in batches and reports the heap and the
// process's RSS after each batch. With -churn (the default) each batch is
// deleted once bound, so the cluster stays the same size and only the
// history could grow: once it is full, memory must stop growing. Without it
// the cluster grows to every pod: RSS is then the cluster's size plus the
// history cap.
func memory(args []string) error { return memoryRun("memory", 100, 10000, args) }

// churn is memory's long run: 100,000 pods created and deleted. With -pace
// it keeps to a rate, as a long-lived cluster does: much of what
// kube-apiserver keeps (its watch cache's recent changes, Events until their
// TTL) is a time window, so its size follows the rate, not the count.
func churn(args []string) error { return memoryRun("churn", 100, 100_000, args) }

func memoryRun(name string, defaultNodes, defaultPods int, args []string) error {
	fs := flagSet(name)
	nodes := fs.Int("nodes", defaultNodes, "nodes")
	pods := fs.Int("pods", defaultPods, "pods, in batches")
	batch := fs.Int("batch", 1000, "pods per batch")
	history := fs.Int("history", 500_000, "the history cap (--history)")
	churn := fs.Bool("churn", true, "delete each batch once it is bound")
	pace := fs.Float64("pace", 0, "pods per second at most, over the whole run (0: as fast as they bind); a batch starts no sooner than the pace allows")
	settle := fs.Duration("settle", 0, "then wait this long and report the heap again: past the embedded apiserver's Event TTL (10m) and etcd's compaction (5m), what is left is what a long workshop keeps")
	_ = fs.Parse(args)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := app.DefaultFlags()
	f.Addr, f.History = "127.0.0.1:0", *history
	inst, err := app.Start(ctx, f, quiet)
	if err != nil {
		return err
	}
	defer inst.Close()
	if err := workload(ctx, inst.Client, *nodes, 0, "10m"); err != nil {
		return err
	}
	var first, peak uint64
	var firstRSS, peakRSS int
	start := time.Now()
	for done := 0; done < *pods; done += *batch {
		if *pace > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(done) / *pace * float64(time.Second)))))
		}
		target := done + *batch
		if *churn {
			target = *batch
		}
		counter := countBound(inst.Client, target)
		if err := createPods(ctx, inst.Client, done, *batch, "10m"); err != nil {
			return err
		}
		if err := counter.wait(10 * time.Minute); err != nil {
			return err
		}
		if *churn {
			if err := deleteAllPods(ctx, inst); err != nil {
				return err
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := inst.Recorder.Stats()
		rss, err := procStatusKB(os.Getpid(), "VmRSS")
		if err != nil {
			return err
		}
		fmt.Printf("%s %6d pods bound: heap in use %4d MB, RSS %4d MB; history %7d events, weight %7d of %d, dropped %d\n",
			time.Since(start).Round(time.Second), done+*batch, ms.HeapInuse>>20, rss>>10, st.Events, st.Weight, st.MaxWeight, st.Dropped)
		if first == 0 {
			first, firstRSS = ms.HeapInuse, rss
		}
		peak, peakRSS = max(peak, ms.HeapInuse), max(peakRSS, rss)
	}
	if *settle > 0 {
		time.Sleep(*settle)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("after %v idle: heap in use %d MB\n", *settle, ms.HeapInuse>>20)
	}
	if path := os.Getenv("BENCH_HEAPPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	fmt.Printf("%s: %d pods on %d nodes (churn %v) with --history %d: heap after the first batch %d MB, at most %d MB; RSS after the first batch %d MB, at most %d MB (this process also holds etcd and the apiserver)\n",
		name, *pods, *nodes, *churn, *history, first>>20, peak>>20, firstRSS>>10, peakRSS>>10)
	return nil
}

func deleteAllPods(ctx context.Context, inst *app.Instance) error {
	zero := int64(0)
	pods := inst.Client.CoreV1().Pods("default")
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		return err
	}
	for {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}
