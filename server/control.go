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

// getConfig answers the running configuration, or with ?defaults=true
// kube-scheduler's defaults for this scheduler's name.
func (s *Server) getConfig(c echo.Context) error {
	if s.opts.Scheduler == nil || s.opts.Scheduler.Config() == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs in this process")
	}
	cfg := s.opts.Scheduler.Config()
	if c.QueryParam("defaults") == "true" {
		var err error
		if cfg, err = schedconfig.Default(s.opts.SchedulerName); err != nil {
			return err
		}
	}
	return writeConfig(c, cfg)
}

// writeConfig answers cfg as YAML or JSON, as the client asked.
func writeConfig(c echo.Context, cfg *config.KubeSchedulerConfiguration) error {
	data, err := schedconfig.Encode(cfg)
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

// putConfig validates a configuration and restarts the scheduler with it;
// with ?dryRun=true it only checks. A configuration that does not decode,
// validate or build is refused with 422, with the line of the problem
// when it can be told, and the running scheduler goes on untouched.
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
	dryRun := c.QueryParam("dryRun") == "true"
	cfg, err := schedconfig.Load(data, s.opts.SchedulerName)
	switch {
	case err != nil:
	case dryRun:
		err = s.opts.Scheduler.CheckConfig(cfg)
	default:
		err = s.opts.Scheduler.Restart(cfg)
	}
	var ce *schedconfig.Error
	if errors.As(err, &ce) {
		return c.JSON(http.StatusUnprocessableEntity, errorBody{Error: ce.Error(), Line: schedconfig.Line(data, ce)})
	}
	if err != nil {
		return err
	}
	if dryRun {
		return writeConfig(c, cfg)
	}
	return s.getConfig(c)
}

// PluginsView says which plugins can be enabled and which one profile
// enables.
type PluginsView struct {
	// Profile names the profile Enabled describes (GET
	// /scheduler/plugins?profile=NAME; the first by default), and Profiles
	// every profile, in the configuration's order.
	Profile   string   `json:"profile"`
	Profiles  []string `json:"profiles"`
	Available []string `json:"available"`
	// Enabled maps each extension point to its plugins in order; Score
	// plugins carry their weight.
	Enabled map[string][]EnabledPlugin `json:"enabled"`
	// Plugins says, for every available plugin, the extension points it
	// implements and the cluster events it registers.
	Plugins []minisched.PluginInfo `json:"plugins"`
	// Required says how many plugins a profile needs at an extension point
	// at least: one QueueSort (exactly one) and one Bind.
	Required map[string]int `json:"required"`
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
	catalog, err := sched.Catalog(c.Request().Context())
	if err != nil {
		return err
	}
	profiles := sched.Profiles()
	profile := c.QueryParam("profile")
	if profile == "" {
		profile = profiles[0]
	}
	p := sched.Plugins(profile)
	if p == nil {
		return apiError(http.StatusNotFound, "no profile is called %q: the profiles are %s", profile, strings.Join(profiles, ", "))
	}
	view := PluginsView{Profile: profile, Profiles: profiles, Available: s.opts.Scheduler.AvailablePlugins(), Enabled: map[string][]EnabledPlugin{},
		Plugins: catalog, Required: map[string]int{"QueueSort": 1, "Bind": 1}}
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
	if err := s.resetCluster(context.WithoutCancel(c.Request().Context())); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
