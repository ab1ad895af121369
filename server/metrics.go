package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// StreamCounter counts the stream's clients; metrics.Metrics is one.
type StreamCounter interface {
	StreamClients(delta float64)
	StreamDropped(n uint64)
	StreamClosed(reason string)
}

type noCount struct{}

func (noCount) StreamClients(float64) {}
func (noCount) StreamDropped(uint64)  {}
func (noCount) StreamClosed(string)   {}

func (s *Server) metrics(c echo.Context) error {
	if s.opts.Metrics == nil {
		return apiError(http.StatusNotFound, "metrics are not enabled")
	}
	promhttp.HandlerFor(s.opts.Metrics, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
	return nil
}
