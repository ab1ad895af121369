// Package server is minisched's HTTP side: the dashboard's static files, the
// REST API under /api/v1, the websocket stream, health and metrics.
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	apipath "k8s.io/apimachinery/pkg/api/validation/path"
	clientset "k8s.io/client-go/kubernetes"

	"minisched/cluster"
	"minisched/compare"
	"minisched/event"
	"minisched/exclusive"
	"minisched/history"
	"minisched/journal"
	"minisched/minisched"
	"minisched/scenario"
)

// Options configure a Server.
type Options struct {
	Client clientset.Interface
	// Cluster watches the cluster for the dashboard and makes the API's and
	// scenarios' changes. Nil: an empty one (for tests of the HTTP side).
	Cluster *cluster.Cluster
	// Owner lets one operation on the whole cluster run at a time, and
	// pauses the controllers and kubelets for it. Nil: an owner of the
	// server's own, with nothing to pause.
	Owner     *exclusive.Owner
	Scheduler *minisched.Service
	Recorder  *history.Recorder
	// Observer receives the scenarios' progress; it is normally the
	// fan-out that feeds the history.
	Observer event.Observer
	// Web holds the dashboard's files (index.html at the root).
	Web fs.FS
	// SchedulerName names the profile a PUT configuration gets when it names
	// none.
	SchedulerName string
	// Metrics is where /metrics reads from; StreamMetrics counts the
	// stream's clients in it.
	Metrics       *prometheus.Registry
	StreamMetrics StreamCounter
	// BodyLimit bounds request bodies. Default 1 MiB.
	BodyLimit int64
	// ImportLimit bounds the body of POST /import, a whole cluster.
	// Default DefaultImportLimit.
	ImportLimit int64
	// InFlightBytes bounds the request bodies held at once, all clients
	// together. Default: one import and 64 bodies of BodyLimit.
	InFlightBytes int64
	// Addr is the address the server listens on: its host is allowed in
	// Host headers (every local address when it is a wildcard).
	Addr string
	// AllowedOrigins are the origins, besides the server's own, that may use
	// the API and the stream; their hosts are allowed in Host headers. "*"
	// allows any.
	AllowedOrigins []string
	// StreamBuffer is how many events a stream client may lag behind before
	// it is resynchronised. Default 50,000.
	StreamBuffer int
	// Bundled holds the bundled scenarios (*.yaml) POST /scenarios?bundled=
	// runs; ScenarioLimits bound what a scenario may do.
	Bundled        []fs.FS
	ScenarioLimits scenario.Limits
	// Token, when set, is required on every request but health probes.
	Token string
	// RateLimit is how many changing requests (POST, PUT, DELETE) a second a
	// client may make, with RateBurst at once (default ten times the rate).
	// Zero: no limit, for one person on loopback.
	RateLimit float64
	RateBurst int
	// TrustedProxies are the networks of reverse proxies whose
	// X-Forwarded-For names the client the rate limit counts.
	TrustedProxies []*net.IPNet
	// AllowReset permits POST /reset. Off when attached to a real cluster:
	// deleting every pod there would be a disaster.
	AllowReset bool
	// Health, when set, says why the process cannot serve (the embedded
	// control plane died): /healthz then answers 503.
	Health func() error
	// StreamWriteTimeout is how long one write to a stream client may take
	// before the client counts as stalled. Default 10s.
	StreamWriteTimeout time.Duration
	// MaxStreams and MaxStreamsPerClient bound the stream's connections.
	// Defaults: 512 and 64.
	MaxStreams, MaxStreamsPerClient int
	// TLSCert and TLSKey, when set, serve HTTPS; the token's cookie is then
	// Secure.
	TLSCert, TLSKey string
	// CopyOf, when set, says the cluster started as a copy (--load,
	// --import-from).
	CopyOf *CopyOf
	// FeatureGates are the gates --feature-gates set, for the dashboard.
	FeatureGates map[string]bool
	// DataDir, when set, is where the cluster's data outlives the process:
	// the server journals there what the cluster is a copy of, and an
	// import under way (package journal).
	DataDir string
}

// Server serves the API and the dashboard.
type Server struct {
	opts    Options
	echo    *echo.Echo
	cluster *cluster.Cluster
	http    *http.Server
	limiter *rateLimiter
	// failedAuth throttles requests without the right token, per client.
	failedAuth *rateLimiter
	site       *sitePolicy
	streams    *streamSlots
	// owner lets one operation on the whole cluster run at a time: a
	// reset, an import, a scenario run, a what-if or a comparison.
	owner *exclusive.Owner
	// scenarios runs POST /scenarios.
	scenarios *scenario.Manager
	// catalog caches the bundled scenarios' titles.
	catalog catalog
	// compared holds the last comparison (POST /compare, /whatif/reschedule).
	compared compare.Runs
	// copyOf says the cluster is a copy, until a reset.
	copyOf atomic.Pointer[CopyOf]
	// interrupted is an import an earlier process did not finish.
	interrupted atomic.Pointer[InterruptedImport]
	// importing is set while a journaled import runs.
	importing atomic.Bool
	journal   journal.Journal
	// mirror, when set, keeps the copy in step with its source.
	mirror atomic.Pointer[mirrorRef]
	// ctx ends when Shutdown begins; long requests (stream, waits) watch it.
	ctx    context.Context
	cancel context.CancelFunc
}

