// Package app is the minisched command: flags, the control plane (embedded
// or attached), the scheduler service and the server, wired together. A
// binary with plugins of its own calls Main with WithPlugin options.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/cluster"
	"minisched/examples"
	"minisched/minisched/schedconfig"
)

// Option changes how Main builds minisched.
type Option func(*options)

type options struct {
	outOfTree frameworkruntime.Registry
}

// WithPlugin adds an out-of-tree plugin that configurations may enable, like
// kube-scheduler's app.WithPlugin.
func WithPlugin(name string, factory frameworkruntime.PluginFactory) Option {
	return func(o *options) {
		if o.outOfTree == nil {
			o.outOfTree = frameworkruntime.Registry{}
		}
		o.outOfTree[name] = factory
	}
}

// Main runs the command with os.Args and exits.
func Main(opts ...Option) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, stop := interruptible(signals, func() {
		fmt.Fprintln(os.Stderr, "minisched: interrupted again, quitting without waiting")
		os.Exit(130)
	})
	args := os.Args[1:]
	// As a kubectl plugin (kubectl-minisched on the PATH), kubectl passes
	// what follows its "minisched": "why pod/x -n ns".
	if filepath.Base(os.Args[0]) == "kubectl-minisched" && len(args) == 0 {
		args = []string{"why", "--help"}
	}
	err := Run(ctx, args, os.Stdout, os.Stderr, opts...)
	stop()
	signal.Stop(signals)
	var exit *ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.Code)
	case errors.Is(err, pflag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "minisched:", err)
		os.Exit(1)
	}
}

// interruptible returns a context that the first signal cancels, so that
// minisched shuts down in order; a second signal calls quit, so that a
// shutdown that hangs never holds the terminal.
func interruptible(signals <-chan os.Signal, quit func()) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		select {
		case <-signals:
			cancel()
		case <-done:
			return
		}
		select {
		case <-signals:
			quit()
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() { once.Do(func() { close(done); cancel() }) }
}

// ExitError ends the command with a code of its own (a failed scenario
// expectation exits 1 without being an error of minisched's).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "exit status " + strconv.Itoa(e.Code) }

// Run runs minisched until ctx ends.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) error {
	if len(args) > 0 && args[0] == "scenario" {
		return runScenarios(ctx, args[1:], stdout, stderr, opts...)
	}
	if len(args) > 0 && args[0] == "replay" {
		return replay(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "whatif" {
		return whatIf(ctx, args[1:], stdout, stderr, opts...)
	}
	if len(args) > 0 && args[0] == "why" {
		return why(ctx, args[1:], stdout, stderr, opts...)
	}
	if len(args) > 0 && args[0] == "bench" {
		return bench(ctx, args[1:], stdout, stderr, opts...)
	}
	f, err := parseFlags(args, stderr)
	if err != nil {
		return usage(err, stderr)
	}
	QuietKlog(f.Verbosity)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-4 * f.Verbosity)}))
	inst, err := Start(ctx, f, log, opts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "minisched dashboard: %s\n", inst.URL)
	var died <-chan error // nil, so never ready, when attached to a real cluster
	if inst.ControlPlane != nil {
		died = inst.ControlPlane.Err()
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-died:
		// Exit, so that a supervisor (compose, a Deployment) restarts us.
		log.Error("the embedded control plane died", "err", err)
		_ = inst.Close()
		return fmt.Errorf("the embedded control plane died: %w", err)
	}
	return inst.Close()
}

// bundled is the scenarios the dashboard offers: the embedded ones, and a
// folder's, which win on a name both have. The folder is opened as a root,
// so a link in it that leads out of it is not followed.
func bundled(dir string) ([]fs.FS, error) {
	if dir == "" {
		return []fs.FS{examples.Scenarios()}, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("--scenarios-dir: %w", err)
	}
	return []fs.FS{root.FS(), examples.Scenarios()}, nil
}

// attach builds the client configuration of an existing cluster.
func attach(f Flags) (*rest.Config, error) {
	if f.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--in-cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", f.Kubeconfig, err)
	}
	return cfg, nil
}

func schedulerConfig(path, schedulerName string) (*config.KubeSchedulerConfiguration, error) {
	if path == "" {
		return schedconfig.Default(schedulerName)
	}
	return configFile("--scheduler-config", path, schedulerName)
}

// configFile reads the KubeSchedulerConfiguration a flag names; errors
// name the flag.
func configFile(flag, path, schedulerName string) (*config.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", flag, err)
	}
	cfg, err := schedconfig.Load(data, schedulerName)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return cfg, nil
}

// MinTokenBytes is the shortest token minisched takes: a short one is
// guessed, however slowly failed attempts are let through.
const MinTokenBytes = 16

// checkAddr refuses to listen beyond loopback without a token, unless told
// so, and says whether the dashboard is exposed to other machines.
func checkAddr(f Flags, log *slog.Logger) (exposed bool, err error) {
	if _, _, err := net.SplitHostPort(f.Addr); err != nil {
		return false, fmt.Errorf("--addr %q: %w", f.Addr, err)
	}
	if f.Token != "" && len(f.Token) < MinTokenBytes {
		return false, fmt.Errorf("the token (--token or MINISCHED_TOKEN) is %d bytes; give at least %d, for example: openssl rand -hex 16", len(f.Token), MinTokenBytes)
	}
	if !loopback(f.Addr) && (f.PublishedOn == "" || !loopback(net.JoinHostPort(f.PublishedOn, "0"))) {
		exposed = true
	}
	switch {
	case !exposed:
		return false, nil
	case f.Token != "":
		log.Warn("the dashboard listens beyond loopback on " + f.Addr + "; every request must carry the token")
	case f.InsecureNoToken:
		log.Warn("the dashboard listens beyond loopback without a token (--insecure-no-token): anyone who can reach " + f.Addr +
			" can create and delete pods and nodes")
	default:
		return true, fmt.Errorf("--addr %s listens beyond loopback: give a token (MINISCHED_TOKEN or --token), "+
			"or --insecure-no-token to let anyone who reaches it change the cluster "+
			"(in a container published on the host's loopback, set MINISCHED_PUBLISHED_ON=127.0.0.1)", f.Addr)
	}
	return true, nil
}

// writes is what the API and scenarios may write: everything on the
// embedded cluster; on a real one nothing, or with --allow-writes only what
// minisched labels.
func writes(attached, allow bool) cluster.Writes {
	switch {
	case !attached:
		return cluster.WritesAll
	case allow:
		return cluster.WritesOwned
	}
	return cluster.WritesNone
}

// loopback says whether a host:port listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

func parseCIDRs(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, part := range splitList(s) {
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// QuietKlog keeps the Kubernetes components' logs out of the console unless
// asked for: at -v 2 and above they go to stderr at verbosity v-2.
func QuietKlog(v int) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if v >= 2 {
		_ = fs.Set("v", strconv.Itoa(v-2))
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
