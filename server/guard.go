package server

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// tokenCookie carries the token for the browser once it has shown it in the
// URL: the page's fetches and its websocket then send it by themselves.
const tokenCookie = "minisched_token"

// Failed authentication is throttled per client: a burst of failures (a
// page opened without its token fires a few requests at once), then one a
// second, so that guessing the token takes forever.
const (
	failedAuthBurst     = 30
	failedAuthPerSecond = 1
)

// requireToken lets a request through only with the token: in an
// "Authorization: Bearer" header, a ?token= parameter (which also sets the
// cookie) or the cookie. Comparisons take constant time. Health probes are
// open: they reveal nothing. A client that failed too often is answered 429
// before its token is looked at.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	want := []byte(s.opts.Token)
	return func(c echo.Context) error {
		path := c.Request().URL.Path
		if path == "/healthz" || path == "/readyz" {
			return next(c)
		}
		client := s.clientAddr(c.Request())
		if s.failedAuth.exhausted(client) {
			c.Response().Header().Set("Retry-After", "1")
			return apiError(http.StatusTooManyRequests, "too many requests without the right token from %s: at most %d a second after the first %d; wait",
				client, failedAuthPerSecond, failedAuthBurst)
		}
		if q := c.QueryParam("token"); q != "" && subtle.ConstantTimeCompare([]byte(q), want) == 1 {
			r := c.Request()
			c.SetCookie(&http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
			if r.Method == http.MethodGet && !strings.HasPrefix(path, "/api/") && path != "/metrics" {
				// A page load: take the token out of the address bar, the
				// history and any link copied from it; the cookie carries it.
				u := *r.URL
				query := u.Query()
				query.Del("token")
				u.RawQuery = query.Encode()
				return c.Redirect(http.StatusSeeOther, u.RequestURI())
			}
			return next(c)
		}
		if h := c.Request().Header.Get(echo.HeaderAuthorization); strings.HasPrefix(h, "Bearer ") &&
			subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(h, "Bearer ")), want) == 1 {
			return next(c)
		}
		if ck, err := c.Cookie(tokenCookie); err == nil && subtle.ConstantTimeCompare([]byte(ck.Value), want) == 1 {
			return next(c)
		}
		s.failedAuth.allow(client)
		return apiError(http.StatusUnauthorized, "a token is required: open the dashboard as /?token=<token>, or send \"Authorization: Bearer <token>\"")
	}
}

// rateLimiter limits each client (by remote address) to a steady rate of
// requests that change things, with a burst: a script gone wrong in a
// workshop cannot drown the others. Reads are not limited.
type rateLimiter struct {
	mu      sync.Mutex
	rate    rate.Limit
	burst   int
	clients map[string]*client
}

type client struct {
	limiter *rate.Limiter
	seen    time.Time
}

func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	return &rateLimiter{rate: rate.Limit(perSecond), burst: burst, clients: map[string]*client{}}
}

// maxTrackedClients bounds the limiter's memory: past it, clients idle for
// a minute are forgotten.
const maxTrackedClients = 10000

func (l *rateLimiter) allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	c, ok := l.clients[key]
	if !ok {
		if len(l.clients) >= maxTrackedClients {
			for k, v := range l.clients {
				if now.Sub(v.seen) > time.Minute {
					delete(l.clients, k)
				}
			}
		}
		c = &client{limiter: rate.NewLimiter(l.rate, l.burst)}
		l.clients[key] = c
	}
	c.seen = now
	return c.limiter.Allow()
}

// exhausted reports whether key has no request left now, without taking
// one.
func (l *rateLimiter) exhausted(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.clients[key]
	return ok && c.limiter.Tokens() < 1
}

func (s *Server) limitRate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		host := s.clientAddr(c.Request())
		if !s.limiter.allow(host) {
			c.Response().Header().Set("Retry-After", "1")
			return apiError(http.StatusTooManyRequests, "too many requests from %s: at most %g changes a second (burst %d); slow down",
				host, float64(s.limiter.rate), s.limiter.burst)
		}
		return next(c)
	}
}

// clientAddr is the address the rate limit counts: the peer's, or, behind a
// trusted reverse proxy, the last address in X-Forwarded-For that is not a
// trusted proxy's. A client cannot forge it past an untrusted hop.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if !s.trusted(host) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if hop == "" {
			continue
		}
		if !s.trusted(hop) {
			return hop
		}
		host = hop
	}
	return host
}

func (s *Server) trusted(addr string) bool {
	ip := net.ParseIP(addr)
	for _, n := range s.opts.TrustedProxies {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}
