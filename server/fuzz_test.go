package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// FuzzREST sends arbitrary bodies, of arbitrary content types, to every
// route that takes one, against the real server and apiserver: whatever
// arrives, the answer is never a 5xx and the server keeps answering. (The
// decoders have fuzz targets of their own; this one covers the handlers
// around them, such as the node defaults that once crashed the process.)
func FuzzREST(f *testing.F) {
	routes := []struct{ method, path string }{
		{"POST", "/api/v1/nodes"},
		{"POST", "/api/v1/pods"},
		{"POST", "/api/v1/priorityclasses"},
		{"PUT", "/api/v1/scheduler/config"},
		{"POST", "/api/v1/scenarios"},
		{"POST", "/api/v1/deployments"},
		{"POST", "/api/v1/daemonsets"},
	}
	f.Add(uint8(0), "application/json", []byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"f"},"status":{"allocatable":{}}}`))
	f.Add(uint8(0), "application/yaml", []byte("apiVersion: v1\nkind: Node\nmetadata: {name: g}\nstatus: {capacity: {}, allocatable: {cpu: '-1'}}\n"))
	f.Add(uint8(1), "application/json", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1e100"}}}]}}`))
	f.Add(uint8(2), "application/yaml", []byte("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: pc}\nvalue: 2000000000\n"))
	f.Add(uint8(3), "application/yaml", []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [{plugins: {multiPoint: {enabled: [{name: X}]}}}]\n"))
	f.Add(uint8(4), "application/yaml", []byte("apiVersion: minisched/v1\nkind: Scenario\nmetadata: {name: s}\nspec: {steps: [{wait: {for: deleted}}]}\n"))
	f.Add(uint8(4), "text/plain", []byte("{{{"))
	f.Fuzz(func(t *testing.T, route uint8, contentType string, body []byte) {
		r := routes[int(route)%len(routes)]
		if !httpguts.ValidHeaderFieldValue(contentType) {
			return // Go's client will not send it; the server never sees it
		}
		if code := api(t, r.method, r.path, contentType, body, nil); code >= 500 {
			t.Fatalf("%s %s (%q, %q): %d", r.method, r.path, contentType, body, code)
		}
		if code := api(t, "GET", "/healthz", "", nil, nil); code != http.StatusOK {
			t.Fatalf("healthz after %s %s: %d", r.method, r.path, code)
		}
	})
}

// FuzzRESTPaths: no path of any shape under the API gets a 5xx (issue 38,
// 14): a route's parameter must not take a segment too many.
func FuzzRESTPaths(f *testing.F) {
	methods := []string{"GET", "DELETE", "PATCH", "POST"}
	for _, p := range []string{"nodes/x/y", "pods/default/needy/explain/x", "pods/default/p/q", "pods/a/b/explain/nodes/c/d",
		"cycles/1/2", "scenarios/run-1/next/x", "nodes/%2F", "pods//", "nodes/.."} {
		f.Add(uint8(0), p)
	}
	f.Fuzz(func(t *testing.T, method uint8, path string) {
		if !utf8.ValidString(path) || strings.ContainsAny(path, " ?#\\\x7f") || strings.IndexFunc(path, unicode.IsControl) >= 0 {
			return // not a path a client sends as it is
		}
		if _, err := url.ParseRequestURI("/api/v1/" + path); err != nil {
			return
		}
		m := methods[int(method)%len(methods)]
		if code := api(t, m, "/api/v1/"+path, "application/json", nil, nil); code >= 500 {
			t.Fatalf("%s /api/v1/%s: %d", m, path, code)
		}
	})
}
