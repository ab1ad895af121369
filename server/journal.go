package server

// An import under way is journaled in the data directory (with the
// document it loads), so that after a crash minisched says the cluster
// holds part of it, and offers to finish it (POST /import/resume) or to
// reset. What the cluster is a copy of, and the list of scenario runs, are
// journaled too, so that a restart on the same data directory still shows
// them.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"minisched/exclusive"
	"minisched/scenario"
	"minisched/snapshot"
)

// Journal entries.
const (
	journalRuns           = "scenario-runs"
	journalCopy           = "copy"
	journalImport         = "import"
	journalImportDocument = "import-document"
)

// InterruptedImport is an import that began and never ended: the process
// stopped in the middle of it.
type InterruptedImport struct {
	// Kind and Source say what was loaded, as CopyOf does.
	Kind   string    `json:"kind"`
	Source string    `json:"source"`
	Began  time.Time `json:"began"`
	// Nodes and Pods are how many the document holds: the cluster holds
	// part of them.
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	// Resumable says the document was kept: POST /import/resume loads it
	// again, in full.
	Resumable bool `json:"resumable"`
}

// restoreJournal reads what an earlier process left in the data directory.
func (s *Server) restoreJournal() {
	var copyOf CopyOf
	if ok, err := s.journal.GetJSON(journalCopy, &copyOf); ok && err == nil && s.copyOf.Load() == nil {
		if copyOf.Kind == "mirror" {
			copyOf.Kind = "import-from" // no longer followed
		}
		s.copyOf.Store(&copyOf)
	}
	var interrupted InterruptedImport
	if ok, err := s.journal.GetJSON(journalImport, &interrupted); ok && err == nil {
		_, interrupted.Resumable, _ = s.journal.Get(journalImportDocument)
		s.interrupted.Store(&interrupted)
	}
}

// keepRuns restores the scenario runs an earlier process kept, and keeps
// the list from now on. The latest list is written by one goroutine: a run
// that takes a step a millisecond never waits on the disk.
func (s *Server) keepRuns() {
	if s.journal.Dir == "" || s.scenarios == nil {
		return
	}
	var previous []*scenario.Run
	if _, err := s.journal.GetJSON(journalRuns, &previous); err != nil {
		previous = nil // a list that does not read is started afresh
	}
	latest := make(chan []*scenario.Run, 1)
	s.scenarios.Keep(previous, func(runs []*scenario.Run) {
		select {
		case <-latest: // a newer list replaces one not yet written
		default:
		}
		latest <- runs
	})
	go func() {
		for {
			select {
			case runs := <-latest:
				_ = s.journal.PutJSON(journalRuns, runs)
			case <-s.ctx.Done():
				select { // the last list, if one waits
				case runs := <-latest:
					_ = s.journal.PutJSON(journalRuns, runs)
				default:
				}
				return
			}
		}
	}()
}

// forgetCopy is what a reset does to the journal: the cluster is a copy of
// nothing, and no import is left to finish, unless the reset is the first
// part of the import under way (a replace).
func (s *Server) forgetCopy() {
	s.copyOf.Store(nil)
	_ = s.journal.Remove(journalCopy)
	if s.importing.Load() {
		return
	}
	s.interrupted.Store(nil)
	_ = s.journal.Remove(journalImport)
	_ = s.journal.Remove(journalImportDocument)
}

// Journaled runs load, a load of doc from copyOf's source, with the
// import journaled while it runs (with the document raw returns, kept to
// finish the import after a crash); once it succeeds the cluster is a copy
// of that source.
func (s *Server) Journaled(copyOf CopyOf, doc *snapshot.Document, raw func() ([]byte, error), load func() error) error {
	began := InterruptedImport{Kind: copyOf.Kind, Source: copyOf.Source, Began: time.Now(), Nodes: len(doc.Nodes), Pods: len(doc.Pods)}
	if s.journal.Dir != "" {
		data, err := raw()
		if err != nil {
			return fmt.Errorf("keeping the document in the data directory: %w", err)
		}
		if err := s.journal.Put(journalImportDocument, data); err != nil {
			return err
		}
	}
	if err := s.journal.PutJSON(journalImport, began); err != nil {
		return err
	}
	s.importing.Store(true)
	err := load()
	s.importing.Store(false)
	// A load that failed was answered: the client knows, and a reset or
	// another import follows.
	_ = s.journal.Remove(journalImport)
	_ = s.journal.Remove(journalImportDocument)
	if err != nil {
		return err
	}
	s.interrupted.Store(nil)
	copyOf.At = time.Now()
	s.copyOf.Store(&copyOf)
	return s.journal.PutJSON(journalCopy, copyOf)
}

// loadSnapshot loads a snapshot document (its bytes as sent), journaled.
func (s *Server) loadSnapshot(ctx context.Context, raw []byte, replace bool, copyOf CopyOf) (snapshot.Counts, error) {
	doc, err := snapshot.Decode(raw)
	if err != nil {
		return snapshot.Counts{}, importError(err)
	}
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	maxNodes, maxPods := s.cluster.Limits()
	opts := snapshot.LoadOptions{Replace: replace, Reset: s.resetCluster, SchedulerName: s.opts.SchedulerName, MaxNodes: maxNodes, MaxPods: maxPods,
		MaxMetaBytes: s.cluster.MaxMetaBytes(), Pause: s.owner.Pause}
	if s.opts.Scheduler != nil {
		opts.Scheduler = s.opts.Scheduler
	}
	var counts snapshot.Counts
	err = s.Journaled(copyOf, doc, func() ([]byte, error) { return raw, nil }, func() error {
		counts, err = snapshot.Load(ctx, s.opts.Client, doc, opts)
		return err
	})
	if err != nil {
		return counts, importError(err)
	}
	return counts, nil
}

// resumeImport loads the document of an interrupted import again, in full,
// over what part of it the cluster holds.
func (s *Server) resumeImport(c echo.Context) error {
	interrupted := s.interrupted.Load()
	if interrupted == nil || !interrupted.Resumable {
		return apiError(http.StatusNotFound, "no interrupted import to finish")
	}
	ctx, end, err := s.owner.Begin(context.WithoutCancel(c.Request().Context()), exclusive.Import, "")
	if err != nil {
		return err
	}
	defer end()
	raw, ok, err := s.journal.Get(journalImportDocument)
	if err != nil || !ok {
		return fmt.Errorf("reading the interrupted import's document: %v", err)
	}
	counts, err := s.loadSnapshot(ctx, raw, true, CopyOf{Kind: interrupted.Kind, Source: interrupted.Source})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, counts)
}
