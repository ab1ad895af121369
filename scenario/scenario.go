// Package scenario runs scripted sessions against minisched: create, update
// and delete nodes and pods, change the scheduler, wait for conditions, and
// check expectations; then report what happened to every pod. Scenarios make
// a workshop repeatable and let a user test a scheduler configuration in CI.
package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// APIVersion and Kind identify a scenario document.
const (
	APIVersion = "minisched/v1"
	Kind       = "Scenario"
)

// Scenario is a named sequence of steps.
type Scenario struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata names and explains a scenario.
type Metadata struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Spec holds the steps and the scheduler settings they run under.
type Spec struct {
	// Seed, when not zero, makes the run repeatable: Filter checks nodes
	// one at a time, in order (see minisched.Options.Seed).
	Seed int64 `json:"seed,omitempty"`
	// Queue tunes the periodic flush of the unschedulable set, so that a
	// lesson need not wait five minutes for it.
	Queue *QueueTuning `json:"queue,omitempty"`
	// SchedulerConfig is a KubeSchedulerConfiguration to run the steps with.
	SchedulerConfig json.RawMessage `json:"schedulerConfig,omitempty"`
	// FeatureGates set the gates the scheduler alone reads for the run, in
	// kube-scheduler's flag form: OpportunisticBatching=false, say (see
	// minisched.SchedulerGates). The run's other gates are the process's.
	FeatureGates string `json:"featureGates,omitempty"`
	// RunFeatureGates are gates the scenario needs for the whole run (the
	// embedded apiserver's and controllers' too, such as
	// GenericWorkload=true for PodGroups): it runs only where minisched
	// was started with them (--feature-gates); `minisched scenario run`
	// starts such a run for it.
	RunFeatureGates string `json:"runFeatureGates,omitempty"`
	// ExampleExtender, when set, runs the example scheduler extender
	// (examples/extender) on loopback while the scenario runs, and adds it
	// to the configuration's extenders: a lesson about extenders then needs
	// nothing else running.
	ExampleExtender *ExampleExtender `json:"exampleExtender,omitempty"`
	Steps           []Step           `json:"steps"`
}

// ExampleExtender says how the example extender is called: filter,
// prioritize with Weight (1 when not set), preempt, and bind when Bind.
type ExampleExtender struct {
	Weight int64 `json:"weight,omitempty"`
	Bind   bool  `json:"bind,omitempty"`
}

// QueueTuning sets the unschedulable set's flush.
type QueueTuning struct {
	MaxInUnschedulable         Duration `json:"maxInUnschedulable,omitempty"`
	UnschedulableFlushInterval Duration `json:"unschedulableFlushInterval,omitempty"`
}

// Step is one action. Exactly one of its action fields is set.
type Step struct {
	Name string `json:"name,omitempty"`
	// Note says what to look at while the step runs, in a sentence or two:
	// the dashboard's lesson banner shows it.
	Note string `json:"note,omitempty"`

	Create          *Create         `json:"create,omitempty"`
	Update          *Update         `json:"update,omitempty"`
	Delete          *Delete         `json:"delete,omitempty"`
	SchedulerConfig json.RawMessage `json:"schedulerConfig,omitempty"`
	// Scheduler is pause, resume or step.
	Scheduler string  `json:"scheduler,omitempty"`
	Wait      *Wait   `json:"wait,omitempty"`
	Expect    *Expect `json:"expect,omitempty"`
}

// Create makes Count objects from Manifest (a Node, Pod or PriorityClass).
// With a count, "{{i}}" in the manifest's strings becomes 1, 2, ... count.
type Create struct {
	Count    int             `json:"count,omitempty"`
	Manifest json.RawMessage `json:"manifest"`
}

// Update applies a JSON merge patch to a node or pod. A node's status (its
// allocatable resources) may be patched too.
type Update struct {
	Kind  string          `json:"kind"`
	Name  string          `json:"name"`
	Patch json.RawMessage `json:"patch"`
}

// Delete removes nodes or pods; with a count, "{{i}}" in Name counts.
type Delete struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Count int    `json:"count,omitempty"`
}

// Wait waits for a duration, or for a condition up to a timeout.
type Wait struct {
	Duration Duration `json:"duration,omitempty"`
	// For is scheduled, unschedulable, deleted, running or succeeded (of
	// Pod, or of the pods Selector matches), skipped (a cluster event was
	// checked against Pod and its QueueingHints answered QueueSkip), settled
	// (nothing left to try:
	// activeQ, both backoffs and in flight are empty, and no binding cycle
	// is under way) or queueEmpty (the unschedulable set too).
	For string `json:"for,omitempty"`
	Pod string `json:"pod,omitempty"`
	// Selector is a label selector (app=web) for the pods a workload makes,
	// whose names no step knows: the wait holds once Count of them
	// (default 1) are scheduled, unschedulable, running or succeeded, or,
	// for deleted, once none is left. A pod being deleted counts for none
	// of these. Node keeps the count to the pods bound to that node.
	Selector string   `json:"selector,omitempty"`
	Count    int      `json:"count,omitempty"`
	Node     string   `json:"node,omitempty"`
	Timeout  Duration `json:"timeout,omitempty"`
}

