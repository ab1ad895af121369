package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"minisched/app"
	"minisched/server/streamtest"
)

// stream schedules the same pods with no stream client and with many, and
// reports the scheduler's pods/s in each case, whether every client got
// every event, and the delay from an event (a plugin call's result) to a
// client's receipt.
func stream(args []string) error {
	fs := flagSet("stream")
	clients := fs.Int("clients", 20, "stream clients in the runs with clients")
	nodes := fs.Int("nodes", 100, "nodes")
	pods := fs.Int("pods", 1000, "pods")
	matrices := fs.String("matrices", "full", "what the clients ask of Filter and Score events: full or compact (?matrices=)")
	rounds := fs.Int("rounds", 1, "rounds, alternating which run goes first (with clients or without), so that a disturbed moment of a noisy machine does not fall on one side only")
	_ = fs.Parse(args)
	var base, with []float64
	complete := true
	var p99 time.Duration
	for r := 0; r < *rounds; r++ {
		order := []int{0, *clients}
		if r%2 == 1 {
			order = []int{*clients, 0}
		}
		for _, n := range order {
			rate, res, err := streamRun(n, *nodes, *pods, *matrices)
			if err != nil {
				return err
			}
			if n == 0 {
				base = append(base, rate)
				fmt.Printf("round %d no clients:  %7.1f pods/s\n", r+1, rate)
				continue
			}
			with = append(with, rate)
			complete = complete && res.complete
			p99 = max(p99, res.p99)
			fmt.Printf("round %d %d clients: %7.1f pods/s; every client got all %d events: %v; delay p50 %v p99 %v max %v\n",
				r+1, n, rate, res.events, res.complete, res.p50, res.p99, res.max)
		}
	}
	fmt.Printf("stream: %d pods on %d nodes, %s matrices, %d rounds: pods/s with %d clients / without = %.2f (%.1f / %.1f); every client got every event: %v; worst p99 delay %v\n",
		*pods, *nodes, *matrices, *rounds, *clients, mean(with)/mean(base), mean(with), mean(base), complete, p99)
	return nil
}

type streamResult struct {
	events        uint64
	complete      bool
	p50, p99, max time.Duration
}

func streamRun(clients, nodes, pods int, matrices string) (float64, streamResult, error) {
	var res streamResult
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := app.DefaultFlags()
	f.Addr, f.Paused = "127.0.0.1:0", true
	inst, err := app.Start(ctx, f, quiet)
	if err != nil {
		return 0, res, err
	}
	defer inst.Close()
	if err := workload(ctx, inst.Client, nodes, pods, "10m"); err != nil {
		return 0, res, err
	}
	for inst.Scheduler.Scheduler().NodeCount() < nodes || len(inst.Scheduler.Scheduler().Queue().List()) < pods {
		time.Sleep(50 * time.Millisecond)
	}
	var cs []*streamtest.Follower
	var conns []*websocket.Conn
	var done []chan struct{}
	// Read the way a browser does, in large pieces: gorilla's default 4 KB
	// buffer would cost these followers a system call per 4 KB of a matrix.
	dialer := websocket.Dialer{ReadBufferSize: 64 << 10}
	url := "ws" + strings.TrimPrefix(inst.URL, "http") + "api/v1/stream?matrices=" + matrices
	for i := 0; i < clients; i++ {
		conn, _, err := dialer.Dial(url, nil)
		if err != nil {
			return 0, res, err
		}
		f := &streamtest.Follower{}
		d := make(chan struct{})
		go func() { defer close(d); f.Read(conn) }()
		cs, conns, done = append(cs, f), append(conns, conn), append(done, d)
	}
	// Every client takes its snapshot before the scheduler starts: a
	// snapshot of 5,000 nodes and 10,000 pods costs the server a quarter of
	// a second of CPU each, which is the cost of connecting, not of
	// following the scheduler.
	for i, f := range cs {
		for f.Stats().Messages == 0 {
			select {
			case <-done[i]:
				return 0, res, fmt.Errorf("stream client %d: the connection closed before its snapshot came", i+1)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	counter := countBound(inst.Client, pods)
	fmt.Fprintf(os.Stderr, "scheduling %d pods with %d clients\n", pods, clients)
	begun := time.Now()
	inst.Scheduler.Resume()
	if err := counter.wait(10 * time.Minute); err != nil {
		return 0, res, err
	}
	rate := float64(pods) / time.Since(begun).Seconds()

	// Every bound pod's binding end must reach every client.
	time.Sleep(2 * time.Second)
	target := inst.Recorder.LastSeq()
	deadline := time.Now().Add(time.Minute)
	res.complete = true
	var all []time.Duration
	for i, f := range cs {
		for f.Last() < target && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		conns[i].Close()
		st := f.Stats()
		res.complete = res.complete && st.Last >= target && st.Gaps == 0 && st.Resyncs == 0
		all = append(all, st.Delays...)
	}
	for _, d := range done {
		<-d
	}
	res.events = target
	if len(all) > 0 {
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		res.p50, res.p99, res.max = all[len(all)/2], all[len(all)*99/100], all[len(all)-1]
	}
	return rate, res, nil
}
