package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/whatif"
)

// whatIf is `minisched whatif --import-from KUBECONFIG --scheduler-config
// new.yaml`: it copies a cluster (or loads a snapshot) into an embedded
// control plane, schedules the whole workload again there under the given
// configuration, and reports what moved. The real cluster is only read.
// It exits 0 when nothing would move, 1 when something would, 2 when
// refused or failed.
func whatIf(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) error {
	fset := newFlagSet("minisched whatif", stderr)
	f := DefaultFlags()
	f.registerCopy(fset)
	fset.StringVar(&f.SchedulerConfig, "scheduler-config", "", "the KubeSchedulerConfiguration to try (default: kube-scheduler's defaults)")
	fset.Int64Var(&f.Seed, "seed", 1, "non-zero: a repeatable run (Filter checks nodes in order)")
	against := fset.String("against", "", "a second KubeSchedulerConfiguration: schedule the copy's workload under --scheduler-config (A), then under this one (B), and compare the two")
	output := fset.String("output", "text", "report format: text or json")
	timeout := fset.Duration("timeout", 10*time.Minute, "how long the workload may take to settle")
	fset.IntVarP(&f.Verbosity, "v", "v", 0, "log verbosity")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: minisched whatif (--import-from KUBECONFIG | --load FILE) [--scheduler-config new.yaml] [--against b.yaml] [flags]\n\n"+
			"Copies a cluster into an embedded control plane, schedules its whole workload\n"+
			"again there under the configuration, and reports per pod the node before and\n"+
			"after, per node the utilisation, and the pods left unschedulable. With\n"+
			"--against, the workload is scheduled under each configuration from the same\n"+
			"start, and the report sets the two side by side.\n"+
			"Exit status: 0 nothing would move, 1 something would, 2 refused or failed.\n\nFlags:\n")
		fset.PrintDefaults()
	}
	refuse := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "minisched whatif: "+format+"\n", a...)
		return &ExitError{Code: 2}
	}
	if err := parse(fset, args, stderr); err != nil {
		return err
	}
	switch {
	case fset.NArg() > 0:
		return refuse("unexpected argument %q", fset.Arg(0))
	case (f.ImportFrom == "") == (f.Load == ""):
		return refuse("give the cluster to copy: --import-from KUBECONFIG or --load FILE")
	case *output != "text" && *output != "json":
		return refuse("--output %q: want text or json", *output)
	}
	if err := f.checkImport(); err != nil {
		return refuse("%v", err)
	}
	// B is checked before anything starts.
	var b *config.KubeSchedulerConfiguration
	if *against != "" {
		name := f.SchedulerName
		if name == "" {
			name = "default-scheduler" // as Start names a copy's profile
		}
		var err error
		if b, err = configFile("--against", *against, name); err != nil {
			return refuse("%v", err)
		}
	}
	// Held until the report has read the placements as they were copied.
	f.Addr, f.Paused = "127.0.0.1:0", true
	QuietKlog(f.Verbosity)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-4 * f.Verbosity)}))
	inst, err := Start(ctx, f, log, opts...)
	if err != nil {
		return refuse("%v", err)
	}
	defer inst.Close()
	env := whatif.Env{Client: inst.Client, Scheduler: inst.Scheduler, Recorder: inst.Recorder, Summaries: inst.Cluster.Summaries}
	wopts := whatif.Options{Timeout: *timeout, Progress: func(s string) { log.Info(s) }}
	if *against != "" {
		names := [2]string{orDefaults(f.SchedulerConfig), *against}
		res, err := whatif.Configs(ctx, env, inst.Scheduler.Config(), b, names, wopts)
		if err != nil {
			return refuse("%v", err)
		}
		return printComparison(stdout, stderr, &res.Report, *output)
	}
	res, err := whatif.RescheduleAll(ctx, env, wopts)
	if err != nil {
		return refuse("%v", err)
	}
	rep := &res.Report
	rep.A, rep.B = "as copied", "rescheduled under "+orDefaults(f.SchedulerConfig)
	return printComparison(stdout, stderr, rep, *output)
}

func orDefaults(path string) string {
	if path == "" {
		return "kube-scheduler's defaults"
	}
	return path
}
