package app_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minisched/app"
	"minisched/event"
	"minisched/recording"
)

// TestRecordAndReplay records a scenario run into a file, then serves that
// file with `minisched replay`, which needs no control plane.
func TestRecordAndReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lesson.recording.gz")
	var out, errs bytes.Buffer
	if err := app.Run(context.Background(), []string{"scenario", "run", "--record", file, "../examples/scenarios/17-spread-or-pack.yaml"}, &out, &errs); err != nil {
		t.Fatalf("scenario run --record: %v\n%s%s", err, out.String(), errs.String())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Read(context.Background(), bytes.NewReader(data), 1<<30)
	if err != nil {
		t.Fatalf("the saved recording: %v", err)
	}
	// It starts where the run did, on the emptied cluster, and holds the
	// run: both nodes created, both pods bound.
	var snap struct{ Nodes, Pods []json.RawMessage }
	if err := json.Unmarshal(rec.Snapshot, &snap); err != nil || len(snap.Nodes)+len(snap.Pods) != 0 {
		t.Errorf("the recording starts from %s, want the empty cluster", rec.Snapshot)
	}
	var nodes, bound []string
	for _, raw := range rec.Events {
		var e event.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if e.Node != nil && e.Node.Action == event.Added {
			nodes = append(nodes, e.Node.Node.Name)
		}
		if e.BindingEnd != nil && e.BindingEnd.Bound {
			bound = append(bound, e.Pod.Name)
		}
	}
	if strings.Join(nodes, ",") != "small,big" || strings.Join(bound, ",") != "pinned,web" {
		t.Errorf("the recording holds nodes %v and bindings %v, want small,big and pinned,web", nodes, bound)
	}

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"replay", "--addr", "127.0.0.1:0", file}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("replay printed no address: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base := strings.TrimSpace(line[strings.Index(line, "http://"):])
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, host string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", strings.TrimSuffix(base, "/")+path, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	tests := []struct {
		name, path, host string
		code             int
		check            func(*http.Response, []byte) bool
	}{
		{"the page is sent to the recording", "/", "", http.StatusFound, func(r *http.Response, _ []byte) bool {
			return r.Header.Get("Location") == "/?recording=/api/v1/recording"
		}},
		{"the page", "/?recording=/api/v1/recording", "", http.StatusOK, func(_ *http.Response, b []byte) bool { return bytes.Contains(b, []byte("<html")) }},
		{"the file as it is", "/api/v1/recording", "", http.StatusOK, func(_ *http.Response, b []byte) bool { return bytes.Equal(b, data) }},
		{"no cluster behind it", "/api/v1/nodes", "", http.StatusNotFound, func(_ *http.Response, b []byte) bool { return bytes.Contains(b, []byte("replays a recording")) }},
		{"another site's host name", "/api/v1/recording", "evil.example", http.StatusForbidden, func(*http.Response, []byte) bool { return true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(tt.path, tt.host)
			if resp.StatusCode != tt.code || !tt.check(resp, body) {
				t.Errorf("GET %s: %d (%.80q), want %d", tt.path, resp.StatusCode, body, tt.code)
			}
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("replay after its context ended: %v", err)
	}
}

func TestReplayRefusesWhatIsNotARecording(t *testing.T) {
	var errs bytes.Buffer
	err := app.Run(context.Background(), []string{"replay", "--addr", "127.0.0.1:0", "../examples/configs/most-allocated.yaml"}, io.Discard, &errs)
	if err == nil || !strings.Contains(err.Error(), "not a recording") {
		t.Errorf("replay of a YAML file: %v, want an error saying it is not a recording", err)
	}
}

// TestReplayRefusesALongLine: a small file whose one event unpacks to more
// than any event minisched writes is refused, quickly, before anything
// serves.
func TestReplayRefusesALongLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hostile.recording.gz")
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, _ = z.Write([]byte(`{"format":"minisched.recording/v1","schema":"minisched.stream/v1"}` + "\n" +
		`{"type":"snapshot","schema":"minisched.stream/v1","seq":2}` + "\n" + `{"seq":3,"x":"`))
	_, _ = z.Write(bytes.Repeat([]byte("x"), 2*recording.MaxEventBytes))
	_ = z.Close()
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	err := app.Run(context.Background(), []string{"replay", "--addr", "127.0.0.1:0", file}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "event 1 is longer than") {
		t.Errorf("replay of a recording with a %d-byte event: %v, want it refused for the line's length", 2*recording.MaxEventBytes, err)
	}
}
