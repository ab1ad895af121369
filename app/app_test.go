package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"

	"minisched/app"
	"minisched/examples"
)

// The test binary doubles as the minisched command, so that tests can run
// it as a process and signal it.
func TestMain(m *testing.M) {
	if os.Getenv("MINISCHED_AS_MAIN") == "1" {
		app.Main()
		return
	}
	os.Exit(m.Run())
}

type process struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

// lockedBuffer collects a child's output, which os/exec writes from a
// goroutine of its own while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "MINISCHED_AS_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the dashboard URL: %v\n%s", err, p.stderr)
	}
	p.url = strings.TrimSpace(strings.TrimPrefix(line, "minisched dashboard: "))
	ready := func(context.Context) (bool, error) {
		resp, err := http.Get(p.url + "readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, ready); err != nil {
		t.Fatalf("not ready: %v\n%s", err, p.stderr)
	}
	return p
}

// stop sends SIGTERM and returns the exit code and how long the exit took.
func (p *process) stop(t *testing.T) (int, time.Duration) {
	t.Helper()
	begun := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return code, time.Since(begun)
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit 30s after SIGTERM\n%s", p.stderr)
	}
	return -1, 0
}

func postNode(t *testing.T, url, name string) {
	t.Helper()
	body := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"` + name + `"}}`
	resp, err := http.Post(url+"api/v1/nodes", "application/json", strings.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating node %s: %v %v", name, err, resp)
	}
	resp.Body.Close()
}

func nodeExists(t *testing.T, url, name string) bool {
	t.Helper()
	resp, err := http.Get(url + "api/v1/nodes/" + name)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

var tempDirPattern = regexp.MustCompile(`kubeconfig=(\S+)/kubeconfig`)

func TestSigtermExitsCleanly(t *testing.T) {
	p := startProcess(t)
	m := tempDirPattern.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("the process did not say where its kubeconfig is:\n%s", p.stderr)
	}
	postNode(t, p.url, "node-1")
	code, took := p.stop(t)
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM\n%s", code, p.stderr)
	}
	if took > 10*time.Second {
		t.Errorf("exit took %v", took)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("the temporary data directory %s is still there: %v", m[1], err)
	}
	if strings.Contains(p.stderr.String(), `"level":"warn"`) || strings.Contains(p.stderr.String(), "panic") {
		t.Errorf("component log noise on the console:\n%s", p.stderr)
	}
}

func TestDataDirKeepsTheCluster(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, "--data-dir", dir)
	postNode(t, p.url, "kept")
	if code, _ := p.stop(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, p.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err != nil {
		t.Fatalf("etcd's data is gone: %v", err)
	}
	p = startProcess(t, "--data-dir", dir)
	if !nodeExists(t, p.url, "kept") {
		t.Errorf("the node did not survive the restart")
	}
	p.stop(t)
}

func TestBadFlags(t *testing.T) {
	var stderr bytes.Buffer
	err := app.Run(context.Background(), []string{"--no-such-flag"}, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(stderr.String(), "no-such-flag") {
		t.Errorf("unknown flag: %v %q", err, stderr.String())
	}
	err = app.Run(context.Background(), []string{"--scheduler-config", "/does/not/exist"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "scheduler-config") {
		t.Errorf("missing scheduler config: %v", err)
	}
	for _, value := range []string{"nosuch", "*,-nosuch"} {
		err = app.Run(context.Background(), []string{"--controllers", value}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), `unknown controller "nosuch"`) {
			t.Errorf("--controllers %s: %v", value, err)
		}
	}
}

// TestControllersFlag reads --controllers as kube-controller-manager does:
// its defaults, one dropped, aliases, or none.
func TestControllersFlag(t *testing.T) {
	tests := []struct {
		value   string
		want    []string // must run
		notWant []string // must not
	}{
		{"*", []string{"deployment-controller", "garbage-collector-controller", "node-lifecycle-controller"}, []string{"bootstrap-signer-controller"}},
		{"*,-garbage-collector-controller", []string{"deployment-controller"}, []string{"garbage-collector-controller"}},
		{"*,-garbagecollector", []string{"deployment-controller"}, []string{"garbage-collector-controller"}}, // an alias
		{"replicaset-controller", []string{"replicaset-controller"}, []string{"deployment-controller"}},
		{"", nil, []string{"deployment-controller", "replicaset-controller"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.value), func(t *testing.T) {
			inst := start(t, func(f *app.Flags) { f.Controllers = tt.value; f.Kubelets = false })
			running := inst.Controllers()
			for _, name := range tt.want {
				if !slices.Contains(running, name) {
					t.Errorf("%s does not run: %v", name, running)
				}
			}
			for _, name := range tt.notWant {
				if slices.Contains(running, name) {
					t.Errorf("%s runs: %v", name, running)
				}
			}
		})
	}
}

// Beyond loopback minisched wants a token, and never prints it.
func TestExposureNeedsAToken(t *testing.T) {
	refused := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"every interface", []string{"--addr", "0.0.0.0:0"}, nil},
		{"a LAN address", []string{"--addr", "192.0.2.10:8080"}, nil},
		{"a container published beyond loopback", []string{"--addr", "0.0.0.0:0", "--published-on", "0.0.0.0"}, nil},
		{"an empty token", []string{"--addr", "[::]:0"}, map[string]string{"MINISCHED_TOKEN": ""}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			err := app.Run(context.Background(), tt.args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), "token") || !strings.Contains(err.Error(), "--insecure-no-token") {
				t.Errorf("%v: %v, want a refusal that names the token and --insecure-no-token", tt.args, err)
			}
		})
	}
	t.Run("help keeps the token secret", func(t *testing.T) {
		t.Setenv("MINISCHED_TOKEN", "do-not-print-me")
		var stderr bytes.Buffer
		err := app.Run(context.Background(), []string{"--help"}, &bytes.Buffer{}, &stderr)
		if !errors.Is(err, pflag.ErrHelp) || !strings.Contains(stderr.String(), "--token") || strings.Contains(stderr.String(), "do-not-print-me") {
			t.Errorf("--help: %v\n%s", err, stderr.String())
		}
	})
	t.Run("a short token", func(t *testing.T) {
		t.Setenv("MINISCHED_TOKEN", "s3cret")
		err := app.Run(context.Background(), []string{"--addr", "0.0.0.0:0"}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "is 6 bytes; give at least 16") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("a 6-byte token: %v, want a refusal that gives its length, not the token", err)
		}
	})
	t.Run("the token comes from the environment", func(t *testing.T) {
		t.Setenv("MINISCHED_TOKEN", "from-env")
		t.Setenv("MINISCHED_PUBLISHED_ON", "127.0.0.1")
		f, err := app.ParseFlags([]string{"--addr", "0.0.0.0:8080"})
		if err != nil || f.Token != "from-env" || f.PublishedOn != "127.0.0.1" {
			t.Errorf("flags %+v, %v", f, err)
		}
	})
	t.Run("half a TLS pair", func(t *testing.T) {
		if _, err := app.ParseFlags([]string{"--tls-cert", "cert.pem"}); err == nil || !strings.Contains(err.Error(), "--tls-key") {
			t.Errorf("--tls-cert alone: %v", err)
		}
	})
}

// Every bundled scenario runs headless and its expectations hold, three
// times in a row: a lesson that passes only sometimes teaches nothing.
// Under -short (the race detector's pass, which looks for races, not for
// flaky lessons) once.
func TestBundledScenarios(t *testing.T) {
	repeat := 3
	if testing.Short() {
		repeat = 1
	}
	var stdout, stderr bytes.Buffer
	err := app.Run(context.Background(), []string{"scenario", "run", "--bundled", "--repeat", fmt.Sprint(repeat)}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bundled scenarios: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	names, err := fs.Glob(examples.Scenarios(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d of %d scenario run(s) passed", repeat*len(names), repeat*len(names))
	if len(names) < 24 || !strings.Contains(stdout.String(), want) {
		t.Errorf("want %q for %d lessons; report:\n%s", want, len(names), stdout.String())
	}
}

func TestScenarioExitCodes(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, "failing.yaml")
	os.WriteFile(failing, []byte(`apiVersion: minisched/v1
