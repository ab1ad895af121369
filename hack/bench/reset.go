package main

import (
	"context"
	"fmt"
	"time"

	"minisched/app"
)

// reset fills the cluster, lets the pods bind (and the pending ones fail
// once), and times a reset (what the dashboard's Reset and "reset and run"
// do) several times, counting the scheduling cycles begun meanwhile: the
// scheduler is held, so none should be.
func reset(args []string) error {
	fs := flagSet("reset")
	nodes := fs.Int("nodes", 50, "nodes")
	pods := fs.Int("pods", 300, "pods that fit and bind")
	pending := fs.Int("pending", 0, "pods that fit nowhere and wait, tried again as the bound pods go")
	runs := fs.Int("runs", 3, "resets to time")
	_ = fs.Parse(args)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := app.DefaultFlags()
	f.Addr = "127.0.0.1:0"
	f.MaxPods = max(f.MaxPods, *pods+*pending)
	f.MaxNodes = max(f.MaxNodes, *nodes)
	inst, err := app.Start(ctx, f, quiet)
	if err != nil {
		return err
	}
	defer inst.Close()
	var took []time.Duration
	var attempts []int64
	for range *runs {
		counter := countBound(inst.Client, *pods)
		if err := workload(ctx, inst.Client, *nodes, *pods, "10m"); err != nil {
			return err
		}
		if err := counter.wait(10 * time.Minute); err != nil {
			return err
		}
		before := inst.Scheduler.Cycles()
		if err := createPods(ctx, inst.Client, *pods, *pending, "1000"); err != nil {
			return err
		}
		// Each pending pod fails once before the reset begins.
		for deadline := time.Now().Add(10 * time.Minute); inst.Scheduler.Cycles()-before < int64(*pending); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%d of %d pending pods tried in 10 minutes", inst.Scheduler.Cycles()-before, *pending)
			}
		}
		cycles := inst.Scheduler.Cycles()
		begun := time.Now()
		if err := inst.Cluster.Reset(ctx); err != nil {
			return err
		}
		took = append(took, time.Since(begun).Round(time.Millisecond))
		attempts = append(attempts, inst.Scheduler.Cycles()-cycles)
	}
	fmt.Printf("reset: %d nodes, %d bound pods and %d pending pods emptied in %v; scheduling cycles begun meanwhile: %v\n", *nodes, *pods, *pending, took, attempts)
	return nil
}
