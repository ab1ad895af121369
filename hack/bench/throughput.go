package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minisched/controllers"
	"minisched/history"
	"minisched/k8sapiserver"
	"minisched/kubelet"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
	"minisched/schedperf"
)

// throughput binds the same pre-created pods with minisched (every event
// reported into the history) and with kube-scheduler, each on a fresh
// control plane in a process of its own, and compares pods per second.
func throughput(args []string) error {
	fs := flagSet("throughput")
	nodes := fs.Int("nodes", 500, "nodes")
	pods := fs.Int("pods", 2000, "pods, created before the scheduler starts")
	rounds := fs.Int("rounds", 2, "rounds, alternating which scheduler goes first")
	only := fs.String("only", "", "run only this one (minisched, kube-scheduler or binds), to profile it")
	identical := fs.Bool("identical", false, "make every pod alike (kube-scheduler's opportunistic batching then reuses one pod's results for the next)")
	ceiling := fs.Bool("ceiling", true, "also measure the control plane's ceiling: binds from 16 parallel writers, with no scheduling")
	withCluster := fs.Bool("cluster", false, "also run minisched on a cluster with kube-controller-manager's controllers and the simulated kubelets (minisched+cluster), against the bare one")
	lease := fs.Duration("lease-duration", kubelet.DefaultLeaseDuration, "with -cluster: the kubelets' Lease duration, as minisched's --node-lease-duration")
	_ = fs.Parse(args)
	var mini, up, binds, miniCPU, upCPU, full, fullCPU []float64
	for r := 0; r < *rounds; r++ {
		order := []string{"minisched", "kube-scheduler"}
		if r%2 == 1 {
			order = []string{"kube-scheduler", "minisched"}
		}
		if *withCluster {
			order = append(order, "minisched+cluster")
			if r%2 == 1 {
				order = append([]string{"minisched+cluster"}, order[:len(order)-1]...)
			}
		}
		if *ceiling {
			order = append(order, "binds")
		}
		for _, which := range order {
			if *only != "" && which != *only {
				continue
			}
			cpu := ""
			if *identical {
				cpu = "10m"
			}
			res, err := isolated(which, *nodes, *pods, cpu, *lease)
			if err != nil {
				return fmt.Errorf("%s: %w", which, err)
			}
			rate, cpuPerPod := res.Rate, res.CPUPerPod
			fmt.Printf("round %d %-14s %7.1f pods/s %5.2f CPU ms/pod %s\n", r+1, which, rate, cpuPerPod, res.Detail)
			switch which {
			case "minisched":
				mini, miniCPU = append(mini, rate), append(miniCPU, cpuPerPod)
			case "kube-scheduler":
				up, upCPU = append(up, rate), append(upCPU, cpuPerPod)
			case "minisched+cluster":
				full, fullCPU = append(full, rate), append(fullCPU, cpuPerPod)
			default:
				binds = append(binds, rate)
			}
		}
	}
	if *only != "" {
		return nil
	}
	m, u := mean(mini), mean(up)
	kind := "varied"
	if *identical {
		kind = "identical"
	}
	fmt.Printf("throughput: %d %s pods on %d nodes: minisched %.1f pods/s, kube-scheduler %.1f pods/s, ratio %.2f\n", *pods, kind, *nodes, m, u, m/u)
	fmt.Printf("CPU per pod (the whole process): minisched %.2f ms, kube-scheduler %.2f ms; kube-scheduler's over minisched's %.2f\n", mean(miniCPU), mean(upCPU), mean(upCPU)/mean(miniCPU))
	if *withCluster {
		f := mean(full)
		fmt.Printf("with controllers and kubelets: minisched %.1f pods/s, %.2f of the bare cluster's; CPU per pod %.2f ms against %.2f\n", f, f/m, mean(fullCPU), mean(miniCPU))
	}
	if *ceiling {
		b := mean(binds)
		fmt.Printf("ceiling: %.1f binds/s with no scheduling; minisched at %.2f of it, kube-scheduler at %.2f\n", b, m/b, u/b)
	}
	return nil
}

// oneRun is one contender's figures, as throughput-one prints them.
type oneRun struct {
	Rate      float64 `json:"rate"`
	CPUPerPod float64 `json:"cpuPerPod"`
	Detail    string  `json:"detail"`
}