// Expect checks what happened. Set the fields to check; all must hold.
type Expect struct {
	Pod string `json:"pod,omitempty"`
	// Node: the pod is bound to this node.
	Node string `json:"node,omitempty"`
	// Queue: the pod waits in active, backoff, errorBackoff or unschedulable.
	Queue string `json:"queue,omitempty"`
	// RejectedBy: the pod's last attempt was unschedulable because of this
	// plugin.
	RejectedBy string `json:"rejectedBy,omitempty"`
	// MovedBy: the pod was moved in the queue by this event at least once
	// (NodeAdd, BackoffComplete, UnschedulableTimeout, PopFromBackoffQ...).
	MovedBy string `json:"movedBy,omitempty"`
	// SkippedBy: this plugin's QueueingHint answered QueueSkip to a cluster
	// event checked against the pod at least once, so the pod stayed.
	SkippedBy string `json:"skippedBy,omitempty"`
	// GatedBy: this PreEnqueue plugin held the pod back at least once.
	GatedBy string `json:"gatedBy,omitempty"`
	// MinAttempts: the pod was tried at least this many times.
	MinAttempts int `json:"minAttempts,omitempty"`
	// Explains: the pod's explanation (why it is pending, GET
	// .../explain) says this in its sentence.
	Explains string `json:"explains,omitempty"`
	// ScheduledPods and UnscheduledPods count every pod in the cluster, or
	// those Selector matches; a pod being deleted counts for neither.
	ScheduledPods   *int `json:"scheduledPods,omitempty"`
	UnscheduledPods *int `json:"unscheduledPods,omitempty"`
	// NodePods counts the pods bound to one node (those Selector matches),
	// but those being deleted.
	NodePods *NodePods `json:"nodePods,omitempty"`
	// Selector is a label selector (app=web) that the counts keep to.
	Selector string `json:"selector,omitempty"`
}

// NodePods is a count of the pods bound to a node.
type NodePods struct {
	Node  string `json:"node"`
	Count int    `json:"count"`
}

// Duration is a time.Duration written as "2s" or "1m30s".
type Duration time.Duration

// UnmarshalJSON reads "2s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"2s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes "2s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Error is a scenario that is refused before it runs; Path says where.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func errorf(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Parse decodes a scenario from YAML or JSON and refuses unknown fields,
// naming the line (YAML syntax) or the path (everything else) of the error.
func Parse(data []byte) (*Scenario, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errorf("", "the scenario is empty")
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, errorf("", "not YAML or JSON: %v", err)
	}
	// Decode the frame first and each step on its own, so that an error
	// names the step it is in.
	var frame struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Metadata   Metadata `json:"metadata"`
		Spec       struct {
			Seed            int64             `json:"seed,omitempty"`
			Queue           *QueueTuning      `json:"queue,omitempty"`
			SchedulerConfig json.RawMessage   `json:"schedulerConfig,omitempty"`
			FeatureGates    string            `json:"featureGates,omitempty"`
			RunFeatureGates string            `json:"runFeatureGates,omitempty"`
			ExampleExtender *ExampleExtender  `json:"exampleExtender,omitempty"`
			Steps           []json.RawMessage `json:"steps"`
		} `json:"spec"`
	}
	if err := strictDecode(js, &frame); err != nil {
		return nil, errorf("", "%v", err)
	}
	if frame.APIVersion != APIVersion || frame.Kind != Kind {
		return nil, errorf("", "want apiVersion %s and kind %s, got apiVersion %q and kind %q", APIVersion, Kind, frame.APIVersion, frame.Kind)
	}
	sc := &Scenario{APIVersion: frame.APIVersion, Kind: frame.Kind, Metadata: frame.Metadata,
		Spec: Spec{Seed: frame.Spec.Seed, Queue: frame.Spec.Queue, SchedulerConfig: frame.Spec.SchedulerConfig,
			FeatureGates: frame.Spec.FeatureGates, RunFeatureGates: frame.Spec.RunFeatureGates, ExampleExtender: frame.Spec.ExampleExtender}}
	for i, raw := range frame.Spec.Steps {
		var st Step
		if err := strictDecode(raw, &st); err != nil {
			return nil, errorf(stepPath(i), "%v", err)
		}
		sc.Spec.Steps = append(sc.Spec.Steps, st)
	}
	return sc, nil
}

func strictDecode(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func stepPath(i int) string { return fmt.Sprintf("spec.steps[%d]", i) }

// action names the step's action.
func (s *Step) action() string {
	var set []string
	if s.Create != nil {
		set = append(set, "create")
	}
	if s.Update != nil {
		set = append(set, "update")
	}
	if s.Delete != nil {
		set = append(set, "delete")
	}
	if len(s.SchedulerConfig) > 0 {
		set = append(set, "schedulerConfig")
	}
	if s.Scheduler != "" {
		set = append(set, "scheduler")
	}
	if s.Wait != nil {
		set = append(set, "wait")
	}
	if s.Expect != nil {
		set = append(set, "expect")
	}
	if len(set) != 1 {
		return strings.Join(set, "+")
	}
	return set[0]
}

// podKey turns "name" or "namespace/name" into namespace/name.
func podKey(s string) string {
	if strings.Contains(s, "/") {
		return s
	}
	return "default/" + s
}

// expand replaces "{{i}}" with i.
func expand(s string, i int) string { return strings.ReplaceAll(s, "{{i}}", fmt.Sprint(i)) }
