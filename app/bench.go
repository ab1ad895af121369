package app

// `minisched bench`: upstream's scheduler_perf workloads on minisched, and
// on kube-scheduler beside it, each run on a fresh embedded control plane
// in a process of its own, with what each of minisched's plugins cost.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/controllers"
	"minisched/event"
	"minisched/history"
	"minisched/k8sapiserver"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
	"minisched/schedperf"
)

const kubeScheduler = "kube-scheduler"

// benchReport is what `minisched bench -o json` prints.
type benchReport struct {
	Workload string `json:"workload"`
	Rounds   []struct {
		Runs []benchRun `json:"runs"`
	} `json:"rounds"`
	// Plugins are minisched's plugins over every round.
	Plugins   []schedperf.PluginRow `json:"plugins"`
	Cycles    int                   `json:"cycles"`
	CycleTime time.Duration         `json:"cycleTime"`
}

// benchRun is one scheduler's run of the workload.
type benchRun struct {
	Scheduler string              `json:"scheduler"`
	Measures  []schedperf.Measure `json:"measures"`
}

func bench(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) error {
	fset := newFlagSet("minisched bench", stderr)
	dir := fset.String("workloads", "", "a directory of scheduler_perf performance-config.yaml files (default: upstream's, in the Go module cache)")
	against := fset.String("against", "", "also run the workload on kube-scheduler (kube-scheduler), alternating which goes first")
	rounds := fset.Int("rounds", 1, "run the workload this many times on each scheduler")
	list := fset.Bool("list", false, "list the workloads, each supported or skipped with why")
	output := fset.String("output", "text", "report format: text or json")
	htmlOut := fset.String("html", "", "also write the report as a self-contained HTML page, with its charts in SVG, to this file")
	schedulerConfig := fset.String("scheduler-config", "", "a KubeSchedulerConfiguration for both schedulers (default: the test case's, else kube-scheduler's defaults)")
	timeout := fset.Duration("timeout", 10*time.Minute, "the longest wait for pods to be scheduled (upstream's)")
	cpuProfile := fset.String("cpuprofile", "", "write a CPU profile of each run, the cluster's creation included, to FILE.<scheduler>.<round> (go tool pprof reads it)")
	// One run, in the process the report's process starts for it: a run
	// beside what earlier runs left (their control planes' goroutines and
	// heap) would not measure the same, and a second embedded etcd in one
	// process does not start.
	runOne := fset.String("run-one", "", "")
	_ = fset.MarkHidden("run-one")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: minisched bench [flags] TESTCASE/WORKLOAD\n\nRuns one of upstream's scheduler_perf workloads (such as SchedulingBasic/5Nodes) on\nminisched, each scheduler on an embedded control plane of its own, and reports\nthe pods/s, upstream's SchedulingThroughput, the CPU and API calls per pod, and\nwhat each plugin costs at each extension point.\n\nFlags:\n")
		fset.PrintDefaults()
	}
	if err := parse(fset, args, stderr); err != nil {
		return err
	}
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case *against != "" && *against != kubeScheduler:
		return fmt.Errorf("--against %q: want %s", *against, kubeScheduler)
	case *runOne != "" && *runOne != "minisched" && *runOne != kubeScheduler:
		return fmt.Errorf("--run-one %q: want minisched or %s", *runOne, kubeScheduler)
	case *output != "text" && *output != "json":
		return fmt.Errorf("--output %q: want text or json", *output)
	case *rounds < 1:
		return fmt.Errorf("--rounds %d: want 1 or more", *rounds)
	case !*list && fset.NArg() != 1:
		return fmt.Errorf("name one workload, such as SchedulingBasic/5Nodes (--list lists them)")
	}
	if *dir == "" {
		d, err := schedperf.UpstreamDir()
		if err != nil {
			return err
		}
		*dir = d
	}
	cases, err := schedperf.Load(*dir)
	if err != nil {
		return err
	}
	QuietKlog(0)
	if *list {
		return listWorkloads(stdout, cases, *dir)
	}
	tc, w, err := schedperf.Find(cases, fset.Arg(0))
	if err != nil {
		return err
	}
	ops, err := plan(tc, w)
	if err != nil {
		return err
	}
	// The gates first: the configuration's defaults read them
	// (GenericWorkload adds GangScheduling).
	restore, err := setFeatureGates(tc.Gates(w))
	if err != nil {
		return err
	}
	defer restore()
	cfg, err := benchConfig(*schedulerConfig, tc)
	if err != nil {
		return err
	}

	if *runOne != "" {
		if *cpuProfile != "" {
			stop, err := startCPUProfile(*cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
		}
		plugins := schedperf.NewPlugins()
		m, err := benchOnce(ctx, *runOne, tc, tc.Gates(w), ops, cfg, o.outOfTree, plugins, *timeout, func(s string) { fmt.Fprintf(stderr, "  %s\n", s) })
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(oneBench{Measures: m, Plugins: plugins.Record()})
	}
	schedulers := []string{"minisched"}
	if *against != "" {
		schedulers = append(schedulers, *against)
	}
	childArgs := []string{"--workloads", *dir, "--timeout", timeout.String()}
	if *schedulerConfig != "" {
		childArgs = append(childArgs, "--scheduler-config", *schedulerConfig)
	}
	plugins := schedperf.NewPlugins()
	rep := benchReport{Workload: fset.Arg(0)}
	for r := range *rounds {
		order := schedulers
		if r%2 == 1 && len(order) == 2 {
			order = []string{order[1], order[0]}
		}
		var round struct {
			Runs []benchRun `json:"runs"`
		}
		for _, which := range order {
			fmt.Fprintf(stderr, "round %d: %s on %s\n", r+1, fset.Arg(0), which)
			args := append(slices.Clone(childArgs), "--run-one", which)
			profile := ""
			if *cpuProfile != "" {
				profile = fmt.Sprintf("%s.%s.%d", *cpuProfile, which, r+1)
				args = append(args, "--cpuprofile", profile)
			}
			one, err := benchIsolated(ctx, append(args, fset.Arg(0)), stderr)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", fset.Arg(0), which, err)
			}
			if profile != "" {
				fmt.Fprintf(stderr, "  wrote its CPU profile to %s\n", profile)
			}
			if err := plugins.Merge(one.Plugins); err != nil {
				return fmt.Errorf("%s on %s: its plugins: %w", fset.Arg(0), which, err)
			}
			round.Runs = append(round.Runs, benchRun{Scheduler: which, Measures: one.Measures})
		}
		rep.Rounds = append(rep.Rounds, round)
	}
	rep.Plugins, rep.Cycles, rep.CycleTime = plugins.Rows()
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeBench(stdout, &rep)
	}
	// After the report is out: a file that cannot be written loses nothing.
	if *htmlOut != "" {
		var page bytes.Buffer
		if err := writeBenchHTML(&page, &rep, time.Now()); err != nil {
			return fmt.Errorf("the HTML report: %w", err)
		}
		if err := os.WriteFile(*htmlOut, page.Bytes(), 0o644); err != nil {
			return fmt.Errorf("the HTML report: %w", err)
		}
		fmt.Fprintf(stderr, "wrote the report to %s\n", *htmlOut)
	}
	return nil
}

