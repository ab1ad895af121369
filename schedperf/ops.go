package schedperf

// The ops of a workload template, read as upstream's runner reads them
// (field names match case-insensitively, as its untagged structs do), with
// the workload's parameters put in. A field or an op this package does not
// interpret makes the workload skipped, not run differently.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

type createNodesOp struct {
	Opcode                   string                   `json:"opcode"`
	Count                    int                      `json:"count"`
	CountParam               string                   `json:"countParam"`
	NodeTemplatePath         *string                  `json:"nodeTemplatePath"`
	NodeAllocatableStrategy  *nodeAllocatableStrategy `json:"nodeAllocatableStrategy"`
	LabelNodePrepareStrategy *labelNodeStrategy       `json:"labelNodePrepareStrategy"`
	UniqueNodeLabelStrategy  *uniqueNodeLabelStrategy `json:"uniqueNodeLabelStrategy"`
	TemplateParams           map[string]any           `json:"templateParams"`
}

// nodeAllocatableStrategy sets allocatable resources on every node and,
// for CSI drivers, on its CSINode (which names the in-tree plugins
// migrated to CSI).
type nodeAllocatableStrategy struct {
	NodeAllocatable    map[v1.ResourceName]string                `json:"nodeAllocatable"`
	CsiNodeAllocatable map[string]*storagev1.VolumeNodeResources `json:"csiNodeAllocatable"`
	MigratedPlugins    []string                                  `json:"migratedPlugins"`
}

// labelNodeStrategy labels the nodes with the values in turn.
type labelNodeStrategy struct {
	LabelKey    string   `json:"labelKey"`
	LabelValues []string `json:"labelValues"`
}

// uniqueNodeLabelStrategy gives each node its own value of a label.
type uniqueNodeLabelStrategy struct {
	LabelKey string `json:"labelKey"`
}

type createNamespacesOp struct {
	Opcode                string  `json:"opcode"`
	Prefix                string  `json:"prefix"`
	Count                 int     `json:"count"`
	CountParam            string  `json:"countParam"`
	NamespaceTemplatePath *string `json:"namespaceTemplatePath"`
}

type createPodsOp struct {
	Opcode                  string         `json:"opcode"`
	Count                   int            `json:"count"`
	CountParam              string         `json:"countParam"`
	CountMultiplierParam    string         `json:"countMultiplierParam"`
	CollectMetrics          bool           `json:"collectMetrics"`
	Namespace               *string        `json:"namespace"`
	PodTemplatePath         *string        `json:"podTemplatePath"`
	SkipWaitToCompletion    bool           `json:"skipWaitToCompletion"`
	TemplateParams          map[string]any `json:"templateParams"`
	SignatureBatchSize      int            `json:"signatureBatchSize"`
	SignatureBatchSizeParam string         `json:"signatureBatchSizeParam"`
	// SteadyState keeps Count pods pending for Duration: each pod of the
	// namespace is deleted once scheduled, and another made.
	SteadyState      bool            `json:"steadyState"`
	SteadyStateParam string          `json:"steadyStateParam"`
	Duration         metav1.Duration `json:"duration"`
	DurationParam    string          `json:"durationParam"`
	// Each pod gets a claim of its own, bound to a volume of its own,
	// from these templates.
	PersistentVolumeTemplatePath      *string `json:"persistentVolumeTemplatePath"`
	PersistentVolumeClaimTemplatePath *string `json:"persistentVolumeClaimTemplatePath"`
}

// validate reads the steady state's parameters and checks the op as
// upstream's runner does (createPodsOp.isValid).
func (o *createPodsOp) validate(params map[string]any) error {
	if o.DurationParam != "" {
		text, ok := params[strings.TrimPrefix(o.DurationParam, "$")].(string)
		if !ok {
			return fmt.Errorf("createPods: parameter %s is not a duration", o.DurationParam)
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			return fmt.Errorf("createPods: parameter %s: %w", o.DurationParam, err)
		}
		o.Duration.Duration = d
	}
	if o.SteadyStateParam != "" {
		on, ok := params[strings.TrimPrefix(o.SteadyStateParam, "$")].(bool)
		if !ok {
			return fmt.Errorf("createPods: parameter %s is not a boolean", o.SteadyStateParam)
		}
		o.SteadyState = on
	}
	switch {
	case o.CollectMetrics && o.SkipWaitToCompletion:
		return fmt.Errorf("createPods: collectMetrics and skipWaitToCompletion cannot be true at the same time")
	case o.SteadyState && o.SkipWaitToCompletion:
		return fmt.Errorf("createPods: skipWaitToCompletion and steadyState cannot be true at the same time")
	case o.SteadyState && o.Duration.Duration <= 0:
		return fmt.Errorf("createPods: in a steady state, the duration must be > 0")
	case o.SteadyState && o.PersistentVolumeClaimTemplatePath != nil:
		return &SkipError{Reason: "createPods with steadyState and volume templates is not interpreted"}
	}
	return nil
}

