package server

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
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
// has a name wins. A file is parsed once per modification: a folder of big
// files costs a stat per file on each listing, not a parse.
func (s *Server) bundled() []BundledScenario {
	out := []BundledScenario{}
	seen := map[string]bool{}
	for i, dir := range s.opts.Bundled {
		files, _ := fs.Glob(dir, "*.yaml")
		for _, f := range files {
			name := strings.TrimSuffix(path.Base(f), ".yaml")
			info, err := fs.Stat(dir, f)
			if seen[name] || err != nil || !info.Mode().IsRegular() {
				continue // a link out of the folder, or not a file
			}
			seen[name] = true
			b := BundledScenario{Name: name}
			b.Title, b.Description = s.catalog.describe(i, dir, f, info, s.opts.BodyLimit)
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// bundledScenario reads and parses a bundled scenario by name. A file of
// --scenarios-dir is held to the body limit, and its parse error is not
// echoed: the file's content is not the client's to read.
func (s *Server) bundledScenario(name string) (*scenario.Scenario, []byte, error) {
	notFound := apiError(http.StatusNotFound, "no bundled scenario %q (GET /api/v1/scenarios lists them)", name)
	if strings.ContainsAny(name, "/\\") || name == "" {
		return nil, nil, notFound
	}
	for _, dir := range s.opts.Bundled {
		data, err := readCapped(dir, name+".yaml", s.opts.BodyLimit)
		switch {
		case errors.Is(err, errTooLarge):
			return nil, nil, apiError(http.StatusRequestEntityTooLarge, "bundled scenario %q is larger than %d bytes, the limit of a scenario", name, s.opts.BodyLimit)
		case err != nil:
			continue
		}
		sc, err := scenario.Parse(data)
		if err != nil {
			return nil, nil, apiError(http.StatusBadRequest, "bundled scenario %q is not a valid scenario; `minisched scenario run` on its file says why", name)
		}
		return sc, data, nil
	}
	return nil, nil, notFound
}

var errTooLarge = errors.New("file too large")

// readCapped reads a file of at most limit bytes.
func readCapped(dir fs.FS, name string, limit int64) ([]byte, error) {
	f, err := dir.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// catalog remembers each bundled file's title and description by its
// modification time and size.
type catalog struct {
	mu    sync.Mutex
	files map[catalogKey]catalogEntry
}

type catalogKey struct {
	dir  int
	name string
}

type catalogEntry struct {
	mod                time.Time
	size               int64
	title, description string
}

func (c *catalog) describe(i int, dir fs.FS, name string, info fs.FileInfo, limit int64) (title, description string) {
	key := catalogKey{i, name}
	c.mu.Lock()
	e, ok := c.files[key]
	c.mu.Unlock()
	if ok && e.mod.Equal(info.ModTime()) && e.size == info.Size() {
		return e.title, e.description
	}
	e = catalogEntry{mod: info.ModTime(), size: info.Size()}
	if data, err := readCapped(dir, name, limit); err == nil {
		if sc, err := scenario.Parse(data); err == nil {
			e.title, e.description = sc.Metadata.Title, sc.Metadata.Description
		}
	}
	c.mu.Lock()
	if c.files == nil {
		c.files = map[catalogKey]catalogEntry{}
	}
	c.files[key] = e
	c.mu.Unlock()
	return e.title, e.description
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
	var sc *scenario.Scenario
	var err error
	if name := c.QueryParam("bundled"); name != "" {
		if sc, _, err = s.bundledScenario(name); err != nil {
			return err
		}
	} else {
		if !manifest.IsSupportedType(c.Request().Header.Get(echo.HeaderContentType)) {
			return apiError(http.StatusUnsupportedMediaType, "send the scenario as application/yaml or application/json")
		}
		data, err := readBody(c)
		if err != nil {
			return err
		}
		if sc, err = scenario.Parse(data); err != nil {
			return apiError(http.StatusBadRequest, "invalid scenario: %v", err)
		}
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
