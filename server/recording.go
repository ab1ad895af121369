package server

// GET /recording: the history as one file, a scheduling story to replay with
// no cluster (package recording). It starts from a checkpoint, a snapshot
// this server gives the history whenever it asks for one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"minisched/history"
	"minisched/recording"
)

// checkpointPace keeps snapshots to 2% of one core: after a snapshot that
// took d, the next waits at least checkpointPace x d. On a big cluster with a
// small history the history then moves past its checkpoints faster than
// they come, and a recording says so (a larger --history helps) instead of
// the scheduler slowing down.
const checkpointPace = 50

// keepCheckpoints gives the history a snapshot whenever it wants one, until
// ctx ends.
func (s *Server) keepCheckpoints(ctx context.Context) {
	rec := s.opts.Recorder
	for {
		select {
		case <-ctx.Done():
			return
		case <-rec.CheckpointDue():
		}
		if !rec.CheckpointNeeded() {
			continue
		}
		start := time.Now()
		s.Checkpoint()
		pause := time.NewTimer(checkpointPace * time.Since(start))
		select {
		case <-ctx.Done():
			pause.Stop()
			return
		case <-pause.C:
		}
	}
}

// Checkpoint gives the history the state now, to start recordings from,
// and returns its sequence number.
func (s *Server) Checkpoint() uint64 {
	snap := s.snapshot("")
	data, err := json.Marshal(snap)
	if err == nil { // a snapshot is plain values: it always encodes
		s.opts.Recorder.AddCheckpoint(snap.Seq, data)
	}
	return snap.Seq
}

// WriteRecording writes the history to w as one recording: from the newest
// checkpoint at or before since (since 0: the oldest kept), with the events
// of pod (namespace/name; "" for all) and those about no pod.
func (s *Server) WriteRecording(w io.Writer, pod string, since uint64) error {
	rec, err := s.recordingOf(pod, since)
	if err != nil {
		return err
	}
	return rec.write(w)
}

// getRecording serves WriteRecording: ?since= and ?pod= as there.
func (s *Server) getRecording(c echo.Context) error {
	since, _, err := querySeq(c, "since")
	if err != nil {
		return err
	}
	rec, err := s.recordingOf(c.QueryParam("pod"), since)
	if errors.Is(err, history.ErrNoCheckpoint) {
		return apiError(http.StatusConflict, "recording: %v", err)
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/gzip")
	h.Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="minisched-%s.recording.gz"`, rec.header.Created.UTC().Format("20060102-150405")))
	c.Response().WriteHeader(http.StatusOK)
	_ = rec.write(c.Response()) // the status is sent: a client that goes away gets a cut-off file, which readers refuse
	return nil
}

// pendingRecording is what a recording will hold, gathered before a byte
// is written, so that a refusal can still be an error response.
type pendingRecording struct {
	header  recording.Header
	start   history.Checkpoint
	entries []*history.Entry
	filter  streamFilter
}

func (s *Server) recordingOf(pod string, since uint64) (*pendingRecording, error) {
	filter := streamFilter{Pod: pod}
	if err := filter.validate(); err != nil {
		return nil, apiError(http.StatusBadRequest, "recording: %v", err)
	}
	start, entries, err := s.opts.Recorder.Recording(since)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	return &pendingRecording{header: recording.Header{Created: time.Now(), Pod: pod, Since: since}, start: start, entries: entries, filter: filter}, nil
}

func (p *pendingRecording) write(w io.Writer) error {
	rw, err := recording.NewWriter(w, p.header, p.start.Data)
	if err != nil {
		return err
	}
	for _, e := range p.entries {
		if !p.filter.pass(&e.Event) {
			continue
		}
		if err := rw.Event(e.Event.Seq, e.JSON()); err != nil {
			return err
		}
	}
	return rw.Close()
}
