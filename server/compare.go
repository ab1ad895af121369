package server

// Comparisons of two scheduler configurations, for the dashboard's Compare
// view and for scripts: POST /compare runs one (a scenario under A and
// under B, or this cluster's own workload under A and under B), GET
// /compare tells the last one, GET /compare/pods/{namespace}/{name} gives
// one pod's last Filter and Score numbers under each. POST
// /whatif/reschedule is a comparison too: before against after.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"sigs.k8s.io/yaml"

	"minisched/cluster"
	"minisched/compare"
	"minisched/exclusive"
	"minisched/manifest"
	"minisched/minisched"
	"minisched/minisched/schedconfig"
	"minisched/scenario"
	"minisched/whatif"
)

// comparisonRequest is POST /compare's body. With neither bundled nor
// scenario, the comparison runs on this cluster's own workload; with
// reschedule, under the running configuration alone, before against after.
type comparisonRequest struct {
	Bundled    string          `json:"bundled,omitempty"`
	Scenario   json.RawMessage `json:"scenario,omitempty"`
	Reschedule bool            `json:"reschedule,omitempty"`
	A          configChoice    `json:"a"`
	B          configChoice    `json:"b"`
}

// configChoice is one side: a name to show, and a KubeSchedulerConfiguration
// (an object, or a string of YAML); none means the scenario's own
// configuration, or the running one.
type configChoice struct {
	Name   string          `json:"name,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
	// FeatureGates set the gates the scheduler alone reads for this side,
	// in kube-scheduler's flag form (minisched.SchedulerGates): A with
	// OpportunisticBatching=false against B with the process's, say.
	FeatureGates string `json:"featureGates,omitempty"`
}

// configJSON returns the choice's configuration as JSON, nil when none.
func (cc configChoice) configJSON() ([]byte, error) {
	raw := bytes.TrimSpace(cc.Config)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace([]byte(text))) == 0 {
			return nil, nil
		}
		return yaml.YAMLToJSON([]byte(text))
	}
	return raw, nil
}

func (s *Server) postCompare(c echo.Context) error {
	if s.opts.Scheduler == nil || s.opts.Recorder == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs here")
	}
	if !manifest.IsSupportedType(c.Request().Header.Get(echo.HeaderContentType)) {
		return apiError(http.StatusUnsupportedMediaType, "send the comparison as application/json or application/yaml")
	}
	data, err := readBody(c)
	if err != nil {
		return err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return apiError(http.StatusBadRequest, "the comparison is not YAML or JSON: %v", err)
	}
	var req comparisonRequest
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return apiError(http.StatusBadRequest, "the comparison: %v (want {\"bundled\" or \"scenario\", \"a\": {\"name\", \"config\"}, \"b\": {...}})", err)
	}
	var configs [2][]byte
	var parsed [2]*config.KubeSchedulerConfiguration
	var gates [2]string
	names := [2]string{req.A.Name, req.B.Name}
	for i, choice := range []configChoice{req.A, req.B} {
		side := "AB"[i : i+1]
		if _, gates[i], err = minisched.ParseSchedulerGates(choice.FeatureGates); err != nil {
			return apiError(http.StatusUnprocessableEntity, "configuration %s: %v", side, err)
		}
		if configs[i], err = choice.configJSON(); err != nil {
			return apiError(http.StatusBadRequest, "configuration %s: %v", side, err)
		}
		if configs[i] != nil {
			if parsed[i], err = schedconfig.Load(configs[i], s.opts.SchedulerName); err == nil {
				err = s.opts.Scheduler.CheckConfig(parsed[i])
			}
			if err != nil {
				return apiError(http.StatusUnprocessableEntity, "configuration %s: %v", side, err)
			}
		}
		if names[i] == "" {
			names[i] = side
			if gates[i] != "" {
				names[i] += " (" + gates[i] + ")"
			}
		}
	}
	if names[0] == names[1] {
		names[0], names[1] = names[0]+" (A)", names[1]+" (B)"
	}

	var cmp *compare.Comparison
	switch {
	case req.Bundled != "" && len(req.Scenario) > 0:
		return apiError(http.StatusBadRequest, "give bundled or scenario, not both")
	case req.Reschedule:
		if req.Bundled != "" || len(req.Scenario) > 0 || configs[0] != nil || configs[1] != nil || gates[0] != "" || gates[1] != "" {
			return apiError(http.StatusBadRequest, "reschedule runs the running configuration on this cluster: give no scenario, no configuration and no feature gates")
		}
		if cmp, err = s.reschedule(); err != nil {
			return err
		}
	case req.Bundled != "" || len(req.Scenario) > 0:
		if s.scenarios == nil {
			return apiError(http.StatusServiceUnavailable, "scenarios are not enabled in this process")
		}
		if !s.opts.AllowReset {
			return apiError(http.StatusForbidden, "a scenario comparison empties the cluster before each run, and reset is off: minisched is attached to a real cluster")
		}
		scData := []byte(req.Scenario)
		var sc *scenario.Scenario
		if req.Bundled != "" {
			if sc, scData, err = s.bundledScenario(req.Bundled); err != nil {
				return err
			}
		} else if sc, err = scenario.Parse(scData); err != nil {
			return apiError(http.StatusBadRequest, "invalid scenario: %v", err)
		}
		cmp, err = s.startComparison(&compare.Comparison{Kind: "scenario", Scenario: sc.Metadata.Name, A: names[0], B: names[1], FeatureGates: gates},
			func(ctx context.Context, opts whatif.Options) (*compare.Outcome, error) {
				opts.FeatureGates = gates
				return whatif.Scenario(ctx, s.whatifEnv(), s.scenarios, scData, [2]json.RawMessage{configs[0], configs[1]}, names, opts)
			})
		if err != nil {
			return err
		}
	default:
		if err := s.checkWhatIf(); err != nil {
			return err
		}
		for i := range parsed {
			if parsed[i] == nil {
				parsed[i] = s.opts.Scheduler.Config()
			}
		}
		cmp, err = s.startComparison(&compare.Comparison{Kind: "configs", A: names[0], B: names[1], FeatureGates: gates},
			func(ctx context.Context, opts whatif.Options) (*compare.Outcome, error) {
				opts.FeatureGates = gates
				return whatif.Configs(ctx, s.whatifEnv(), parsed[0], parsed[1], names, opts)
			})
		if err != nil {
			return err
		}
	}
	if c.QueryParam("wait") == "true" {
		select {
		case <-cmp.Done():
		case <-c.Request().Context().Done():
			return c.Request().Context().Err()
		}
		return c.JSON(http.StatusOK, s.compared.Last())
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/v1/compare")
	return c.JSON(http.StatusAccepted, cmp)
}

// rescheduleAll is POST /whatif/reschedule: the whole workload scheduled
// again under the running configuration, before against after. It answers
// the report once the run is over, and keeps it as the last comparison.
func (s *Server) rescheduleAll(c echo.Context) error {
	cmp, err := s.reschedule()
	if err != nil {
		return err
	}
	select {
	case <-cmp.Done():
	case <-c.Request().Context().Done():
		return c.Request().Context().Err()
	}
	last := s.compared.Last()
	if last.State != "done" {
		return apiError(http.StatusInternalServerError, "what-if: %s", last.Error)
	}
	return c.JSON(http.StatusOK, last.Report)
}

// reschedule starts the whole workload scheduled again under the running
// configuration.
func (s *Server) reschedule() (*compare.Comparison, error) {
	if err := s.checkWhatIf(); err != nil {
		return nil, err
	}
	return s.startComparison(&compare.Comparison{Kind: "reschedule", A: "before", B: "after"}, func(ctx context.Context, opts whatif.Options) (*compare.Outcome, error) {
		return whatif.RescheduleAll(ctx, s.whatifEnv(), opts)
	})
}

// checkWhatIf refuses a run on this cluster's own workload where it may
// not or cannot run.
func (s *Server) checkWhatIf() error {
	if s.cluster.Writes() != cluster.WritesAll {
		return apiError(http.StatusForbidden, "what-if runs only on minisched's own cluster (a copy: --import-from, --load or an import), never on a real one")
	}
	if s.opts.Scheduler == nil || s.opts.Recorder == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs here")
	}
	if st := s.opts.Scheduler.State(); st.State != "running" {
		return apiError(http.StatusConflict, "the scheduler is %s: resume it first", st.State)
	}
	return nil
}

func (s *Server) whatifEnv() whatif.Env {
	return whatif.Env{Client: s.opts.Client, Scheduler: s.opts.Scheduler, Recorder: s.opts.Recorder, Summaries: s.cluster.Summaries}
}

// startComparison runs one comparison in the background, one at a time:
// two would unbind each other's pods. It goes on if the client leaves, and
// ends with the server.
func (s *Server) startComparison(cmp *compare.Comparison, run func(context.Context, whatif.Options) (*compare.Outcome, error)) (*compare.Comparison, error) {
	kind := exclusive.Comparison
	if cmp.Kind == "reschedule" {
		kind = exclusive.WhatIf
	}
	ctx, end, err := s.owner.Begin(s.ctx, kind, cmp.A+" against "+cmp.B)
	if err != nil {
		return nil, err
	}
	return s.compared.Start(ctx, cmp, func(ctx context.Context, progress func(string)) (*compare.Outcome, error) {
		return run(ctx, whatif.Options{Progress: progress})
	}, end), nil
}

func (s *Server) getCompare(c echo.Context) error {
	last := s.compared.Last()
	if last == nil {
		return apiError(http.StatusNotFound, "no comparison has run yet: POST /api/v1/compare starts one")
	}
	return c.JSON(http.StatusOK, last)
}

// PodComparison is one pod under both configurations.
type PodComparison struct {
	Pod string       `json:"pod"`
	A   *compare.Pod `json:"a"`
	B   *compare.Pod `json:"b"`
}

func (s *Server) getComparePod(c echo.Context) error {
	last := s.compared.Last()
	switch {
	case last == nil:
		return apiError(http.StatusNotFound, "no comparison has run yet: POST /api/v1/compare starts one")
	case last.State == "running":
		return apiError(http.StatusConflict, "the comparison is under way: ask when it is over")
	case last.State != "done":
		return apiError(http.StatusNotFound, "the last comparison failed: %s", last.Error)
	}
	key := c.Param("namespace") + "/" + c.Param("name")
	out := PodComparison{Pod: key}
	for i, side := range last.Sides() {
		if p, ok := side.Pods[key]; ok {
			if i == 0 {
				out.A = &p
			} else {
				out.B = &p
			}
		}
	}
	if out.A == nil && out.B == nil {
		return apiError(http.StatusNotFound, "pod %s is in neither run of the last comparison", key)
	}
	return c.JSON(http.StatusOK, out)
}