// startCPUProfile profiles the process into file until the returned stop.
func startCPUProfile(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// oneBench is what a run's process prints.
type oneBench struct {
	Measures []schedperf.Measure `json:"measures"`
	Plugins  schedperf.Recorded  `json:"plugins"`
}

// benchIsolated runs `bench args` in a process of its own: this binary,
// with the plugins it was built with. Its progress goes to stderr.
func benchIsolated(ctx context.Context, args []string, stderr io.Writer) (*oneBench, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to run it again: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, append([]string{"bench"}, args...)...)
	cmd.Stderr = stderr
	// SIGTERM first, so that the run closes its control plane and removes
	// its temporary directory.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("its process: %w", err)
	}
	var one oneBench
	if err := json.Unmarshal(out, &one); err != nil {
		return nil, fmt.Errorf("reading its figures: %w", err)
	}
	return &one, nil
}

// plan reads the workload's ops and checks its gates; what minisched
// cannot run is a SkipError.
func plan(tc *schedperf.TestCase, w *schedperf.Workload) ([]any, error) {
	ops, err := schedperf.Plan(tc, w)
	if err != nil {
		return nil, err
	}
	if err := checkFeatureGates(tc.Gates(w)); err != nil {
		return nil, &schedperf.SkipError{Reason: "feature gates: " + err.Error()}
	}
	return ops, nil
}

