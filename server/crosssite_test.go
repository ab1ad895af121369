package server_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/internal/resttest"
)

// Another site's page must not change the cluster, read it through DNS
// rebinding, or frame the dashboard; scripts and curl keep working.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	reset(t)
	base := strings.TrimSuffix(inst.URL, "/")
	send := func(method, path, contentType string, body []byte, header map[string]string) resttest.Response {
		t.Helper()
		return resttest.Call(t, method, base+path, contentType, body, header)
	}
	nodeExists := func(name string) bool {
		_, err := inst.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	refused := []struct {
		name        string
		contentType string
		header      map[string]string
		want        int
	}{
		{"another origin with a form's content type", "text/plain", map[string]string{"Origin": "http://evil.example"}, 403},
		{"another origin with JSON", "application/json", map[string]string{"Origin": "http://evil.example"}, 403},
		{"a cross-site fetch", "application/json", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"a same-site but other-origin fetch", "application/json", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"a body that is neither JSON nor YAML", "text/plain", nil, 415},
		{"a form post", "application/x-www-form-urlencoded", nil, 415},
		{"a rebound host name", "application/json", map[string]string{"Host": "evil.example"}, 403},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			resp := send("POST", "/api/v1/nodes", tt.contentType, nodeJSON("intruder", "1"), tt.header)
			if resp.Code != tt.want {
				t.Errorf("status %d, want %d", resp.Code, tt.want)
			}
			if nodeExists("intruder") {
				t.Fatal("the node was created")
			}
		})
	}
	t.Run("a cross-site reset", func(t *testing.T) {
		mustCreate(t, "/api/v1/nodes", nodeJSON("keep-me", "1"))
		resp := send("POST", "/api/v1/reset", "", nil, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"})
		if resp.Code != 403 || !nodeExists("keep-me") {
			t.Errorf("status %d, node kept: %v", resp.Code, nodeExists("keep-me"))
		}
	})
	t.Run("a rebound host may not read either", func(t *testing.T) {
		if resp := send("GET", "/api/v1/nodes", "", nil, map[string]string{"Host": "evil.example:8080"}); resp.Code != 403 {
			t.Errorf("status %d, want 403", resp.Code)
		}
	})
	// The forms of a loopback address a rebinding attacker tries (the
	// probes of a security review), and an empty Host: each names no host
	// this server answers to.
	port := base[strings.LastIndex(base, ":"):]
	for _, host := range []string{"evil.example", "127.0.0.1.nip.io", "0x7f000001", "2130706433", "127.1", "localhost.", "[::ffff:127.0.0.1]", "127.0.0.2", "0.0.0.0"} {
		t.Run("forged host "+host, func(t *testing.T) {
			if resp := send("GET", "/api/v1/nodes", "", nil, map[string]string{"Host": host + port}); resp.Code != 403 {
				t.Errorf("GET with Host %s%s: %d, want 403", host, port, resp.Code)
			}
		})
	}
	t.Run("an empty host", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// HTTP/1.0 lets a request go without a Host.
		if _, err := conn.Write([]byte("GET /api/v1/nodes HTTP/1.0\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("GET without a Host: %d, want 403", resp.StatusCode)
		}
	})

	allowed := []struct {
		name   string
		node   string
		header map[string]string
	}{
		{"the dashboard's own origin", "from-dashboard", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}},
		{"a script with no browser headers", "from-curl", nil},
		{"localhost by name", "from-localhost", map[string]string{"Host": strings.Replace(strings.TrimPrefix(base, "http://"), "127.0.0.1", "localhost", 1)}},
	}
	for _, tt := range allowed {
		t.Run(tt.name, func(t *testing.T) {
			if resp := send("POST", "/api/v1/nodes", "application/json", nodeJSON(tt.node, "1"), tt.header); resp.Code != 201 {
				t.Fatalf("status %d, want 201", resp.Code)
			}
		})
	}

	t.Run("the stream checks the origin", func(t *testing.T) {
		url := "ws" + strings.TrimPrefix(base, "http") + "/api/v1/stream"
		_, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {"http://evil.example"}})
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Fatalf("foreign origin: err %v, resp %v", err, resp)
		}
		conn, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {base}})
		if err != nil {
			t.Fatalf("own origin: %v", err)
		}
		conn.Close()
	})

	t.Run("headers keep the dashboard out of frames", func(t *testing.T) {
		resp := send("GET", "/", "", nil, nil)
		for k, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"} {
			if got := resp.Header.Get(k); got != want {
				t.Errorf("%s: %q, want %q", k, got, want)
			}
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
	})

	t.Run("no directory listings", func(t *testing.T) {
		for _, path := range []string{"/js/", "/js", "/css/"} {
			if resp := send("GET", path, "", nil, nil); resp.Code != 404 {
				t.Errorf("GET %s: %d, want 404", path, resp.Code)
			}
		}
	})
}
