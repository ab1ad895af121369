package server

// Control of the scheduler and the cluster: GET /scheduler, pause,
// resume, step, the configuration and its plugins, reset.

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"sigs.k8s.io/yaml"

	"minisched/manifest"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
	"minisched/scenario"
)

func (s *Server) getScheduler(c echo.Context) error {
	if s.opts.Scheduler == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs in this process")
	}
	return c.JSON(http.StatusOK, s.opts.Scheduler.State())
}

func (s *Server) control(f func(*minisched.Service)) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.opts.Scheduler == nil {
			return apiError(http.StatusServiceUnavailable, "no scheduler runs in this process")
		}
		f(s.opts.Scheduler)
		return c.JSON(http.StatusOK, s.opts.Scheduler.State())
	}
}

func (s *Server) pause(c echo.Context) error  { return s.control((*minisched.Service).Pause)(c) }
func (s *Server) resume(c echo.Context) error { return s.control((*minisched.Service).Resume)(c) }
func (s *Server) step(c echo.Context) error   { return s.control((*minisched.Service).Step)(c) }

// wantsYAML says whether the client asked for YAML.
func wantsYAML(c echo.Context) bool {
	for _, part := range strings.Split(c.Request().Header.Get(echo.HeaderAccept), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && strings.Contains(mt, "yaml") {
			return true
		}
	}
	return c.QueryParam("format") == "yaml"
}

func (s *Server) getConfig(c echo.Context) error {
	if s.opts.Scheduler == nil || s.opts.Scheduler.Config() == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs in this process")
	}
	data, err := schedconfig.Encode(s.opts.Scheduler.Config())
	if err != nil {
		return err
	}
	if wantsYAML(c) {
		return c.Blob(http.StatusOK, "application/yaml", data)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, js)
}

// putConfig validates a configuration and restarts the scheduler with it.
// A configuration that does not decode, validate or build is refused with
// 422 and the running scheduler goes on untouched.
func (s *Server) putConfig(c echo.Context) error {
	if s.opts.Scheduler == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs in this process")
	}
	data, err := readBody(c)
	if err != nil {
		return err
	}
	if !manifest.IsSupportedType(c.Request().Header.Get(echo.HeaderContentType)) {
		return apiError(http.StatusUnsupportedMediaType, "send the configuration as application/yaml or application/json")
	}
	cfg, err := schedconfig.Load(data, s.opts.SchedulerName)
	if err == nil {
		err = s.opts.Scheduler.Restart(cfg)
	}
	var ce *schedconfig.Error
	if errors.As(err, &ce) {
		return apiError(http.StatusUnprocessableEntity, "%v", ce)
	}
	if err != nil {
		return err
	}
	return s.getConfig(c)
}

// PluginsView says which plugins can be enabled and which are.
type PluginsView struct {
	Available []string `json:"available"`
	// Enabled maps each extension point to its plugins in order; Score
	// plugins carry their weight.
	Enabled map[string][]EnabledPlugin `json:"enabled"`
}

// EnabledPlugin is a plugin at one extension point.
type EnabledPlugin struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

func (s *Server) getPlugins(c echo.Context) error {
	sched := s.scheduler()
	if sched == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs in this process")
	}
	p := sched.Plugins()
	view := PluginsView{Available: s.opts.Scheduler.AvailablePlugins(), Enabled: map[string][]EnabledPlugin{}}
	for _, ep := range []struct {
		name string
		set  config.PluginSet
	}{
		{"PreEnqueue", p.PreEnqueue}, {"QueueSort", p.QueueSort}, {"PreFilter", p.PreFilter}, {"Filter", p.Filter},
		{"PostFilter", p.PostFilter}, {"PreScore", p.PreScore}, {"Score", p.Score}, {"Reserve", p.Reserve},
		{"Permit", p.Permit}, {"PreBind", p.PreBind}, {"Bind", p.Bind}, {"PostBind", p.PostBind},
	} {
		list := []EnabledPlugin{}
		for _, pl := range ep.set.Enabled {
			list = append(list, EnabledPlugin{Name: pl.Name, Weight: pl.Weight})
		}
		view.Enabled[ep.name] = list
	}
	return c.JSON(http.StatusOK, view)
}

// reset deletes every pod and node, clears the history and keeps the
// scheduler's configuration.
func (s *Server) reset(c echo.Context) error {
	if !s.opts.AllowReset {
		return apiError(http.StatusForbidden, "reset is off: minisched is attached to a real cluster, and reset deletes every pod and node")
	}
	// The reset goes on if the client leaves (a reloaded tab): a cluster
	// half emptied is worse than an answer nobody reads.
	ctx := context.WithoutCancel(c.Request().Context())
	var err error
	if s.scenarios != nil {
		err = s.scenarios.Reset(ctx)
	} else {
		err = s.cluster.Reset(ctx)
	}
	switch {
	case errors.Is(err, scenario.ErrBusy):
		return apiError(http.StatusConflict, "a scenario is running: cancel it first (DELETE /api/v1/scenarios/{id})")
	case errors.Is(err, scenario.ErrResetting):
		return apiError(http.StatusConflict, "%v", err)
	case err != nil:
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