// createPodSetsOp is Count createPods ops, each in its namespace
// (namespacePrefix-i); Plan unrolls it, as upstream's runner does, so the
// ops after it have the indices upstream gives them.
type createPodSetsOp struct {
	Opcode          string          `json:"opcode"`
	Count           int             `json:"count"`
	CountParam      string          `json:"countParam"`
	NamespacePrefix string          `json:"namespacePrefix"`
	CreatePodsOp    json.RawMessage `json:"createPodsOp"`
}

type barrierOp struct {
	Opcode           string            `json:"opcode"`
	Namespaces       []string          `json:"namespaces"`
	LabelSelector    map[string]string `json:"labelSelector"`
	StageRequirement string            `json:"stageRequirement"`
}

type sleepOp struct {
	Opcode        string `json:"opcode"`
	Duration      string `json:"duration"`
	DurationParam string `json:"durationParam"`
}

type deletePodsOp struct {
	Opcode               string            `json:"opcode"`
	Namespace            string            `json:"namespace"`
	LabelSelector        map[string]string `json:"labelSelector"`
	SkipWaitToCompletion bool              `json:"skipWaitToCompletion"`
	DeletePodsPerSecond  int               `json:"deletePodsPerSecond"`
}

type startCollectingMetricsOp struct {
	Opcode        string            `json:"opcode"`
	Name          string            `json:"name"`
	Namespaces    []string          `json:"namespaces"`
	LabelSelector map[string]string `json:"labelSelector"`
}

type stopCollectingMetricsOp struct {
	Opcode string `json:"opcode"`
}

