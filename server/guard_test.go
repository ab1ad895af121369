package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"minisched/recorder"
	"minisched/server"
)

// A server with no cluster behind it: the guards answer before any handler
// needs one.
func guarded(t *testing.T, opts server.Options) *httptest.Server {
	t.Helper()
	opts.Recorder = recorder.New(recorder.Options{})
	ts := httptest.NewServer(server.New(opts).Handler())
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestToken(t *testing.T) {
	ts := guarded(t, server.Options{Token: "s3cret"})
	get := func(path string, header, cookie string) *http.Response {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		return do(t, req)
	}
	tests := []struct {
		name, path, header, cookie string
		want                       int
	}{
		{"no token", "/api/v1/queue", "", "", 401},
		{"wrong token", "/api/v1/queue", "Bearer nope", "", 401},
		{"bearer token", "/api/v1/queue", "Bearer s3cret", "", 200},
		{"token in the URL", "/api/v1/queue?token=s3cret", "", "", 200},
		{"token cookie", "/api/v1/queue", "", "minisched_token=s3cret", 200},
		{"wrong cookie", "/api/v1/queue", "", "minisched_token=s3cre", 401},
		{"metrics need it too", "/metrics", "", "", 401},
		{"health probes are open", "/healthz", "", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := get(tt.path, tt.header, tt.cookie).StatusCode; got != tt.want {
				t.Errorf("%s: %d, want %d", tt.path, got, tt.want)
			}
		})
	}
	// The URL token leaves a cookie behind for the page's own requests.
	resp := get("/?token=s3cret", "", "")
	if c := resp.Header.Get("Set-Cookie"); !strings.Contains(c, "minisched_token=s3cret") || !strings.Contains(c, "HttpOnly") {
		t.Errorf("Set-Cookie %q", c)
	}
	// The websocket too.
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/api/v1/stream"
	if _, resp, err := websocket.DefaultDialer.Dial(url, nil); err == nil || resp.StatusCode != 401 {
		t.Errorf("stream without a token: %v", resp)
	}
}

func TestRateLimit(t *testing.T) {
	ts := guarded(t, server.Options{RateLimit: 1, RateBurst: 3})
	codes := []int{}
	for i := 0; i < 5; i++ {
		req, _ := http.NewRequest("POST", ts.URL+"/api/v1/scheduler/pause", nil)
		codes = append(codes, do(t, req).StatusCode)
	}
	// The scheduler is missing (503) for the first three; then the limit.
	if codes[2] != http.StatusServiceUnavailable || codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests {
		t.Errorf("codes %v: want three through, then 429", codes)
	}
	// Reads are not limited.
	for i := 0; i < 10; i++ {
		req, _ := http.NewRequest("GET", ts.URL+"/api/v1/queue", nil)
		if code := do(t, req).StatusCode; code != http.StatusOK {
			t.Fatalf("read %d: %d", i, code)
		}
	}
}
