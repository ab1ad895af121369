package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minisched/exclusive"
)

// errorBody is every error's JSON form.
type errorBody struct {
	Error string `json:"error"`
	// Reason is the apiserver's machine-readable reason, when it gave one
	// (AlreadyExists, NotFound, Invalid...).
	Reason string `json:"reason,omitempty"`
	// Causes lists field errors of an invalid object.
	Causes []string `json:"causes,omitempty"`
	// Line is where in the body sent the problem is, when it can be told
	// (1-based).
	Line int `json:"line,omitempty"`
	// Busy is the operation on the whole cluster that refused this one
	// (409).
	Busy *exclusive.Op `json:"busy,omitempty"`
}

// httpError is an error with the status code it deserves.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func apiError(code int, format string, args ...any) error {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// handleError renders every error as JSON with a code that means what it
// says; errors from the apiserver keep the apiserver's code.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, body := http.StatusInternalServerError, errorBody{Error: err.Error()}
	var he *httpError
	var ee *echo.HTTPError
	var mb *http.MaxBytesError
	var status apierrors.APIStatus
	var busy *exclusive.BusyError
	switch {
	case errors.As(err, &busy):
		code, body.Error, body.Busy = http.StatusConflict, busy.Error()+": "+untilOver(busy.Running.Kind), &busy.Running
	case errors.As(err, &mb):
		code, body.Error = http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than the limit of %d bytes", mb.Limit)
	case errors.As(err, &he):
		code = he.code
	case errors.As(err, &ee):
		code, body.Error = ee.Code, fmt.Sprint(ee.Message)
	case errors.As(err, &status):
		st := status.Status()
		code, body.Error, body.Reason = int(st.Code), st.Message, string(st.Reason)
		if st.Details != nil {
			for _, cause := range st.Details.Causes {
				body.Causes = append(body.Causes, fmt.Sprintf("%s: %s", cause.Field, cause.Message))
			}
		}
		if code == 0 {
			code = http.StatusInternalServerError
		}
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(code)
		return
	}
	_ = c.JSON(code, body)
}

// untilOver says what to do about an operation under way.
func untilOver(kind exclusive.Kind) string {
	switch kind {
	case exclusive.Scenario:
		return "wait for it, or cancel it (DELETE /api/v1/scenarios/{id}; GET /api/v1/scenarios lists the runs)"
	case exclusive.WhatIf, exclusive.Comparison:
		return "wait for its report (GET /api/v1/compare)"
	}
	return "try again when it is over"
}

// limitBody refuses bodies over the request's limit with 413, before or
// while reading. A request's body also takes its share of the bytes all
// requests may have in flight at once (its length, or its limit when the
// length is not sent) until it is answered: past that, 429, as
// kube-apiserver answers past its in-flight limit.
func limitBody(limitOf func(*http.Request) int64, inFlight *byteBudget) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			limit := limitOf(req)
			if req.ContentLength > limit {
				return &http.MaxBytesError{Limit: limit}
			}
			if req.ContentLength != 0 && req.Body != nil && req.Body != http.NoBody {
				n := limit
				if req.ContentLength > 0 {
					n = req.ContentLength
				}
				if !inFlight.take(n) {
					c.Response().Header().Set("Retry-After", "1")
					return apiError(http.StatusTooManyRequests, "the server holds %d bytes of request bodies already, the most it takes at once (this one would add %d): try again shortly", inFlight.max, n)
				}
				defer inFlight.give(n)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			return next(c)
		}
	}
}

// byteBudget bounds the bytes of request bodies read at once.
type byteBudget struct {
	mu        sync.Mutex
	used, max int64
}

func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// readBody reads the whole (bounded) request body.
func readBody(c echo.Context) ([]byte, error) {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, err
		}
		return nil, apiError(http.StatusBadRequest, "reading the request body: %v", err)
	}
	return data, nil
}
