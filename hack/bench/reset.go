package main

import (
	"context"
	"fmt"
	"time"

	"minisched/app"
)

// reset fills the cluster, lets the pods bind, and times a reset (what the
// dashboard's Reset and "reset and run" do) several times.
func reset(args []string) error {
	fs := flagSet("reset")
	nodes := fs.Int("nodes", 50, "nodes")
	pods := fs.Int("pods", 300, "pods")
	runs := fs.Int("runs", 3, "resets to time")
	_ = fs.Parse(args)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := app.DefaultFlags()
	f.Addr = "127.0.0.1:0"
	inst, err := app.Start(ctx, f, quiet)
	if err != nil {
		return err
	}
	defer inst.Close()
	var took []time.Duration
	for range *runs {
		counter := countBound(inst.Client, *pods)
		if err := workload(ctx, inst.Client, *nodes, *pods, "10m"); err != nil {
			return err
		}
		if err := counter.wait(10 * time.Minute); err != nil {
			return err
		}
		begun := time.Now()
		if err := inst.Cluster.Reset(ctx); err != nil {
			return err
		}
		took = append(took, time.Since(begun).Round(time.Millisecond))
	}
	fmt.Printf("reset: %d nodes and %d bound pods emptied in %v\n", *nodes, *pods, took)
	return nil
}
