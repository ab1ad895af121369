package server

// POST /whatif/reschedule: on minisched's own copy of a cluster, schedule
// the whole workload again under the current configuration and compare.

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"minisched/cluster"
	"minisched/whatif"
)

func (s *Server) rescheduleAll(c echo.Context) error {
	if s.cluster.Writes() != cluster.WritesAll {
		return apiError(http.StatusForbidden, "what-if runs only on minisched's own cluster (a copy: --import-from, --load or an import), never on a real one")
	}
	if s.opts.Scheduler == nil || s.opts.Recorder == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs here")
	}
	if !s.whatif.TryLock() {
		return apiError(http.StatusConflict, "a what-if run is under way: wait for its report")
	}
	defer s.whatif.Unlock()
	if st := s.opts.Scheduler.State(); st.State != "running" {
		return apiError(http.StatusConflict, "the scheduler is %s: resume it first", st.State)
	}
	rep, err := whatif.RescheduleAll(c.Request().Context(), whatif.Env{Client: s.opts.Client, Scheduler: s.opts.Scheduler, Recorder: s.opts.Recorder,
		Summaries: s.cluster.Summaries}, whatif.Options{})
	if err != nil {
		return apiError(http.StatusInternalServerError, "what-if: %v", err)
	}
	return c.JSON(http.StatusOK, rep)
}
