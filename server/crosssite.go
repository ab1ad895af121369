package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"
)

// A web page the user happens to open must not be able to drive minisched:
// loopback is reachable from every page in the browser. Three checks keep
// other sites out:
//   - the Host header must name this server (DNS rebinding gives an attacker
//     a page whose origin resolves to 127.0.0.1 but keeps the attacker's name);
//   - a request that changes something must come from the dashboard's own
//     origin when a browser sends it (Origin, Sec-Fetch-Site); clients that are
//     not browsers send neither header, and keep working;
//   - a body must be JSON or YAML: an HTML form cannot send those across
//     sites without a CORS preflight, which minisched never answers.

// sitePolicy is the allow-list of host names and origins.
type sitePolicy struct {
	hosts   map[string]bool // lower-case host names, without port
	origins map[string]bool // lower-case scheme://host[:port]
	anyHost bool            // --allowed-origins '*'
}

// newSitePolicy allows the loopback names, the host of addr (every local
// address when addr is a wildcard), and the hosts of the allowed origins.
func newSitePolicy(addr string, allowedOrigins []string) *sitePolicy {
	p := &sitePolicy{hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}, origins: map[string]bool{}}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			p.addLocalAddresses()
		} else {
			p.hosts[strings.ToLower(host)] = true
		}
	}
	for _, o := range allowedOrigins {
		if o == "*" {
			p.anyHost = true
			continue
		}
		u, err := url.Parse(o)
		if err != nil || u.Host == "" {
			continue
		}
		p.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
		p.hosts[strings.ToLower(u.Hostname())] = true
	}
	return p
}

// addLocalAddresses allows every address of this machine and its name: a
// room reaches a server listening on 0.0.0.0 by any of them.
func (p *sitePolicy) addLocalAddresses() {
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipnet, ok := a.(*net.IPNet); ok {
				p.hosts[ipnet.IP.String()] = true
			}
		}
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		p.hosts[strings.ToLower(name)] = true
	}
}

// hostAllowed checks a Host header (host[:port]).
func (p *sitePolicy) hostAllowed(hostport string) bool {
	if p.anyHost {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	return p.hosts[host]
}

// originAllowed checks an Origin header against the request's own host and
// the allowed origins.
func (p *sitePolicy) originAllowed(origin, requestHost string) bool {
	if p.anyHost {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, requestHost) || p.origins[strings.ToLower(u.Scheme+"://"+u.Host)]
}

// sameSite rejects requests from other sites: a foreign Host, a changing
// request whose Origin or Sec-Fetch-Site names another site, a body of a type
// a cross-site form could send.
func (s *Server) sameSite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		// With a token, a rebound host name gains nothing: the page cannot
		// know the token, and the browser keeps the cookie to our own name.
		// A room reaches the server by names it cannot know (the host's
		// address in front of a container), so the check is left to the
		// token there.
		if s.opts.Token == "" && !s.site.hostAllowed(r.Host) {
			return apiError(http.StatusForbidden, "host %q is not this server's: start minisched with --allowed-origins to allow it", r.Host)
		}
		if !changes(r.Method) {
			return next(c)
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			return apiError(http.StatusForbidden, "cross-site requests may not change anything (Sec-Fetch-Site: %s)", site)
		}
		if origin := r.Header.Get("Origin"); origin != "" && !s.site.originAllowed(origin, r.Host) {
			return apiError(http.StatusForbidden, "origin %q may not change anything here: start minisched with --allowed-origins to allow it", origin)
		}
		if r.ContentLength != 0 || r.Header.Get(echo.HeaderContentType) != "" {
			if err := checkContentType(r.Header.Get(echo.HeaderContentType)); err != nil {
				return err
			}
		}
		return next(c)
	}
}

func changes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// checkContentType accepts JSON and YAML only.
func checkContentType(header string) error {
	mt, _, err := mime.ParseMediaType(header)
	if err == nil {
		switch mt {
		// merge-patch+json is PATCH /nodes/{name}'s; like JSON, no form
		// can send it across sites without a preflight.
		case "application/json", "application/merge-patch+json", "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
			return nil
		}
	}
	return apiError(http.StatusUnsupportedMediaType, "unsupported content type %q: send application/json or application/yaml", header)
}

// securityHeaders keeps the dashboard out of other sites' frames, its
// scripts to its own files (and the import map inline in index.html, by its
// hash), and its addresses out of Referer headers.
func securityHeaders(web fs.FS) echo.MiddlewareFunc {
	scripts := "'self'"
	for _, hash := range inlineScriptHashes(web) {
		scripts += " '" + hash + "'"
	}
	csp := "default-src 'self'; script-src " + scripts + "; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Frame-Options", "DENY")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("X-Content-Type-Options", "nosniff")
			return next(c)
		}
	}
}

// inlineScript matches the inline scripts of index.html (the import map).
var inlineScript = regexp.MustCompile(`(?s)<script[^>]*>(.*?)</script>`)

// inlineScriptHashes returns the CSP hashes of index.html's inline scripts.
func inlineScriptHashes(web fs.FS) []string {
	if web == nil {
		return nil
	}
	page, err := fs.ReadFile(web, "index.html")
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range inlineScript.FindAllSubmatch(page, -1) {
		if len(bytes.TrimSpace(m[1])) == 0 {
			continue // a script with src
		}
		sum := sha256.Sum256(m[1])
		out = append(out, "sha256-"+base64.StdEncoding.EncodeToString(sum[:]))
	}
	return out
}
