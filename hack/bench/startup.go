package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

// startup runs the binary several times and reports how long it takes from
// the process start to /readyz 200, and the peak RSS once idle. With
// -nodes, every start is a restart on a --data-dir that already holds that
// many nodes.
func startup(args []string) error {
	fs := flagSet("startup")
	bin := fs.String("bin", "bin/minisched", "the minisched binary")
	runs := fs.Int("runs", 5, "how many starts")
	idle := fs.Duration("idle", 5*time.Second, "how long to stay idle before reading the peak RSS")
	nodes := fs.Int("nodes", 0, "restart on a data directory holding this many nodes")
	flags := fs.String("args", "", "more flags for the binary, space-separated (--controllers= --kubelets=false: the bare cluster)")
	_ = fs.Parse(args)
	extra := strings.Fields(*flags)
	if *nodes > 0 {
		dir, err := os.MkdirTemp("", "minisched-startup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		extra = append(extra, "--data-dir", dir, "--max-nodes", fmt.Sprint(*nodes))
		if err := populate(*bin, extra, *nodes); err != nil {
			return fmt.Errorf("creating %d nodes: %w", *nodes, err)
		}
	}
	var ready []time.Duration
	var rss []int
	for i := 0; i < *runs; i++ {
		d, kb, err := startOnce(*bin, *idle, extra...)
		if err != nil {
			return err
		}
		fmt.Printf("run %d: ready after %v, peak RSS %d MB\n", i+1, d.Round(time.Millisecond), kb/1024)
		ready, rss = append(ready, d), append(rss, kb)
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i] < ready[j] })
	sort.Ints(rss)
	fmt.Printf("startup: median %v (min %v, max %v) to /readyz 200; peak RSS idle median %d MB (max %d MB)\n",
		ready[len(ready)/2].Round(time.Millisecond), ready[0].Round(time.Millisecond), ready[len(ready)-1].Round(time.Millisecond),
		rss[len(rss)/2]/1024, rss[len(rss)-1]/1024)
	return nil
}

func startOnce(bin string, idle time.Duration, extra ...string) (time.Duration, int, error) {
	begun := time.Now()
	p, err := startBinary(bin, extra...)
	if err != nil {
		return 0, 0, err
	}
	defer p.stop()
	d := time.Since(begun)
	time.Sleep(idle)
	kb, err := procStatusKB(p.cmd.Process.Pid, "VmHWM")
	return d, kb, err
}

// running is a minisched process, ready.
type running struct {
	cmd *exec.Cmd
	url string
}

// startBinary starts bin on a free loopback port and waits for /readyz 200.
func startBinary(bin string, extra ...string) (*running, error) {
	cmd := exec.Command(bin, append([]string{"--addr", "127.0.0.1:0"}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	begun := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &running{cmd: cmd}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("reading the dashboard URL: %w", err)
	}
	p.url = strings.TrimSpace(strings.TrimPrefix(line, "minisched dashboard: "))
	for {
		resp, err := http.Get(p.url + "readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Since(begun) > time.Minute {
			p.stop()
			return nil, fmt.Errorf("not ready after a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *running) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// populate starts bin once and creates nodes through its REST API.
func populate(bin string, extra []string, nodes int) error {
	p, err := startBinary(bin, extra...)
	if err != nil {
		return err
	}
	defer p.stop()
	return parallel(nodes, func(i int) error {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%04d"},"status":{"allocatable":{"cpu":"32","memory":"64Gi","pods":"110"}}}`, i)
		resp, err := http.Post(p.url+"api/v1/nodes", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("POST node-%04d: %s", i, resp.Status)
		}
		return nil
	})
}

// procStatusKB reads one of a process's memory figures (VmRSS, VmHWM), in kB,
// from /proc.
func procStatusKB(pid int, field string) (int, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if value, ok := strings.CutPrefix(l, field+":"); ok {
			kb := 0
			_, err := fmt.Sscanf(strings.TrimSpace(value), "%d", &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