// New builds the server; Serve runs it.
func New(opts Options) *Server {
	if opts.BodyLimit <= 0 {
		opts.BodyLimit = 1 << 20
	}
	if opts.ImportLimit <= 0 {
		opts.ImportLimit = DefaultImportLimit
	}
	if opts.InFlightBytes <= 0 {
		opts.InFlightBytes = opts.ImportLimit + 64*opts.BodyLimit
	}
	if opts.StreamBuffer <= 0 {
		opts.StreamBuffer = 50_000
	}
	if opts.StreamWriteTimeout <= 0 {
		opts.StreamWriteTimeout = 10 * time.Second
	}
	if opts.Observer == nil {
		opts.Observer = event.Discard
	}
	if opts.RateLimit > 0 && opts.RateBurst <= 0 {
		opts.RateBurst = max(int(opts.RateLimit)*10, 1)
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = 512
	}
	if opts.MaxStreamsPerClient <= 0 {
		opts.MaxStreamsPerClient = 64
	}
	if opts.Cluster == nil {
		opts.Cluster = cluster.New(cluster.Options{})
	}
	if opts.StreamMetrics == nil {
		opts.StreamMetrics = noCount{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, echo: echo.New(), ctx: ctx, cancel: cancel, limiter: newRateLimiter(opts.RateLimit, opts.RateBurst),
		failedAuth: newRateLimiter(failedAuthPerSecond, failedAuthBurst),
		site:       newSitePolicy(opts.Addr, opts.AllowedOrigins),
		streams:    &streamSlots{perClient: map[string]int{}, maxTotal: opts.MaxStreams, maxEach: opts.MaxStreamsPerClient}}
	s.cluster, s.owner = opts.Cluster, opts.Owner
	if s.owner == nil {
		s.owner = exclusive.New(nil)
	}
	s.copyOf.Store(opts.CopyOf)
	s.journal = journal.Journal{Dir: opts.DataDir}
	s.restoreJournal()
	// Emptied, by whichever reset (REST, a lesson's, an import's), the
	// cluster is a copy of nothing.
	s.cluster.OnReset(s.forgetCopy)
	if opts.Scheduler != nil && opts.Recorder != nil {
		s.scenarios = scenario.NewManager(ctx, scenario.NewRunner(s.ScenarioEnv()), s.owner)
		s.keepRuns()
	}
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
		return fmt.Errorf("internal error: %w", err)
	}}))
	e.Use(securityHeaders(opts.Web), s.sameSite)
	if opts.Token != "" {
		e.Use(s.requireToken)
	}
	if opts.RateLimit > 0 {
		e.Use(s.limitRate)
	}
	e.Use(wholeSegments)
	e.Use(s.guardWrites)
	e.Use(limitBody(func(r *http.Request) int64 {
		if r.URL.Path == importPath {
			return opts.ImportLimit
		}
		return opts.BodyLimit
	}, &byteBudget{max: opts.InFlightBytes}))
	s.routes()
	s.http = &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		// A body is at most BodyLimit; the stream's connection is hijacked
		// and clears this deadline. Writes are bounded per message by the
		// stream itself, and long-polling requests need more than a fixed
		// write timeout would allow.
		ReadTimeout:    time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return s.ctx },
	}
	return s
}