// decode reads one op of a template, strictly: an unknown field is one this
// package does not interpret.
func decode(raw json.RawMessage) (any, error) {
	var head struct {
		Opcode string `json:"opcode"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("reading an op: %w", err)
	}
	var op any
	switch head.Opcode {
	case "createNodes":
		op = &createNodesOp{}
	case "createNamespaces":
		op = &createNamespacesOp{}
	case "createPods":
		op = &createPodsOp{}
	case "createPodSets":
		op = &createPodSetsOp{}
	case "barrier":
		op = &barrierOp{}
	case "sleep":
		op = &sleepOp{}
	case "deletePods":
		op = &deletePodsOp{}
	case "startCollectingMetrics":
		op = &startCollectingMetricsOp{}
	case "stopCollectingMetrics":
		op = &stopCollectingMetricsOp{}
	case "createAny":
		op = &createAnyOp{}
	case "updateAny":
		op = &updateAnyOp{}
	case "churn":
		op = &churnOp{}
	case "allocResourceClaims":
		op = &allocResourceClaimsOp{}
	case "createPodGroups":
		op = &createPodGroupsOp{}
	default:
		return nil, &SkipError{Reason: fmt.Sprintf("op %s is not interpreted", head.Opcode)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(op); err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return nil, &SkipError{Reason: fmt.Sprintf("op %s: field %s is not interpreted", head.Opcode, field)}
		}
		return nil, fmt.Errorf("reading op %s: %w", head.Opcode, err)
	}
	return op, nil
}

// SkipError says why a workload is not run: it needs what this package
// does not interpret, or what minisched does not model.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Plan reads the test case's ops with the workload's parameters put in.
func Plan(tc *TestCase, w *Workload) ([]any, error) {
	var ops []any
	runtimeConfig := RuntimeConfig(tc.Gates(w))
	for i, raw := range tc.WorkloadTemplate {
		op, err := decode(raw)
		if err != nil {
			return nil, err
		}
		if sets, ok := op.(*createPodSetsOp); ok {
			pods, err := unrollPodSets(sets, w.Params)
			if err != nil {
				return nil, fmt.Errorf("op %d: %w", i, err)
			}
			ops = append(ops, pods...)
			continue
		}
		if err := resolve(op, w.Params); err != nil {
			return nil, fmt.Errorf("op %d: %w", i, err)
		}
		if err := checkServed(tc, op, runtimeConfig); err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// unrollPodSets makes a createPodSets op its createPods ops.
func unrollPodSets(o *createPodSetsOp, params map[string]any) ([]any, error) {
	if o.CountParam != "" {
		n, err := intParam(params, o.CountParam)
		if err != nil {
			return nil, err
		}
		o.Count = n
	}
	var ops []any
	for i := range o.Count {
		op, err := decode(o.CreatePodsOp)
		if err != nil {
			return nil, fmt.Errorf("createPodSets: %w", err)
		}
		pods, ok := op.(*createPodsOp)
		if !ok {
			return nil, fmt.Errorf("createPodSets: createPodsOp is a %s op", opcode(op))
		}
		ns := fmt.Sprintf("%s-%d", o.NamespacePrefix, i)
		pods.Namespace = &ns
		if err := resolve(pods, params); err != nil {
			return nil, fmt.Errorf("createPodSets: %w", err)
		}
		ops = append(ops, pods)
	}
	return ops, nil
}

// resolve puts the workload's parameters into an op's $param fields.
func resolve(op any, params map[string]any) error {
	count := func(n *int, name string) error {
		if name == "" {
			return nil
		}
		v, err := intParam(params, name)
		*n = v
		return err
	}
	// optionalCount sets a count that is unset (nil) unless given.
	optionalCount := func(n **int, name string) error {
		if name == "" {
			return nil
		}
		*n = new(int)
		return count(*n, name)
	}
	switch o := op.(type) {
	case *createNodesOp:
		if err := count(&o.Count, o.CountParam); err != nil {
			return err
		}
		return resolveTemplateParams(o.TemplateParams, params)
	case *createNamespacesOp:
		return count(&o.Count, o.CountParam)
	case *createPodGroupsOp:
		if err := count(&o.Count, o.CountParam); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		return resolveTemplateParams(o.TemplateParams, params)
	case *createAnyOp:
		if err := optionalCount(&o.Count, o.CountParam); err != nil {
			return err
		}
		if o.TemplatePath == "" {
			return fmt.Errorf("createAny: templatePath must be set")
		}
		return resolveTemplateParams(o.TemplateParams, params)
	case *createPodsOp:
		if err := count(&o.Count, o.CountParam); err != nil {
			return err
		}
		if o.CountMultiplierParam != "" {
			m, err := intParam(params, o.CountMultiplierParam)
			if err != nil {
				return err
			}
			o.Count *= m
		}
		if err := count(&o.SignatureBatchSize, o.SignatureBatchSizeParam); err != nil {
			return err
		}
		if o.SignatureBatchSize == 0 {
			o.SignatureBatchSize = 1
		}
		if err := o.validate(params); err != nil {
			return err
		}
		return resolveTemplateParams(o.TemplateParams, params)
	case *updateAnyOp:
		if err := optionalCount(&o.Count, o.CountParam); err != nil {
			return err
		}
		if o.TemplatePath == "" {
			return fmt.Errorf("updateAny: templatePath must be set")
		}
		if o.UpdatePerSecond < 0 {
			return fmt.Errorf("updateAny: updatePerSecond %d is negative", o.UpdatePerSecond)
		}
	case *churnOp:
		return o.validate()
	case *barrierOp:
		switch o.StageRequirement {
		case "":
			o.StageRequirement = "Scheduled"
		case "Scheduled", "Attempted":
		default:
			return fmt.Errorf("barrier: stageRequirement %q, want Scheduled or Attempted", o.StageRequirement)
		}
	case *sleepOp:
		d := o.Duration
		if o.DurationParam != "" {
			s, ok := params[strings.TrimPrefix(o.DurationParam, "$")].(string)
			if !ok {
				return fmt.Errorf("parameter %s: want a duration", o.DurationParam)
			}
			d = s
		}
		if _, err := time.ParseDuration(d); err != nil {
			return fmt.Errorf("sleep: %w", err)
		}
		o.Duration = d
	case *deletePodsOp:
		if o.DeletePodsPerSecond < 0 {
			return fmt.Errorf("deletePods: deletePodsPerSecond %d is negative", o.DeletePodsPerSecond)
		}
	}
	return nil
}

func intParam(params map[string]any, name string) (int, error) {
	v, ok := params[strings.TrimPrefix(name, "$")]
	if !ok {
		return 0, fmt.Errorf("no parameter %s", name)
	}
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) {
		return 0, fmt.Errorf("parameter %s: want a whole number, got %v", name, v)
	}
	return int(f), nil
}

// resolveTemplateParams replaces "$name" values by the parameters'; a
// "$name|default" takes the default, read as YAML, when the workload has no
// such parameter.
func resolveTemplateParams(tp map[string]any, params map[string]any) error {
	for k, v := range tp {
		s, ok := v.(string)
		if !ok || !strings.HasPrefix(s, "$") {
			continue
		}
		name, def, hasDefault := strings.Cut(s[1:], "|")
		if p, ok := params[name]; ok {
			tp[k] = p
			continue
		}
		if !hasDefault {
			return fmt.Errorf("template parameter %s: no parameter %s", k, s)
		}
		var value any
		if err := yaml.Unmarshal([]byte(def), &value); err != nil {
			return fmt.Errorf("template parameter %s: the default of %s: %w", k, s, err)
		}
		tp[k] = value
	}
	return nil
}