kind: Scenario
metadata: {name: failing}
spec:
  steps:
  - create: {manifest: {apiVersion: v1, kind: Node, metadata: {name: node-1}}}
  - create: {manifest: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}}
  - wait: {for: scheduled, pod: p}
  - expect: {scheduledPods: 0}
`), 0o600)
	refused := filepath.Join(dir, "refused.yaml")
	os.WriteFile(refused, []byte("apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: r}\nspec:\n  steps:\n  - jump: {}\n"), 0o600)
	for _, tt := range []struct {
		file    string
		code    int
		mention string
	}{
		{failing, 1, "FAIL step 4: 0 scheduled pods (saw: 1 scheduled)"},
		{refused, 2, "spec.steps[0]: unknown field \"jump\""},
	} {
		var stdout, stderr bytes.Buffer
		junit := filepath.Join(dir, filepath.Base(tt.file)+".xml")
		err := app.Run(context.Background(), []string{"scenario", "run", "--junit", junit, tt.file}, &stdout, &stderr)
		var exit *app.ExitError
		if !errors.As(err, &exit) || exit.Code != tt.code {
			t.Errorf("%s: %v, want exit code %d", filepath.Base(tt.file), err, tt.code)
		}
		if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.mention) {
			t.Errorf("%s: output does not mention %q:\n%s", filepath.Base(tt.file), tt.mention, out)
		}
		// A run that failed is in the JUnit report as a failing case (the
		// format is checked against its schema in package scenario); a
		// refused scenario runs nothing, and writes none.
		xmlOut, err := os.ReadFile(junit)
		switch {
		case tt.code == 1 && (err != nil || !strings.Contains(string(xmlOut), `<failure message="saw: 1 scheduled" type="ExpectationFailed">`)):
			t.Errorf("the JUnit report of a failing run: %v\n%s", err, xmlOut)
		case tt.code == 2 && err == nil:
			t.Errorf("a refused scenario wrote a JUnit report:\n%s", xmlOut)
		}
	}
}

// TestSigtermDuringScenario stops minisched in the middle of a scenario:
// it exits cleanly, and with --data-dir a restart finds every node and pod
// again and schedules the pods left pending.
func TestSigtermDuringScenario(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, "--data-dir", dir)
	sc := `apiVersion: minisched/v1