// benchConfig is the flag's configuration, else the test case's
// schedulerConfigPath, else kube-scheduler's defaults.
func benchConfig(path string, tc *schedperf.TestCase) (*config.KubeSchedulerConfiguration, error) {
	if path == "" && tc.SchedulerConfigPath != "" {
		path = tc.File(tc.SchedulerConfigPath)
	}
	if path == "" {
		return schedconfig.Default("")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the scheduler configuration: %w", err)
	}
	return schedconfig.Load(data, "")
}

// benchOnce runs the workload once on a fresh control plane with one
// scheduler. minisched records every event in a history, as the dashboard's
// process does, and its plugins' times in plugins.
func benchOnce(ctx context.Context, which string, tc *schedperf.TestCase, gates map[string]bool, ops []any, cfg *config.KubeSchedulerConfiguration,
	outOfTree frameworkruntime.Registry, plugins *schedperf.Plugins, timeout time.Duration, progress func(string)) ([]schedperf.Measure, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The admission plugins upstream's scheduler_perf turns off: its
	// templates set a pod's priority without a class.
	cp, err := k8sapiserver.Start(ctx, k8sapiserver.Config{
		DisableAdmissionPlugins: append(k8sapiserver.DefaultDisabledAdmissionPlugins(), "Priority"),
		RuntimeConfig:           schedperf.RuntimeConfig(gates)})
	if err != nil {
		return nil, err
	}
	defer cp.Close()
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return nil, err
	}
	mgr, err := controllers.Start(ctx, controllers.Config{RESTConfig: cp.RESTConfig(), Controllers: benchControllers(gates)})
	if err != nil {
		return nil, err
	}
	defer mgr.Close()
	if which == kubeScheduler {
		stop, err := schedperf.StartKubeScheduler(ctx, client, cfg, outOfTree)
		if err != nil {
			return nil, err
		}
		defer stop()
	} else {
		svc := minisched.NewService(minisched.ServiceOptions{Client: client, RESTConfig: cp.RESTConfig(), OutOfTree: outOfTree,
			Observer: event.Multi(history.New(history.Options{}), plugins)})
		if err := svc.Start(ctx, cfg); err != nil {
			return nil, err
		}
		defer svc.Stop()
	}
	res, err := schedperf.Run(ctx, tc, ops, schedperf.Options{Client: client, RESTConfig: cp.RESTConfig(), Timeout: timeout, Progress: progress})
	if err != nil {
		return nil, err
	}
	return res.Measures, nil
}

// benchControllers are the controllers scheduler_perf's cluster runs beside
// the scheduler (mustSetupCluster): the garbage collector and the namespace
// controller, and the resourceclaim controller, which makes the claims of
// pods' templates, when the workload turns DRA on.
func benchControllers(gates map[string]bool) []string {
	ctrls := []string{names.GarbageCollectorController, names.NamespaceController}
	if gates[string(features.DynamicResourceAllocation)] {
		ctrls = append(ctrls, names.ResourceClaimController)
	}
	return ctrls
}

