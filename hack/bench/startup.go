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
// the process start to /readyz 200, and the peak RSS once idle.
func startup(args []string) error {
	fs := flagSet("startup")
	bin := fs.String("bin", "bin/minisched", "the minisched binary")
	runs := fs.Int("runs", 5, "how many starts")
	idle := fs.Duration("idle", 5*time.Second, "how long to stay idle before reading the peak RSS")
	_ = fs.Parse(args)
	var ready []time.Duration
	var rss []int
	for i := 0; i < *runs; i++ {
		d, kb, err := startOnce(*bin, *idle)
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

func startOnce(bin string, idle time.Duration) (time.Duration, int, error) {
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	begun := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return 0, 0, fmt.Errorf("reading the dashboard URL: %w", err)
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "minisched dashboard: "))
	for {
		resp, err := http.Get(url + "readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(begun) > time.Minute {
			return 0, 0, fmt.Errorf("not ready after a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := time.Since(begun)
	time.Sleep(idle)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	kb := 0
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")), "%d", &kb)
		}
	}
	return d, kb, nil
}
