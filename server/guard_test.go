package server_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/websocket"

	"minisched/history"
	"minisched/internal/resttest"
	"minisched/server"
)

// A server with no cluster behind it: the guards answer before any handler
// needs one.
func guarded(t *testing.T, opts server.Options) *httptest.Server {
	t.Helper()
	opts.Recorder = history.New(history.Options{})
	ts := httptest.NewServer(server.New(opts).Handler())
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, req *http.Request) resttest.Response {
	t.Helper()
	return resttest.Send(t, req)
}

func TestToken(t *testing.T) {
	ts := guarded(t, server.Options{Token: "s3cret"})
	get := func(path string, header, cookie string) resttest.Response {
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
			if got := get(tt.path, tt.header, tt.cookie).Code; got != tt.want {
				t.Errorf("%s: %d, want %d", tt.path, got, tt.want)
			}
		})
	}
	// The URL token leaves a cookie behind for the page's own requests, and
	// a page load is sent back to its address without the token.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(ts.URL + "/?view=cycles&token=s3cret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Header.Get("Set-Cookie"); !strings.Contains(c, "minisched_token=s3cret") || !strings.Contains(c, "HttpOnly") || strings.Contains(c, "Secure") {
		t.Errorf("Set-Cookie %q: want the token, HttpOnly, not Secure without TLS", c)
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?view=cycles" {
		t.Errorf("page load with the token: %d to %q, want 303 to the same address without it", resp.StatusCode, resp.Header.Get("Location"))
	}
	// An API call with the token in the URL is answered, not redirected.
	if resp := get("/api/v1/queue?token=s3cret", "", ""); resp.Code != http.StatusOK {
		t.Errorf("API call with ?token=: %d", resp.Code)
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
		codes = append(codes, do(t, req).Code)
	}
	// The scheduler is missing (503) for the first three; then the limit.
	if codes[2] != http.StatusServiceUnavailable || codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests {
		t.Errorf("codes %v: want three through, then 429", codes)
	}
	// Reads are not limited.
	for i := 0; i < 10; i++ {
		req, _ := http.NewRequest("GET", ts.URL+"/api/v1/queue", nil)
		if code := do(t, req).Code; code != http.StatusOK {
			t.Fatalf("read %d: %d", i, code)
		}
	}
}

// One person on loopback is not limited: a script may create as fast as it
// likes, as kubectl may.
func TestNoRateLimitByDefault(t *testing.T) {
	ts := guarded(t, server.Options{})
	for i := 0; i < 1000; i++ {
		req, _ := http.NewRequest("POST", ts.URL+"/api/v1/scheduler/pause", nil)
		if code := do(t, req).Code; code == http.StatusTooManyRequests {
			t.Fatalf("request %d was limited", i)
		}
	}
}

// Behind a trusted reverse proxy each client has a budget of its own; an
// untrusted peer cannot claim another address.
func TestRateLimitBehindProxy(t *testing.T) {
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	tests := []struct {
		name    string
		trusted []*net.IPNet
		// codes of the second request of client A, then of the first of B
		wantA2, wantB1 int
	}{
		{"trusted proxy: clients apart", []*net.IPNet{loopback}, http.StatusTooManyRequests, http.StatusServiceUnavailable},
		{"untrusted peer: one budget", nil, http.StatusTooManyRequests, http.StatusTooManyRequests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := guarded(t, server.Options{RateLimit: 0.001, RateBurst: 1, TrustedProxies: tt.trusted})
			post := func(client string) int {
				req, _ := http.NewRequest("POST", ts.URL+"/api/v1/scheduler/pause", nil)
				req.Header.Set("X-Forwarded-For", client)
				return do(t, req).Code
			}
			if code := post("198.51.100.1"); code != http.StatusServiceUnavailable {
				t.Fatalf("first request: %d", code)
			}
			if code := post("198.51.100.1"); code != tt.wantA2 {
				t.Errorf("client A again: %d, want %d", code, tt.wantA2)
			}
			if code := post("198.51.100.2"); code != tt.wantB1 {
				t.Errorf("client B: %d, want %d", code, tt.wantB1)
			}
		})
	}
}

// A control plane that died makes /healthz fail, so that a supervisor
// restarts the process.
func TestHealthzReportsADeadControlPlane(t *testing.T) {
	var dead atomic.Pointer[error]
	ts := guarded(t, server.Options{Health: func() error {
		if err := dead.Load(); err != nil {
			return *err
		}
		return nil
	}})
	get := func() int {
		req, _ := http.NewRequest("GET", ts.URL+"/healthz", nil)
		return do(t, req).Code
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("healthy: %d", code)
	}
	stopped := errors.New("etcd stopped")
	dead.Store(&stopped)
	if code := get(); code != http.StatusServiceUnavailable {
		t.Errorf("after etcd stopped: %d, want 503", code)
	}
}

// A room reaches the server by names it cannot know (the host's address in
// front of a container): with a token, the token is the check, not the Host.
func TestTokenReplacesTheHostCheck(t *testing.T) {
	tests := []struct {
		name  string
		token string
		auth  string
		want  int
	}{
		{"no token: a foreign host is refused", "", "", http.StatusForbidden},
		{"token: a foreign host with the token is served", "s3cret", "Bearer s3cret", http.StatusOK},
		{"token: a foreign host without it is refused", "s3cret", "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := guarded(t, server.Options{Token: tt.token, Addr: "0.0.0.0:8080"})
			req, _ := http.NewRequest("GET", ts.URL+"/api/v1/queue", nil)
			req.Host = "192.0.2.10:8080"
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			if code := do(t, req).Code; code != tt.want {
				t.Errorf("status %d, want %d", code, tt.want)
			}
		})
	}
}