// listWorkloads prints every workload, supported or skipped with why.
func listWorkloads(w io.Writer, cases []*schedperf.TestCase, dir string) error {
	fmt.Fprintf(w, "workloads in %s:\n", dir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	supported, skipped := 0, 0
	for _, tc := range cases {
		for i := range tc.Workloads {
			wl := &tc.Workloads[i]
			status := "supported"
			if _, err := plan(tc, wl); err != nil {
				status = err.Error()
				skipped++
			} else {
				supported++
			}
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", tc.Name, wl.Name, strings.Join(append(append([]string{}, tc.Labels...), wl.Labels...), ","), status)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%d supported, %d skipped\n", supported, skipped)
	return nil
}

// writeBench prints the report for a person: each run's measured windows,
// the ratio of the schedulers' pods/s, and minisched's plugins.
func writeBench(w io.Writer, rep *benchReport) {
	fmt.Fprintf(w, "%s\n", rep.Workload)
	for i, round := range rep.Rounds {
		fmt.Fprintf(w, "\nround %d:\n", i+1)
		for _, run := range round.Runs {
			for _, m := range run.Measures {
				fmt.Fprintf(w, "  %-15s %s: %d of %d pods placed%s in %.2f s, %.1f pods/s; %s; %.2f ms CPU/pod; %s\n",
					run.Scheduler, m.Name, m.Placed, m.Pods, backlogWords(m), m.Seconds, m.PodsPerSecond, throughputWords(m.Throughput), m.CPUPerPod, m.APICalls)
			}
		}
	}
	writeRatio(w, rep)
	if len(rep.Plugins) == 0 {
		return
	}
	fmt.Fprintf(w, "\nminisched's plugins: %d scheduling cycles, %s in all (share: of that time; the binding cycle runs beside it)\n", rep.Cycles, rep.CycleTime.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tplugin\tcalls\tp50\tp90\tp99\ttotal\tshare\t")
	for _, r := range rep.Plugins {
		share := fmt.Sprintf("%.1f%%", 100*r.Share)
		if r.Binding {
			share = "binding"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", r.Point, r.Plugin, r.Calls, r.P50, r.P90, r.P99, r.Total.Round(time.Microsecond), share)
	}
	tw.Flush()
}

// writeRatio says how minisched's pods/s compare with kube-scheduler's,
// and whether both placed every pod; nothing without kube-scheduler.
func writeRatio(w io.Writer, rep *benchReport) {
	rates := map[string][]float64{}
	placedAll := map[string]bool{}
	for _, round := range rep.Rounds {
		for _, run := range round.Runs {
			if _, ok := placedAll[run.Scheduler]; !ok {
				placedAll[run.Scheduler] = true
			}
			for _, m := range run.Measures {
				rates[run.Scheduler] = append(rates[run.Scheduler], m.PodsPerSecond)
				placedAll[run.Scheduler] = placedAll[run.Scheduler] && m.Placed+m.Backlog >= m.Pods
			}
		}
	}
	a, b := rates["minisched"], rates[kubeScheduler]
	if len(a) == 0 || len(b) == 0 {
		return
	}
	fmt.Fprintf(w, "\nminisched's pods/s over kube-scheduler's: %.2f (means over the rounds: %.1f / %.1f)", mean(a)/mean(b), mean(a), mean(b))
	if placedAll["minisched"] && placedAll[kubeScheduler] {
		fmt.Fprintln(w, "; both placed every pod")
	} else {
		fmt.Fprintf(w, "; every pod placed: minisched %t, kube-scheduler %t\n", placedAll["minisched"], placedAll[kubeScheduler])
	}
}

// backlogWords names a steady state's backlog: pods made and, by design,
// pending at the window's end.
func backlogWords(m schedperf.Measure) string {
	if m.Backlog == 0 {
		return ""
	}
	return fmt.Sprintf(" (a steady state with a backlog of %d)", m.Backlog)
}

func throughputWords(t *schedperf.Throughput) string {
	if t == nil {
		return "SchedulingThroughput: no sample (the window was under a second or two)"
	}
	return fmt.Sprintf("SchedulingThroughput average %.1f, p50 %.1f, p90 %.1f, p99 %.1f pods/s (%d samples)", t.Average, t.Perc50, t.Perc90, t.Perc99, t.Samples)
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
