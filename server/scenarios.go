package server

import (
	"errors"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"

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

// bundled lists the bundled scenarios, by file name.
func (s *Server) bundled() []BundledScenario {
	out := []BundledScenario{}
	if s.opts.Bundled == nil {
		return out
	}
	files, _ := fs.Glob(s.opts.Bundled, "*.yaml")
	sort.Strings(files)
	for _, f := range files {
		data, err := fs.ReadFile(s.opts.Bundled, f)
		if err != nil {
			continue
		}
		b := BundledScenario{Name: strings.TrimSuffix(path.Base(f), ".yaml")}
		if sc, err := scenario.Parse(data); err == nil {
			b.Title, b.Description = sc.Metadata.Title, sc.Metadata.Description
		}
		out = append(out, b)
	}
	return out
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
		if s.opts.Bundled == nil || strings.ContainsAny(name, "/\\") {
			return apiError(http.StatusNotFound, "no bundled scenario %q", name)
		}
		var err error
		if data, err = fs.ReadFile(s.opts.Bundled, name+".yaml"); err != nil {
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
	run, err := s.scenarios.Start(c.Request().Context(), sc)
	var se *scenario.Error
	switch {
	case errors.Is(err, scenario.ErrBusy):
		return apiError(http.StatusConflict, "%v: wait for it or cancel it (DELETE /api/v1/scenarios/{id})", err)
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
