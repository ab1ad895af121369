package server

import (
	"errors"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"minisched/manifest"
	"minisched/scenario"
)

// BundledScenario describes a scenario that ships with minisched.
type BundledScenario struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// bundled lists the bundled scenarios, by file name; the first folder that
// has a name wins.
func (s *Server) bundled() []BundledScenario {
	out := []BundledScenario{}
	seen := map[string]bool{}
	for _, dir := range s.opts.Bundled {
		files, _ := fs.Glob(dir, "*.yaml")
		for _, f := range files {
			name := strings.TrimSuffix(path.Base(f), ".yaml")
			if seen[name] {
				continue
			}
			seen[name] = true
			b := BundledScenario{Name: name}
			if data, err := fs.ReadFile(dir, f); err == nil {
				if sc, err := scenario.Parse(data); err == nil {
					b.Title, b.Description = sc.Metadata.Title, sc.Metadata.Description
				}
			}
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// readBundled reads a bundled scenario by name.
func (s *Server) readBundled(name string) ([]byte, error) {
	if strings.ContainsAny(name, "/\\") || name == "" {
		return nil, fs.ErrNotExist
	}
	for _, dir := range s.opts.Bundled {
		if data, err := fs.ReadFile(dir, name+".yaml"); err == nil {
			return data, nil
		}
	}
	return nil, fs.ErrNotExist
}

func (s *Server) listScenarios(c echo.Context) error {
	runs := []*scenario.Run{}
	if s.scenarios != nil {
		runs = s.scenarios.List()
	}
	return c.JSON(http.StatusOK, map[string]any{"bundled": s.bundled(), "runs": runs})
}

// createScenario runs a scenario: the body's, or a bundled one by name.
func (s *Server) createScenario(c echo.Context) error {
	if s.scenarios == nil {
		return apiError(http.StatusServiceUnavailable, "scenarios are not enabled in this process")
	}
	var data []byte
	if name := c.QueryParam("bundled"); name != "" {
		var err error
		if data, err = s.readBundled(name); err != nil {
			return apiError(http.StatusNotFound, "no bundled scenario %q (GET /api/v1/scenarios lists them)", name)
		}
	} else {
		if !manifest.IsSupportedType(c.Request().Header.Get(echo.HeaderContentType)) {
			return apiError(http.StatusUnsupportedMediaType, "send the scenario as application/yaml or application/json")
		}
		var err error
		if data, err = readBody(c); err != nil {
			return err
		}
	}
	sc, err := scenario.Parse(data)
	if err != nil {
		return apiError(http.StatusBadRequest, "invalid scenario: %v", err)
	}
	opts := scenario.StartOptions{Reset: c.QueryParam("reset") == "true"}
	if opts.Pace, err = paceOf(c); err != nil {
		return err
	}
	if opts.Reset && !s.opts.AllowReset {
		return apiError(http.StatusForbidden, "reset is off: minisched is attached to a real cluster, and reset deletes every pod and node")
	}
	run, err := s.scenarios.Start(c.Request().Context(), sc, opts)
	var se *scenario.Error
	switch {
	case errors.As(err, &se):
		return apiError(http.StatusUnprocessableEntity, "invalid scenario: %v", se)
	case err != nil:
		return err
	}
	if c.QueryParam("wait") == "true" {
		if run, err = s.scenarios.Wait(c.Request().Context(), run.ID); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, run)
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/v1/scenarios/"+run.ID)
	return c.JSON(http.StatusAccepted, run)
}

// paceOf reads ?pace=step (wait for POST .../next before each step) or
// ?pace=2s (take each step after that pause, or on next).
func paceOf(c echo.Context) (scenario.Pace, error) {
	switch v := c.QueryParam("pace"); v {
	case "":
		return scenario.Pace{}, nil
	case "step":
		return scenario.Pace{Paced: true}, nil
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > scenario.MaxPause {
			return scenario.Pace{}, apiError(http.StatusBadRequest, "pace %q: want step, or a pause between steps from 1ms to %v (2s)", v, scenario.MaxPause)
		}
		return scenario.Pace{Paced: true, Pause: d}, nil
	}
}

// nextStep lets a paced run take its next step.
func (s *Server) nextStep(c echo.Context) error {
	if s.scenarios == nil {
		return apiError(http.StatusNotFound, "no such scenario run")
	}
	run, err := s.scenarios.Next(c.Param("id"))
	switch {
	case errors.Is(err, scenario.ErrNoRun):
		return apiError(http.StatusNotFound, "no scenario run %q", c.Param("id"))
	case errors.Is(err, scenario.ErrNotPaced):
		return apiError(http.StatusConflict, "scenario run %q: %v", c.Param("id"), err)
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, run)
}

func (s *Server) getScenario(c echo.Context) error {
	if s.scenarios == nil {
		return apiError(http.StatusNotFound, "no such scenario run")
	}
	get := s.scenarios.Get
	if c.QueryParam("wait") == "true" {
		get = func(id string) (*scenario.Run, error) { return s.scenarios.Wait(c.Request().Context(), id) }
	}
	run, err := get(c.Param("id"))
	if errors.Is(err, scenario.ErrNoRun) {
		return apiError(http.StatusNotFound, "no scenario run %q", c.Param("id"))
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, run)
}

func (s *Server) cancelScenario(c echo.Context) error {
	if s.scenarios == nil {
		return apiError(http.StatusNotFound, "no such scenario run")
	}
	run, err := s.scenarios.Cancel(c.Param("id"))
	if errors.Is(err, scenario.ErrNoRun) {
		return apiError(http.StatusNotFound, "no scenario run %q", c.Param("id"))
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, run)
}
