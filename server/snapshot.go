package server

// The state a stream client starts from: GET /snapshot, and the stream's
// first message.

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"minisched/event"
	"minisched/history"
)

// Snapshot is the state a stream client starts from: everything up to Seq.
type Snapshot struct {
	Type      string               `json:"type"`
	Schema    string               `json:"schema"`
	Seq       uint64               `json:"seq"`
	Time      time.Time            `json:"time"`
	Reason    string               `json:"reason,omitempty"`
	Nodes     []event.NodeSummary  `json:"nodes"`
	Pods      []event.PodSummary   `json:"pods"`
	Queue     QueueView            `json:"queue"`
	Scheduler event.SchedulerState `json:"scheduler"`
	History   history.Stats        `json:"history"`
	// Vocabulary names the codes, kinds, queues and extension points the
	// events use.
	Vocabulary event.Vocabulary `json:"vocabulary"`
	// Copy says the cluster is a copy, and of what; nil when it is not.
	Copy *CopyOf `json:"copy,omitempty"`
	// InterruptedImport is an import that a crash cut off: the cluster
	// holds part of it.
	InterruptedImport *InterruptedImport `json:"interruptedImport,omitempty"`
	// FeatureGates are the gates set by --feature-gates, for this run.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// CopyOf says where a cluster that is a copy came from, so that the
// dashboard can say that what happens here happens to no real cluster.
type CopyOf struct {
	// Kind is how it was made: import-from (a real cluster at start), load
	// (a snapshot file at start) or import (POST /import).
	Kind   string    `json:"kind"`
	Source string    `json:"source"`
	At     time.Time `json:"at"`
}

// snapshot takes the sequence number first: anything that happens while the
// lists are built is also sent as an event, and clients apply events
// idempotently.
func (s *Server) snapshot(reason string) Snapshot {
	seq := s.opts.Recorder.LastSeq()
	nodes, pods := s.cluster.Summaries()
	words := event.Words()
	if s.opts.FeatureGates["GenericWorkload"] {
		words = words.WithPodGroups()
	}
	snap := Snapshot{Type: "snapshot", Schema: event.SchemaVersion, Seq: seq, Time: time.Now(), Reason: reason,
		Nodes: nodes, Pods: pods, Queue: s.queueView(), History: s.opts.Recorder.Stats(), Vocabulary: words, Copy: s.copyOf.Load(), InterruptedImport: s.interrupted.Load(),
		FeatureGates: s.opts.FeatureGates}
	if s.opts.Scheduler != nil {
		snap.Scheduler = s.opts.Scheduler.State()
	}
	return snap
}

func (s *Server) getSnapshot(c echo.Context) error { return c.JSON(http.StatusOK, s.snapshot("")) }
