package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"

	"minisched/examples"
	"minisched/minisched"
	"minisched/scenario"
)

// runScenarios is `minisched scenario run FILE...`: it starts an embedded
// control plane, runs each scenario, prints its report, and exits 1 when an
// expectation fails (2 when a scenario is refused before it runs).
func runScenarios(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) error {
	if len(args) > 0 && args[0] == "diff" {
		return diffScenario(ctx, args[1:], stdout, stderr, opts...)
	}
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintln(stderr, "usage: minisched scenario run [flags] FILE... (or --bundled)\n       minisched scenario diff --config A.yaml --config B.yaml SCENARIO")
		return &ExitError{Code: 2}
	}
	fset := newFlagSet("minisched scenario run", stderr)
	reset := fset.Bool("reset", true, "empty the cluster before each scenario")
	bundled := fset.Bool("bundled", false, "run every bundled scenario (the learning path)")
	output := fset.String("output", "text", "report format: text or json")
	record := fset.String("record", "", "save the run as a recording in this file (one scenario), to replay in the dashboard")
	junit := fset.String("junit", "", "also write the reports as JUnit XML to this file, for CI (a suite a run, a case a step and an expectation)")
	repeat := fset.Int("repeat", 1, "run the scenarios this many times in a row, to prove them repeatable (text output then prints full reports of failed runs only)")
	f := DefaultFlags()
	fset.StringVar(&f.SchedulerConfig, "scheduler-config", "", "a KubeSchedulerConfiguration to start from")
	fset.Int64Var(&f.Seed, "seed", 1, "non-zero: repeatable runs; Filter checks nodes one at a time, in order, as kube-scheduler with parallelism 1 (docs/FIDELITY.md)")
	fset.IntVarP(&f.Verbosity, "v", "v", 0, "log verbosity")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: minisched scenario run [flags] FILE...\n\nRuns scenarios headless on an embedded control plane and prints their reports.\n\nFlags:\n")
		fset.PrintDefaults()
	}
	if err := parse(fset, args[1:], stderr); err != nil {
		return err
	}
	if *output != "text" && *output != "json" {
		return fmt.Errorf("--output %q: want text or json", *output)
	}
	if *repeat < 1 {
		return fmt.Errorf("--repeat %d: want 1 or more", *repeat)
	}
	sources, err := scenarioSources(fset.Args(), *bundled)
	if err != nil {
		return err
	}
	if *record != "" && (len(sources) != 1 || *repeat != 1) {
		return fmt.Errorf("--record saves one run: name one scenario, without --repeat (got %d scenario(s), --repeat %d)", len(sources), *repeat)
	}
	// Refuse bad scenarios before starting anything.
	var scs []*scenario.Scenario
	for _, src := range sources {
		sc, err := scenario.Parse(src.data)
		if err == nil {
			_, err = minisched.ParseGates(sc.Spec.RunFeatureGates)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", src.name, err)
			return &ExitError{Code: 2}
		}
		scs = append(scs, sc)
	}

	QuietKlog(f.Verbosity)
	f.Addr = "127.0.0.1:0"
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-4 * f.Verbosity)}))
	passed := make([]int, len(scs))
	var reports []*scenario.Report
	runs := 0
	// One run per set of gates the scenarios need for the whole run
	// (spec.runFeatureGates), the scenarios in their order within it.
	for _, gates := range runGateSets(scs) {
		f.FeatureGates = gates
		inst, err := Start(ctx, f, log, opts...)
		if err != nil {
			return err
		}
		err = func() error {
			defer inst.Close()
			runner := scenario.NewRunner(inst.Server.ScenarioEnv())
			for round := 1; round <= *repeat; round++ {
				for i, sc := range scs {
					if ctx.Err() != nil || runGates(sc) != gates {
						continue
					}
					if *reset {
						if err := inst.Cluster.Reset(ctx); err != nil {
							return fmt.Errorf("resetting before %s: %w", sources[i].name, err)
						}
					}
					rep, err := runOne(ctx, runner, fmt.Sprintf("run-%d", runs+1), sc)
					var se *scenario.Error
					if errors.As(err, &se) {
						fmt.Fprintf(stderr, "%s: %v\n", sources[i].name, se)
						return &ExitError{Code: 2}
					}
					if err != nil {
						return err
					}
					runs++
					if *record != "" {
						if err := saveRecording(inst, *record, rep.RecordingSince); err != nil {
							return err
						}
						fmt.Fprintf(stderr, "recording saved in %s\n", *record)
					}
					ok := rep.State == scenario.StatePassed
					if ok {
						passed[i]++
					}
					reports = append(reports, rep)
					switch {
					case *output != "text":
					case *repeat == 1 || !ok:
						rep.WriteText(stdout)
						fmt.Fprintln(stdout)
					default:
						fmt.Fprintf(stdout, "round %d: %s %s\n", round, sources[i].name, rep.State)
					}
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	if *junit != "" {
		if err := writeJUnit(*junit, reports); err != nil {
			return err
		}
	}
	total := 0
	for _, n := range passed {
		total += n
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return err
		}
	} else {
		if *repeat > 1 {
			for i, n := range passed {
				fmt.Fprintf(stdout, "%s: %d of %d runs passed\n", sources[i].name, n, *repeat)
			}
		}
		fmt.Fprintf(stdout, "%d of %d scenario run(s) passed\n", total, len(scs)**repeat)
	}
	if total < len(scs)**repeat {
		return &ExitError{Code: 1}
	}
	return nil
}

// runGates is the canonical form of the gates sc needs for the whole run.
func runGates(sc *scenario.Scenario) string {
	gates, _ := minisched.ParseGates(sc.Spec.RunFeatureGates) // runScenarios checked them
	return minisched.FormatGates(gates)
}

// runGateSets are the sets of whole-run gates the scenarios need, in the
// order first met: most need none ("").
func runGateSets(scs []*scenario.Scenario) []string {
	var sets []string
	for _, sc := range scs {
		if g := runGates(sc); !slices.Contains(sets, g) {
			sets = append(sets, g)
		}
	}
	return sets
}

// writeJUnit writes the reports as JUnit XML to path.
func writeJUnit(path string, reports []*scenario.Report) error {
	return writeFile(path, "the JUnit report", func(w io.Writer) error { return scenario.WriteJUnit(w, reports) })
}

// saveRecording writes the history from since into a new file at path.
func saveRecording(inst *Instance, path string, since uint64) error {
	return writeFile(path, "the recording", func(w io.Writer) error { return inst.Server.WriteRecording(w, "", since) })
}

// writeFile creates path and fills it with write; errors name what.
func writeFile(path, what string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("saving %s: %w", what, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("saving %s in %s: %w", what, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saving %s in %s: %w", what, path, err)
	}
	return nil
}

// runOne runs one scenario; a panic in it is reported as an error of that
// run, never a crash with a stack.
func runOne(ctx context.Context, runner *scenario.Runner, id string, sc *scenario.Scenario) (rep *scenario.Report, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("scenario %s crashed: %v", sc.Metadata.Name, r)
		}
	}()
	return runner.Run(ctx, id, sc)
}

type source struct {
	name string
	data []byte
}

func scenarioSources(files []string, bundled bool) ([]source, error) {
	var out []source
	if bundled {
		names, err := fs.Glob(examples.Scenarios(), "*.yaml")
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, n := range names {
			data, err := fs.ReadFile(examples.Scenarios(), n)
			if err != nil {
				return nil, err
			}
			out = append(out, source{name: "bundled " + strings.TrimSuffix(n, ".yaml"), data: data})
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading scenario: %w", err)
		}
		out = append(out, source{name: f, data: data})
	}
	if len(out) == 0 {
		return nil, errors.New("no scenario to run: name files, or --bundled")
	}
	return out, nil
}