// isolated measures one contender in a process of its own (this binary's
// throughput-one). In one process, a round ran beside what the rounds
// before it left behind, their control planes' goroutines and heap, and
// the same scheduler's CPU per pod moved by up to 40% from round to round.
func isolated(which string, nodes, pods int, cpu string, lease time.Duration) (oneRun, error) {
	self, err := os.Executable()
	if err != nil {
		return oneRun{}, err
	}
	cmd := exec.Command(self, "throughput-one", "-which", which, "-nodes", strconv.Itoa(nodes), "-pods", strconv.Itoa(pods), "-cpu", cpu, "-lease-duration", lease.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return oneRun{}, fmt.Errorf("its process: %w", err)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var res oneRun
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil {
		return oneRun{}, fmt.Errorf("reading its figures from %q: %w", out, err)
	}
	return res, nil
}

// throughputOne is one contender's run, in the process isolated starts: it
// prints its figures as one line of JSON.
func throughputOne(args []string) error {
	fs := flagSet("throughput-one")
	which := fs.String("which", "minisched", "minisched, minisched+cluster, kube-scheduler or binds")
	nodes := fs.Int("nodes", 500, "nodes")
	pods := fs.Int("pods", 2000, "pods")
	cpu := fs.String("cpu", "", "every pod's CPU request; empty varies them")
	lease := fs.Duration("lease-duration", kubelet.DefaultLeaseDuration, "for minisched+cluster: the kubelets' Lease duration")
	_ = fs.Parse(args)
	rate, cpuPerPod, detail, err := bindRate(*which, *nodes, *pods, *cpu, *lease)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(oneRun{Rate: rate, CPUPerPod: cpuPerPod, Detail: detail})
}

// phaseProfile takes a CPU profile of the scheduling phase alone, from the
// scheduler's start to the last pod bound, into $BENCH_CPUPROFILE.<which>;
// the workload's creation is left out. Beside it go the allocation
// profiles at the phase's start and end (.allocs-start, .allocs-end: `go
// tool pprof -base` the one on the other). It returns what stops it, safe
// to call twice.
func phaseProfile(which string) func() {
	path := os.Getenv("BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	path += "." + which
	allocs := func(suffix string) {
		if f, err := os.Create(path + ".allocs-" + suffix); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
	}
	allocs("start")
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: the CPU profile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "bench: the CPU profile:", err)
		_ = f.Close()
		return func() {}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			_ = f.Close()
			allocs("end")
		})
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// bindRate returns pods bound per second, the process's CPU milliseconds
// per pod meanwhile, and a detail to print.
func bindRate(which string, nodes, pods int, cpu string, lease time.Duration) (float64, float64, string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cp, err := k8sapiserver.Start(ctx, k8sapiserver.Config{})
	if err != nil {
		return 0, 0, "", err
	}
	defer cp.Close()
	c := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	if which == "minisched+cluster" {
		// As the binary starts them: before any node or pod exists.
		k, err := kubelet.Start(ctx, kubelet.Config{Client: c, LeaseDuration: lease})
		if err != nil {
			return 0, 0, "", err
		}
		defer k.Close()
		// Node lifecycle's grace for that Lease, as the binary sets it.
		mgr, err := controllers.Start(ctx, controllers.Config{RESTConfig: cp.RESTConfig(), NodeMonitorGracePeriod: lease * 5 / 4})
		if err != nil {
			return 0, 0, "", err
		}
		defer mgr.Close()
	}
	if err := workload(ctx, c, nodes, pods, cpu); err != nil {
		return 0, 0, "", err
	}
	idle := ""
	if which == "minisched+cluster" {
		// A real cluster's nodes are Ready, with their Leases, before
		// anything is placed on them: the measured phase is scheduling,
		// not the nodes' first reports.
		stop := phaseProfile(which + ".nodes")
		err := nodesReady(ctx, c, nodes)
		stop()
		if err != nil {
			return 0, 0, "", err
		}
		// What the cluster costs with nothing to schedule: the Leases, the
		// controllers' loops. The scheduler gets what is left of the cores.
		cpu0, calls0 := schedperf.ProcessCPU(), schedperf.APICalls()
		stopIdle := phaseProfile(which + ".idle")
		time.Sleep(idleWindow)
		stopIdle()
		idle = fmt.Sprintf("\n    idle before scheduling: %.2f cores, %s", float64(schedperf.ProcessCPU()-cpu0)/float64(idleWindow),
			perSecond(calls0, schedperf.APICalls(), idleWindow))
	}
	counter := countBound(c, pods)
	cfg, err := schedconfig.Default("")
	if err != nil {
		return 0, 0, "", err
	}
	var detail func() string
	// The garbage of creating the workload is collected now, not charged
	// to the scheduler measured.
	runtime.GC()
	stopProfile := phaseProfile(which)
	defer stopProfile()
	cpuBefore, callsBefore := schedperf.ProcessCPU(), schedperf.APICalls()
	begun := time.Now()
	switch which {
	case "minisched", "minisched+cluster":
		rec := history.New(history.Options{})
		svc := minisched.NewService(minisched.ServiceOptions{Client: c, RESTConfig: cp.RESTConfig(), Observer: rec})
		if err := svc.Start(ctx, cfg); err != nil {
			return 0, 0, "", err
		}
		defer svc.Stop()
		detail = func() string {
			st := rec.Stats()
			return fmt.Sprintf("(%d events recorded, history weight %d, %d dropped to stay within the cap)", st.LastSeq, st.Weight, st.Dropped)
		}
	case "binds":
		// The ceiling: what the control plane takes with no scheduler,
		// each pod bound to a node chosen round robin.
		go func() {
			// A failed bind leaves the count short: say why before the wait times out.
			err := parallel(pods, func(i int) error {
				b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("pod-%05d", i)},
					Target: v1.ObjectReference{Kind: "Node", Name: fmt.Sprintf("node-%04d", i%nodes)}}
				return c.CoreV1().Pods("default").Bind(ctx, b, metav1.CreateOptions{})
			})
			if err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "binding:", err)
			}
		}()
		detail = func() string { return "(16 parallel writers)" }
	default:
		stop, err := schedperf.StartKubeScheduler(ctx, c, cfg, nil)
		if err != nil {
			return 0, 0, "", err
		}
		defer stop()
		detail = func() string { return "" }
	}
	if err := counter.wait(10 * time.Minute); err != nil {
		return 0, 0, "", err
	}
	elapsed := time.Since(begun)
	used := schedperf.ProcessCPU() - cpuBefore
	stopProfile()
	return float64(pods) / elapsed.Seconds(), float64(used.Microseconds()) / 1000 / float64(pods),
		detail() + "\n    " + perPod(callsBefore, schedperf.APICalls(), pods) + idle, nil
}

