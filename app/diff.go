package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"sigs.k8s.io/yaml"

	"minisched/compare"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
	"minisched/scenario"
)

// diffScenario is `minisched scenario diff --config A --config B SCENARIO`:
// it runs the scenario twice, each time on a fresh embedded control plane
// with one configuration and the same seed, so that both runs start from
// the same inputs, and compares where the pods went. It exits 0 when the
// configurations place every pod alike, 1 when they differ, 2 when the
// command, a configuration or the scenario is refused, or a run fails.
func diffScenario(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) error {
	fset := newFlagSet("minisched scenario diff", stderr)
	var configs []string
	fset.StringArrayVar(&configs, "config", nil, "a KubeSchedulerConfiguration file; give two, A then B")
	var gates []string
	fset.StringArrayVar(&gates, "feature-gates", nil, "the gates the scheduler alone reads (OpportunisticBatching, SchedulerAsyncAPICalls, SchedulerPopFromBackoffQ), A=true,B=false; give none, or two: for A, then for B (\"\" for none)")
	bundled := fset.String("bundled", "", "the bundled scenario to run (e.g. 03-score) instead of a file")
	output := fset.String("output", "text", "report format: text or json")
	seed := fset.Int64("seed", 1, "the seed both runs use (non-zero: Filter checks nodes in order, ties break alike)")
	verbosity := fset.IntP("v", "v", 0, "log verbosity")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: minisched scenario diff --config A.yaml --config B.yaml [flags] SCENARIO\n\n"+
			"Runs one scenario under two scheduler configurations, from the same start,\n"+
			"and reports per pod the node under each and the plugins that made the\n"+
			"difference, per node the utilisation, and the pods only one could place.\n"+
			"The scenario's own spec.schedulerConfig is replaced by each configuration,\n"+
			"and its spec.featureGates by each --feature-gates when given.\n"+
			"Exit status: 0 alike, 1 different, 2 refused.\n\nFlags:\n")
		fset.PrintDefaults()
	}
	refuse := func(format string, a ...any) error {
		fmt.Fprintf(stderr, format+"\n", a...)
		return &ExitError{Code: 2}
	}
	if err := parse(fset, args, stderr); err != nil {
		return err
	}
	if len(configs) != 2 {
		return refuse("scenario diff: give exactly two --config files, A then B (got %d)", len(configs))
	}
	if len(gates) != 0 && len(gates) != 2 {
		return refuse("scenario diff: give --feature-gates twice, for A then for B, or not at all (got %d)", len(gates))
	}
	for i, g := range gates {
		if _, _, err := minisched.ParseSchedulerGates(g); err != nil {
			return refuse("--feature-gates for %s: %v", "AB"[i:i+1], err)
		}
	}
	if *output != "text" && *output != "json" {
		return refuse("--output %q: want text or json", *output)
	}
	var src source
	switch files := fset.Args(); {
	case *bundled != "" && len(files) == 0:
		all, err := scenarioSources(nil, true)
		if err != nil {
			return refuse("the bundled scenarios: %v", err)
		}
		for _, s := range all {
			if s.name == "bundled "+*bundled {
				src = s
			}
		}
		if src.data == nil {
			return refuse("--bundled %q: no such bundled scenario", *bundled)
		}
	case *bundled == "" && len(files) == 1:
		data, err := os.ReadFile(files[0])
		if err != nil {
			return refuse("reading the scenario: %v", err)
		}
		src = source{name: files[0], data: data}
	default:
		return refuse("scenario diff: name one scenario file, or --bundled NAME")
	}
	// Refuse bad input before starting anything.
	scenarios := make([]*scenario.Scenario, 2)
	for i, path := range configs {
		data, err := os.ReadFile(path)
		if err != nil {
			return refuse("reading configuration %s: %v", path, err)
		}
		if _, err := schedconfig.Load(data, "default-scheduler"); err != nil {
			return refuse("configuration %s: %v", path, err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return refuse("configuration %s: %v", path, err)
		}
		if scenarios[i], err = scenario.Parse(src.data); err != nil {
			return refuse("%s: %v", src.name, err)
		}
		scenarios[i].Spec.SchedulerConfig = json.RawMessage(js)
		if len(gates) == 2 && gates[i] != "" {
			scenarios[i].Spec.FeatureGates = gates[i]
		}
	}

	QuietKlog(*verbosity)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-4 * *verbosity)}))
	var sides [2]compare.Side
	for i, sc := range scenarios {
		side, state, err := runSide(ctx, configs[i], sc, *seed, log, opts...)
		var se *scenario.Error
		if errors.As(err, &se) {
			return refuse("%s under %s: %v", src.name, configs[i], se)
		}
		if err != nil {
			// Exit 1 means "they differ": trouble is 2, as for diff(1).
			return refuse("running %s under %s: %v", src.name, configs[i], err)
		}
		if state != scenario.StatePassed {
			// Expectations written for one configuration may fail under
			// another: that is a finding, not a reason to stop.
			fmt.Fprintf(stderr, "%s under %s: the scenario %s\n", src.name, configs[i], state)
		}
		sides[i] = side
	}
	report := compare.Compare(sides[0], sides[1])
	return printComparison(stdout, stderr, &report, *output)
}

// printComparison writes a comparison as text or JSON and sets the exit
// status: 0 alike, 1 different, 2 when the report cannot be written.
func printComparison(stdout, stderr io.Writer, r *compare.Report, output string) error {
	if output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(stderr, "writing the report: %v\n", err)
			return &ExitError{Code: 2}
		}
	} else {
		r.WriteText(stdout)
	}
	if r.Differ() {
		return &ExitError{Code: 1}
	}
	return nil
}

// runSide runs sc on a fresh embedded control plane and reads what it left.
func runSide(ctx context.Context, config string, sc *scenario.Scenario, seed int64, log *slog.Logger, opts ...Option) (compare.Side, scenario.State, error) {
	f := DefaultFlags()
	f.Addr, f.Seed = "127.0.0.1:0", seed
	inst, err := Start(ctx, f, log, opts...)
	if err != nil {
		return compare.Side{}, "", err
	}
	defer inst.Close()
	rep, err := runOne(ctx, scenario.NewRunner(inst.Server.ScenarioEnv()), "diff", sc)
	if err != nil {
		return compare.Side{}, "", err
	}
	side, err := compare.ReadSide(ctx, inst.Client, config, inst.Recorder.LastFiltered)
	return side, rep.State, err
}
