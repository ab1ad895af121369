package server_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// TestFailedAuthThrottled: after a burst of requests without the right
// token, a client is answered 429 before its token is looked at, the right
// one too, until a second has passed per request.
func TestFailedAuthThrottled(t *testing.T) {
	const token = "a-token-of-24-characters"
	ts := guarded(t, server.Options{Token: token})
	get := func(bearer string) int {
		req, _ := http.NewRequest("GET", ts.URL+"/api/v1/queue", nil)
		req.Header.Set("Authorization", "Bearer "+bearer)
		return do(t, req).Code
	}
	codes := map[int]int{}
	for range 40 {
		codes[get("a-wrong-guess")]++
	}
	// A slow machine may see a request or two refilled meanwhile.
	if codes[http.StatusUnauthorized] < 30 || codes[http.StatusTooManyRequests] == 0 || codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests] != 40 {
		t.Errorf("40 wrong tokens answered %v, want 30 × 401 then 429", codes)
	}
	// The right token right after a 429 is refused too (a try again if a
	// second passed between the two, as it may on a loaded machine).
	throttled := false
	for try := 0; try < 5 && !throttled; try++ {
		for get("a-wrong-guess") != http.StatusTooManyRequests {
		}
		throttled = get(token) == http.StatusTooManyRequests
	}
	if !throttled {
		t.Errorf("the right token while throttled was let through, want 429")
	}
	eventually(t, 30*time.Second, "the right token let through once the throttle refills", func() bool { return get(token) == http.StatusOK })
}

// TestInFlightBytes: request bodies held at once are bounded, all clients
// together; a body sent without its length counts as the limit.
func TestInFlightBytes(t *testing.T) {
	ts := guarded(t, server.Options{BodyLimit: 1024, InFlightBytes: 2048})
	// The client sends a body only once the server reads it (100
	// Continue), that is, once the server has taken the body's bytes.
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Hour}}
	defer client.CloseIdleConnections()
	type held struct {
		w    *io.PipeWriter
		done chan int
	}
	send := func() held {
		pr, pw := io.Pipe()
		h := held{pw, make(chan int, 1)}
		go func() {
			req, _ := http.NewRequest("POST", ts.URL+"/api/v1/nodes", pr)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Expect", "100-continue")
			resp, err := client.Do(req)
			if err != nil {
				h.done <- 0
				return
			}
			resp.Body.Close()
			h.done <- resp.StatusCode
		}()
		return h
	}
	first, second := send(), send()
	for _, h := range []held{first, second} {
		if _, err := h.w.Write([]byte(`{"metadata":`)); err != nil {
			t.Fatal(err)
		}
	}
	third := send()
	if code := <-third.done; code != http.StatusTooManyRequests {
		t.Errorf("a third body beyond the budget: %d, want 429", code)
	}
	_ = third.w.Close()
	for _, h := range []held{first, second} {
		_ = h.w.CloseWithError(io.ErrUnexpectedEOF)
		if code := <-h.done; code == http.StatusTooManyRequests {
			t.Errorf("a body within the budget: 429")
		}
	}
	eventually(t, 30*time.Second, "a body taken once the others were answered", func() bool {
		h := send()
		_, _ = h.w.Write([]byte(`{}`))
		_ = h.w.Close()
		return <-h.done != http.StatusTooManyRequests
	})
}
