package server

// minisched replay: the dashboard and one recording, with no cluster behind
// them, so that a recording is a lesson anyone can open.

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"minisched/cluster"
	"minisched/recording"
)

// ReplayOptions configure a replay server.
type ReplayOptions struct {
	// Web holds the dashboard's files.
	Web fs.FS
	// Recording is the file to serve, as it is on disk; Header is its
	// header, read by the caller when it checked the file.
	Recording []byte
	Header    recording.Header
	// Name is the file's name, for the page to show.
	Name string
	// Addr and AllowedOrigins are as in Options.
	Addr           string
	AllowedOrigins []string
}

// recordingPath is where a replay server serves its recording; the
// dashboard is sent there by ?recording=.
const recordingPath = "/api/v1/recording"

// NewReplay builds a server of the dashboard that replays one recording:
// the same files and the same cross-site defences, and no API but the
// recording.
func NewReplay(opts ReplayOptions) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: Options{Web: opts.Web, Addr: opts.Addr, AllowedOrigins: opts.AllowedOrigins}, echo: echo.New(), ctx: ctx, cancel: cancel,
		site: newSitePolicy(opts.Addr, opts.AllowedOrigins), cluster: cluster.New(cluster.Options{})}
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(middleware.Recover(), securityHeaders(opts.Web), s.sameSite)
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/healthz", ok)
	e.GET("/readyz", ok)
	api := e.Group("/api/v1")
	api.GET("/recording", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+strings.ReplaceAll(opts.Name, `"`, "")+`"`)
		return c.Stream(http.StatusOK, "application/gzip", bytes.NewReader(opts.Recording))
	})
	api.GET("/replay", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"name": opts.Name, "header": opts.Header, "recording": recordingPath})
	})
	api.Any("/*", func(c echo.Context) error {
		return apiError(http.StatusNotFound, "this minisched replays a recording: there is no cluster behind it, and no %s %s", c.Request().Method, c.Request().URL.Path)
	})
	files := http.FileServer(http.FS(opts.Web))
	e.GET("/*", func(c echo.Context) error {
		r := c.Request()
		switch p := r.URL.Path; {
		case p == "/" && r.URL.RawQuery == "":
			// The page replays what ?recording= names.
			return c.Redirect(http.StatusFound, "/?recording="+recordingPath)
		case p != "/" && strings.HasSuffix(p, "/"):
			return echo.ErrNotFound
		}
		files.ServeHTTP(c.Response(), r)
		return nil
	})
	s.http = &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	return s
}