// idleWindow is how long the cluster's idle cost is measured.
const idleWindow = 20 * time.Second

// nodesReady waits until every node reports Ready and holds a Lease.
func nodesReady(ctx context.Context, c kubernetes.Interface, want int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	lastSaid := time.Now()
	for {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return fmt.Errorf("waiting for the nodes to be Ready: %w", err)
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == v1.NodeReady && cond.Status == v1.ConditionTrue {
					ready++
				}
			}
		}
		leases, err := c.CoordinationV1().Leases(v1.NamespaceNodeLease).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return fmt.Errorf("waiting for the nodes' Leases: %w", err)
		}
		if time.Since(lastSaid) > 10*time.Second {
			oldest := time.Duration(0)
			for _, l := range leases.Items {
				if l.Spec.RenewTime != nil {
					oldest = max(oldest, time.Since(l.Spec.RenewTime.Time))
				}
			}
			fmt.Fprintf(os.Stderr, "bench: %d of %d nodes Ready, %d Leases, the oldest renewed %v ago\n", ready, want, len(leases.Items), oldest.Round(time.Second))
			lastSaid = time.Now()
		}
		if ready == want && len(leases.Items) == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d nodes Ready, %d Leases: %w", ready, want, len(leases.Items), ctx.Err())
		// Each look lists every node and Lease: often enough, and not so
		// often that the bench itself starves the kubelets it waits for.
		case <-time.After(2 * time.Second):
		}
	}
}