func (s *Server) routes() {
	e := s.echo
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metrics)

	api := e.Group("/api/v1")
	api.GET("/nodes", s.listNodes)
	api.POST("/nodes", s.createNode)
	api.GET("/nodes/:name", s.getNode)
	api.PATCH("/nodes/:name", s.patchNode)
	api.DELETE("/nodes/:name", s.deleteNode)
	api.GET("/pods", s.listPods)
	api.POST("/pods", s.createPod)
	api.GET("/pods/:namespace/:name", s.getPod)
	api.GET("/pods/:namespace/:name/explain", s.getExplain)
	api.GET("/pods/:namespace/:name/explain/nodes/:node", s.getExplain)
	api.DELETE("/pods/:namespace/:name", s.deletePod)
	api.GET("/priorityclasses", s.listPriorityClasses)
	api.POST("/priorityclasses", s.createPriorityClass)
	api.DELETE("/priorityclasses/:name", s.deletePriorityClass)
	api.POST("/deployments", s.createDeployment)
	api.DELETE("/deployments/:namespace/:name", s.deleteDeployment)
	api.POST("/daemonsets", s.createDaemonSet)
	api.DELETE("/daemonsets/:namespace/:name", s.deleteDaemonSet)

	api.GET("/queue", s.getQueue)
	api.GET("/cycles", s.listCycles)
	api.GET("/cycles/:id", s.getCycle)
	api.GET("/events", s.listEvents)
	api.GET("/history", s.getHistory)
	api.GET("/snapshot", s.getSnapshot)
	api.GET("/stream", s.stream)
	api.GET("/recording", s.getRecording)
	api.POST("/whatif/reschedule", s.rescheduleAll)
	api.POST("/compare", s.postCompare)
	api.GET("/compare", s.getCompare)
	api.GET("/mirror", s.getMirror)
	api.GET("/compare/pods/:namespace/:name", s.getComparePod)

	api.GET("/scheduler", s.getScheduler)
	api.GET("/scheduler/config", s.getConfig)
	api.PUT("/scheduler/config", s.putConfig)
	api.GET("/scheduler/plugins", s.getPlugins)
	api.POST("/scheduler/pause", s.pause)
	api.POST("/scheduler/resume", s.resume)
	api.POST("/scheduler/step", s.step)
	api.POST("/reset", s.reset)
	api.GET("/export", s.export)
	api.POST("/import", s.importSnapshot)
	api.POST("/import/resume", s.resumeImport)

	api.GET("/scenarios", s.listScenarios)
	api.POST("/scenarios", s.createScenario)
	api.GET("/scenarios/:id", s.getScenario)
	api.DELETE("/scenarios/:id", s.cancelScenario)
	api.POST("/scenarios/:id/next", s.nextStep)

	api.Any("/*", noRoute)
	if s.opts.Web != nil {
		files := http.FileServer(http.FS(s.opts.Web))
		e.GET("/*", func(c echo.Context) error {
			// No directory listings: only the root has an index.
			if p := c.Request().URL.Path; p != "/" && strings.HasSuffix(p, "/") {
				return echo.ErrNotFound
			}
			files.ServeHTTP(c.Response(), c.Request())
			return nil
		})
	}
}

// noRoute answers a request no API route takes.
func noRoute(c echo.Context) error {
	return apiError(http.StatusNotFound, "no such API route: %s %s", c.Request().Method, c.Request().URL.Path)
}

// wholeSegments refuses a route parameter that is no whole path segment:
// Echo's router gives a route's last parameter the rest of a longer path
// (/nodes/x/y would name node "x/y"), and unescapes %2F; no route has such
// a path, and no object such a name ("..", "a/b"), so the answer is a 404,
// not the apiserver's refusal as a 500.
func wholeSegments(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		values := c.ParamValues()
		for i, name := range c.ParamNames() {
			if name != "*" && i < len(values) && len(apipath.IsValidPathSegmentName(values[i])) > 0 {
				return noRoute(c)
			}
		}
		return next(c)
	}
}

// Start begins watching the cluster for the dashboard's view; it returns
// once the watch's caches have synced.
func (s *Server) Start(ctx context.Context) error {
	if err := s.cluster.Start(ctx); err != nil {
		return err
	}
	if s.opts.Recorder != nil {
		// From a synced cluster, so that the first checkpoint is whole.
		go s.keepCheckpoints(ctx)
	}
	return nil
}

// Serve serves on l until Shutdown, over TLS when a certificate is set.
func (s *Server) Serve(l net.Listener) error {
	var err error
	if s.opts.TLSCert != "" {
		err = s.http.ServeTLS(l, s.opts.TLSCert, s.opts.TLSKey)
	} else {
		err = s.http.Serve(l)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests, ends the streams and waits for the
// requests under way, up to ctx's deadline, then the scenario run under way.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancel()
	s.cluster.Stop()
	err := s.http.Shutdown(ctx)
	if s.scenarios != nil {
		// The scenario's own restart of the scheduler must be over before
		// the caller stops the scheduler.
		s.scenarios.Close()
	}
	return err
}

// ScenarioEnv is what scenarios run against here.
func (s *Server) ScenarioEnv() scenario.Env {
	env := scenario.Env{
		Client: s.opts.Client, Cluster: s.cluster,
		Scheduler: s.opts.Scheduler, Recorder: s.opts.Recorder, Observer: s.opts.Observer,
		SchedulerName: s.opts.SchedulerName, Limits: s.opts.ScenarioLimits, OwnedOnly: s.cluster.Writes() == cluster.WritesOwned,
	}
	if s.opts.Recorder != nil {
		env.Checkpoint = s.Checkpoint
	}
	return env
}

// Handler exposes the server's routes, for tests that bring their own
// listener.
func (s *Server) Handler() http.Handler { return s.echo }

func (s *Server) healthz(c echo.Context) error {
	if s.opts.Health != nil {
		if err := s.opts.Health(); err != nil {
			return apiError(http.StatusServiceUnavailable, "unhealthy: %v", err)
		}
	}
	return c.String(http.StatusOK, "ok")
}

func (s *Server) readyz(c echo.Context) error {
	if !s.cluster.Synced() {
		return apiError(http.StatusServiceUnavailable, "watching the cluster: caches not synced yet")
	}
	if s.opts.Scheduler != nil && !s.opts.Scheduler.Ready() {
		return apiError(http.StatusServiceUnavailable, "the scheduler is not running or not synced yet")
	}
	return c.String(http.StatusOK, "ok")
}