kind: Scenario
metadata: {name: interrupted}
spec:
  steps:
  - create: {count: 3, manifest: {apiVersion: v1, kind: Node, metadata: {name: "node-{{i}}"}}}
  - scheduler: pause
  - create: {count: 5, manifest: {apiVersion: v1, kind: Pod, metadata: {name: "pending-{{i}}"}, spec: {containers: [{name: c, image: x}]}}}
  - wait: {duration: 5m}
`
	resp, err := http.Post(p.url+"api/v1/scenarios", "application/yaml", strings.NewReader(sc))
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("posting the scenario: %v %v", err, resp)
	}
	resp.Body.Close()
	waitUntil(t, 30*time.Second, "the pods created", func() bool {
		r, err := http.Get(p.url + "api/v1/pods")
		if err != nil {
			return false
		}
		defer r.Body.Close()
		var l struct{ Items []any }
		_ = json.NewDecoder(r.Body).Decode(&l)
		return len(l.Items) == 5
	})
	if code, took := p.stop(t); code != 0 || took > 10*time.Second {
		t.Fatalf("SIGTERM during a scenario: exit %d after %v\n%s", code, took, p.stderr)
	}

	p = startProcess(t, "--data-dir", dir)
	defer p.stop(t)
	for i := 1; i <= 3; i++ {
		if !nodeExists(t, p.url, fmt.Sprintf("node-%d", i)) {
			t.Errorf("node-%d is gone after the restart", i)
		}
	}
	waitUntil(t, 30*time.Second, "the pending pods scheduled after the restart", func() bool {
		r, err := http.Get(p.url + "api/v1/pods")
		if err != nil {
			return false
		}
		defer r.Body.Close()
		var l struct {
			Items []struct {
				Spec struct{ NodeName string }
			}
		}
		_ = json.NewDecoder(r.Body).Decode(&l)
		bound := 0
		for _, it := range l.Items {
			if it.Spec.NodeName != "" {
				bound++
			}
		}
		return len(l.Items) == 5 && bound == 5
	})
}
