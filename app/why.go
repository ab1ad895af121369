package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"minisched/explain"
)

// why is `minisched why NAMESPACE/POD`: why a pending pod fits no node, and
// what would make it fit. It asks a running minisched (--server), or copies
// a cluster read only (--kubeconfig) into an embedded control plane and
// explains the pod there: the source is only read. As a kubectl plugin
// (kubectl-minisched), `kubectl minisched why pod/NAME -n NAMESPACE`.
func why(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) error {
	fset := newFlagSet("minisched why", stderr)
	server := fset.String("server", "http://127.0.0.1:8080", "the minisched to ask (its dashboard's address)")
	kubeconfig := fset.String("kubeconfig", "", "instead: copy the cluster of this kubeconfig, read only, into an embedded control plane, and explain the pod there")
	namespace := fset.StringP("namespace", "n", "default", "the pod's namespace, for a name without one")
	output := fset.StringP("output", "o", "text", "text, or json (the explanation's schema, docs/API.md)")
	schedulerConfig := fset.String("scheduler-config", "", "with --kubeconfig: the KubeSchedulerConfiguration to explain with (default: kube-scheduler's defaults)")
	verbosity := fset.IntP("v", "v", 0, "log verbosity")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: minisched why NAMESPACE/POD [--server URL | --kubeconfig FILE] [-o json]\n\n"+
			"Why a pending pod fits no node: every Filter plugin that turns it away on\n"+
			"each node, the change that would make it pass, the closest nodes (with\n"+
			"their changes tried on copies by the real plugins), and the nodes grouped by\n"+
			"how they fail. Also as a kubectl plugin: kubectl minisched why pod/NAME.\n\nFlags:\n")
		fset.PrintDefaults()
	}
	refuse := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "minisched why: "+format+"\n", a...)
		return &ExitError{Code: 2}
	}
	if err := parse(fset, args, stderr); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return usage(usageError{fmt.Errorf("give one pod: NAMESPACE/POD, POD or pod/POD"), fset.Name()}, stderr)
	}
	if *output != "text" && *output != "json" {
		return usage(usageError{fmt.Errorf("--output %q: want text or json", *output), fset.Name()}, stderr)
	}
	ns, name := podArg(fset.Arg(0), *namespace)
	var e *explain.Explanation
	var err error
	if *kubeconfig != "" {
		e, err = whyInCopy(ctx, *kubeconfig, *schedulerConfig, ns, name, *verbosity, stderr, opts)
	} else {
		e, err = whyFromServer(ctx, *server, ns, name)
	}
	if err != nil {
		return refuse("%v", err)
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	printWhy(stdout, e)
	return nil
}

// podArg reads NAMESPACE/POD, pod/POD (kubectl's form) or POD.
func podArg(arg, namespace string) (string, string) {
	arg = strings.TrimPrefix(strings.TrimPrefix(arg, "pod/"), "pods/")
	if ns, name, ok := strings.Cut(arg, "/"); ok {
		return ns, name
	}
	return namespace, arg
}

// whyFromServer asks a running minisched; the token, when it wants one,
// comes from MINISCHED_TOKEN.
func whyFromServer(ctx context.Context, server, ns, name string) (*explain.Explanation, error) {
	u := strings.TrimSuffix(server, "/") + "/api/v1/pods/" + url.PathEscape(ns) + "/" + url.PathEscape(name) + "/explain"
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if token := os.Getenv("MINISCHED_TOKEN"); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking %s: %w (is minisched running there? --server or --kubeconfig)", server, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("%s", e.Error)
		}
		return nil, fmt.Errorf("%s answered %s", server, resp.Status)
	}
	var e explain.Explanation
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("reading the explanation: %w", err)
	}
	return &e, nil
}

// whyInCopy copies the cluster of kubeconfig (read only) into an embedded
// control plane whose scheduler stays paused, so that the pod waits there
// as it does in the source, and explains it.
func whyInCopy(ctx context.Context, kubeconfig, schedulerConfig, ns, name string, verbosity int, stderr io.Writer, opts []Option) (*explain.Explanation, error) {
	f := DefaultFlags()
	f.Addr, f.Paused, f.ImportFrom, f.SchedulerConfig, f.Verbosity = "127.0.0.1:0", true, kubeconfig, schedulerConfig, verbosity
	// Only the pod's namespace's pods matter to most plugins, but affinity
	// and spreading look across namespaces: copy them all.
	QuietKlog(verbosity)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-4 * verbosity)}))
	inst, err := Start(ctx, f, log, opts...)
	if err != nil {
		return nil, err
	}
	defer inst.Close()
	deadline := time.Now().Add(time.Minute)
	for !inst.Scheduler.Ready() {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the copy's scheduler did not start within a minute")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return inst.Scheduler.Scheduler().Explain(ctx, ns, name)
}

// printWhy writes the sentence, the closest nodes and the groups.
func printWhy(w io.Writer, e *explain.Explanation) {
	fmt.Fprintf(w, "%s/%s (profile %s, %d nodes)\n%s\n", e.Namespace, e.Pod, e.Profile, e.Nodes, e.Sentence)
	if len(e.Closest) > 0 {
		fmt.Fprintln(w, "\nclosest nodes:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tPLUGIN\tNEEDS\tDETAIL\tTRIED")
		for _, n := range e.Closest {
			tried := "unproven"
			switch {
			case n.Tried == nil:
			case n.Tried.Fits:
				tried = "fits then"
			default:
				tried = "not enough"
			}
			for i, f := range n.Failures {
				node, t := n.Name, tried
				if i > 0 {
					node, t = "", ""
				}
				needs := f.Reason
				if f.Change != nil {
					needs = f.Change.Words
				}
				detail := f.Detail
				if len(f.UsedBy) > 0 {
					detail += " (used by " + strings.Join(f.UsedBy, ", ") + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", node, f.Plugin, needs, detail, t)
			}
		}
		tw.Flush()
	}
	if p := e.Preemption; p != nil && !p.Helps {
		fmt.Fprintf(w, "\npreemption would not help: %s\n", strings.TrimSuffix(p.Reason, "."))
	}
	if len(e.Groups) > 1 {
		fmt.Fprintln(w, "\nnodes by how they fail:")
		for _, g := range e.Groups {
			parts := make([]string, len(g.Failures))
			for i, f := range g.Failures {
				parts[i] = f.Plugin + ": " + firstOf(f.Detail, f.Reason)
			}
			fmt.Fprintf(w, "  %6d  %s\n", g.Count, strings.Join(parts, "; "))
		}
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
