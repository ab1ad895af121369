package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"minisched/app"
)

// stream schedules the same pods with no stream client and with many, and
// reports the scheduler's pods/s in each case, whether every client got
// every event, and the delay from an event (a plugin call's result) to a
// client's receipt.
func stream(args []string) error {
	fs := flagSet("stream")
	clients := fs.Int("clients", 20, "stream clients in the second run")
	nodes := fs.Int("nodes", 100, "nodes")
	pods := fs.Int("pods", 1000, "pods")
	_ = fs.Parse(args)
	base, _, err := streamRun(0, *nodes, *pods)
	if err != nil {
		return err
	}
	fmt.Printf("no clients:  %7.1f pods/s\n", base)
	with, res, err := streamRun(*clients, *nodes, *pods)
	if err != nil {
		return err
	}
	fmt.Printf("%d clients: %7.1f pods/s; every client got all %d events: %v; delay p50 %v p99 %v max %v\n",
		*clients, with, res.events, res.complete, res.p50, res.p99, res.max)
	fmt.Printf("stream: %d pods on %d nodes: pods/s with %d clients / without = %.2f; p99 delay %v\n",
		*pods, *nodes, *clients, with/base, res.p99)
	return nil
}

type streamResult struct {
	events        uint64
	complete      bool
	p50, p99, max time.Duration
}

type benchClient struct {
	conn   *websocket.Conn
	mu     sync.Mutex
	last   uint64
	gaps   int
	delays []time.Duration
}

// read follows the stream the way a dashboard would, but parses only what
// the figures need, so that twenty clients in this process cost little: the
// order of the batches, and the age of the oldest event of each batch when
// it arrives (the worst delay in it).
func (c *benchClient) read(done chan struct{}) {
	defer close(done)
	var buf bytes.Buffer
	for {
		// One buffer for every message: allocating one each would cost this
		// process more garbage collection than the server spends writing.
		_, r, err := c.conn.NextReader()
		if err != nil {
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return
		}
		data := buf.Bytes()
		now := time.Now()
		c.mu.Lock()
		switch {
		case bytes.HasPrefix(data, []byte(`{"type":"snapshot"`)):
			c.last = number(data, `"seq":`)
		case bytes.HasPrefix(data, []byte(`{"type":"resync"`)):
			c.gaps++
		case bytes.HasPrefix(data, []byte(`{"type":"events"`)):
			if number(data, `"events":[{"seq":`) != c.last+1 {
				c.gaps++
			}
			c.last = number(data, `"lastSeq":`)
			if t, ok := firstTime(data); ok {
				c.delays = append(c.delays, now.Sub(t))
			}
		}
		c.mu.Unlock()
	}
}

// number reads the integer after the first occurrence of key.
func number(data []byte, key string) uint64 {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return 0
	}
	rest := data[i+len(key):]
	end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	n, _ := strconv.ParseUint(string(rest[:end]), 10, 64)
	return n
}

// firstTime reads the first event's time.
func firstTime(data []byte) (time.Time, bool) {
	const key = `"time":"`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return time.Time{}, false
	}
	rest := data[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	return t, err == nil
}

func streamRun(clients, nodes, pods int) (float64, streamResult, error) {
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
	var cs []*benchClient
	var done []chan struct{}
	url := "ws" + strings.TrimPrefix(inst.URL, "http") + "api/v1/stream"
	for i := 0; i < clients; i++ {
		conn, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			return 0, res, err
		}
		c := &benchClient{conn: conn}
		d := make(chan struct{})
		go c.read(d)
		cs, done = append(cs, c), append(done, d)
	}
	time.Sleep(time.Second) // let every client take its snapshot
	counter := countBound(inst.Client, pods)
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
	for _, c := range cs {
		for {
			c.mu.Lock()
			last, gaps := c.last, c.gaps
			c.mu.Unlock()
			if last >= target || time.Now().After(deadline) {
				res.complete = res.complete && last >= target && gaps == 0
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		c.conn.Close()
		c.mu.Lock()
		all = append(all, c.delays...)
		c.mu.Unlock()
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
