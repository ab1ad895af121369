package server

// The history: GET /cycles, /cycles/{id}, /events, /history, and the
// query parameters they share.

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"minisched/history"
)

func queryInt(c echo.Context, name string, def, min, max int) (int, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < min || n > max {
		return 0, apiError(http.StatusBadRequest, "query parameter %s=%q: want an integer from %d to %d", name, raw, min, max)
	}
	return n, nil
}

func querySeq(c echo.Context, name string) (uint64, bool, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return 0, false, apiError(http.StatusBadRequest, "query parameter %s=%q: want a sequence number (an integer of 0 or more)", name, raw)
	}
	return n, true, nil
}

// podKey checks a ?pod=namespace/name parameter.
func podKey(c echo.Context) (string, error) {
	pod := c.QueryParam("pod")
	if pod == "" {
		return "", nil
	}
	ns, name, ok := strings.Cut(pod, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", apiError(http.StatusBadRequest, "query parameter pod=%q: want namespace/name", pod)
	}
	return pod, nil
}

func (s *Server) listCycles(c echo.Context) error {
	limit, err := queryInt(c, "limit", 50, 1, 10000)
	if err != nil {
		return err
	}
	pod, err := podKey(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{
		"items":   s.opts.Recorder.Cycles(pod, limit),
		"history": s.opts.Recorder.Stats(),
	})
}

func (s *Server) getCycle(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return apiError(http.StatusBadRequest, "cycle id %q: want a positive integer", c.Param("id"))
	}
	rec, err := s.opts.Recorder.Cycle(id)
	if errors.Is(err, history.ErrNoCycle) {
		return apiError(http.StatusNotFound, "cycle %d is not in the history (it may have been dropped to stay within the history cap)", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// listEvents serves the stream's events to clients that poll.
func (s *Server) listEvents(c echo.Context) error {
	since, _, err := querySeq(c, "since")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 1000, 1, 10000)
	if err != nil {
		return err
	}
	filter, err := queryFilter(c)
	if err != nil {
		return err
	}
	entries, _, err := s.opts.Recorder.Since(since, limit)
	if errors.Is(err, history.ErrTruncated) {
		st := s.opts.Recorder.Stats()
		return apiError(http.StatusGone, "the history no longer holds the events after %d (it keeps %d to %d): load a fresh snapshot from /api/v1/snapshot", since, st.FirstSeq, st.LastSeq)
	}
	if err != nil {
		return err
	}
	// lastSeq is the last event the page read, so that since=lastSeq reads
	// the next page; the history's newest says whether there is one. With
	// a filter, a page reads limit events and holds those that pass: it
	// may hold none and still say more.
	last := since
	if len(entries) > 0 {
		last = entries[len(entries)-1].Event.Seq
	}
	var buf bytes.Buffer
	buf.WriteString(`{"lastSeq":`)
	buf.WriteString(strconv.FormatUint(last, 10))
	buf.WriteString(`,"more":`)
	buf.WriteString(strconv.FormatBool(last < s.opts.Recorder.LastSeq()))
	buf.WriteString(`,"events":[`)
	n := 0
	for _, e := range entries {
		if !filter.pass(&e.Event) {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(filter.encode(e))
		n++
	}
	buf.WriteString("]}")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf.Bytes())
}

func (s *Server) getHistory(c echo.Context) error {
	return c.JSON(http.StatusOK, s.opts.Recorder.Stats())
}
