package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"

	"minisched/cluster"
	"minisched/event"
	"minisched/minisched"
	"minisched/minisched/queue"
	"minisched/minisched/schedconfig"
)

// Limits keep a scenario from running away.
type Limits struct {
	// MaxCount bounds one step's count. Default 5,000.
	MaxCount int
	// MaxObjects bounds the objects a scenario creates. Default 10,000.
	MaxObjects int
	// MaxSteps bounds the steps. Default 1,000.
	MaxSteps int
	// MaxWait bounds a wait's duration or timeout. Default 30m.
	MaxWait time.Duration
}

func (l *Limits) setDefaults() {
	if l.MaxCount <= 0 {
		l.MaxCount = 5000
	}
	if l.MaxObjects <= 0 {
		l.MaxObjects = 10000
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = 1000
	}
	if l.MaxWait <= 0 {
		l.MaxWait = 30 * time.Minute
	}
}

var waitConditions = []string{"scheduled", "unschedulable", "skipped", "deleted", "running", "succeeded", "settled", "queueEmpty"}

// selectorConditions are the waits that may count the pods of a selector.
var selectorConditions = []string{"scheduled", "unschedulable", "running", "succeeded", "deleted"}

var queueNames = []string{string(event.ActiveQ), string(event.BackoffQ), string(event.ErrorBackoffQ), string(event.Unschedulable)}

// queueEvents are the causes a queue move names that are not cluster event
// labels (which start with a resource: NodeAdd, AssignedPodDelete...).
var queueEvents = []string{queue.EventPodAdd, queue.EventPodUpdate, queue.EventPodDelete, queue.EventBackoffComplete,
	queue.EventPopFromBackoffQ, queue.EventScheduleAttemptFailure, queue.EventUnschedulableTimeout, queue.EventForceActivate}

// maxNote bounds a step's note: the banner has room for a few lines.
const maxNote = 1000

// minQueueTuning bounds the queue timings a scenario may set from below.
const minQueueTuning = 100 * time.Millisecond

var eventResources = []string{"Node", "AssignedPod", "UnscheduledPod", "TargetPod", "Pod", "PersistentVolume",
	"storage.k8s.io/", "resource.k8s.io/"}

// Validate checks everything that can be checked before a scenario runs:
// one action per step, the manifests (decoded and dry-run created against
// the apiserver), the counts against the limits, the configurations, and that
// every pod, node, queue, plugin and event an expectation names can exist.
func (r *Runner) Validate(ctx context.Context, sc *Scenario) error {
	return r.validate(ctx, sc, false)
}

// validate checks sc; afterReset checks it as it will run on a cluster
// emptied first, where only the system's PriorityClasses exist.
func (r *Runner) validate(ctx context.Context, sc *Scenario, afterReset bool) error {
	l := r.env.Limits
	l.setDefaults()
	if sc.Metadata.Name == "" {
		return errorf("metadata.name", "a scenario needs a name")
	}
	if len(sc.Spec.Steps) == 0 {
		return errorf("spec.steps", "a scenario needs at least one step")
	}
	if len(sc.Spec.Steps) > l.MaxSteps {
		return errorf("spec.steps", "%d steps is more than the limit of %d", len(sc.Spec.Steps), l.MaxSteps)
	}
	if q := sc.Spec.Queue; q != nil {
		// Shorter than this, the flush would spin the scheduler's CPU.
		for name, d := range map[string]Duration{"maxInUnschedulable": q.MaxInUnschedulable, "unschedulableFlushInterval": q.UnschedulableFlushInterval} {
			if d != 0 && time.Duration(d) < minQueueTuning {
				return errorf("spec.queue."+name, "%v is shorter than the least of %v", time.Duration(d), minQueueTuning)
			}
		}
	}
	if len(sc.Spec.SchedulerConfig) > 0 {
		if err := r.checkConfig(sc.Spec.SchedulerConfig); err != nil {
			return errorf("spec.schedulerConfig", "%v", err)
		}
	}
	if _, _, err := minisched.ParseSchedulerGates(sc.Spec.FeatureGates); err != nil {
		return errorf("spec.featureGates", "%v", err)
	}
	if err := checkRunGates(sc.Spec.RunFeatureGates); err != nil {
		return errorf("spec.runFeatureGates", "%v", err)
	}
	if x := sc.Spec.ExampleExtender; x != nil && (x.Weight < 0 || x.Weight > 100) {
		return errorf("spec.exampleExtender.weight", "want a weight from 1 to 100 (0: 1), got %d", x.Weight)
	}
	known := r.existing(ctx, afterReset)
	// Extender is the name upstream blames when an extender turned nodes away.
	plugins := append(r.env.Scheduler.AvailablePlugins(), "Extender")
	objects := 0
	for i := range sc.Spec.Steps {
		st := &sc.Spec.Steps[i]
		path := stepPath(i)
		if len(st.Note) > maxNote {
			return errorf(path+".note", "a note of %d bytes is longer than the limit of %d: say what to look at in a sentence or two", len(st.Note), maxNote)
		}
		action := st.action()
		switch action {
		case "create":
			n, err := r.validateCreate(ctx, path+".create", st.Create, l, known)
			if err != nil {
				return err
			}
			objects += n
			if objects > l.MaxObjects {
				return errorf(path+".create.count", "the scenario would create %d objects, more than the limit of %d", objects, l.MaxObjects)
			}
		case "update":
			u := st.Update
			if err := checkKind(path+".update.kind", u.Kind); err != nil {
				return err
			}
			if !known[u.Kind][nameKey(u.Kind, u.Name)] {
				return errorf(path+".update.name", "no earlier step creates %s %q", u.Kind, u.Name)
			}
			var patch map[string]any
			if err := json.Unmarshal(u.Patch, &patch); err != nil || len(patch) == 0 {
				return errorf(path+".update.patch", "want a JSON merge patch (an object), got %s", string(u.Patch))
			}
			if _, ok := patch["status"]; ok && u.Kind != "Node" && u.Kind != "Pod" {
				return errorf(path+".update.patch", "the status of a %s is what its controllers write: patch its spec", u.Kind)
			}
		case "delete":
			d := st.Delete
			if err := checkKind(path+".delete.kind", d.Kind); err != nil {
				return err
			}
			if err := checkCount(path+".delete.count", d.Count, l); err != nil {
				return err
			}
			for j := 1; j <= max(d.Count, 1); j++ {
				name := nameKey(d.Kind, d.Name)
				if d.Count > 0 {
					name = nameKey(d.Kind, expand(d.Name, j))
				}
				if !known[d.Kind][name] {
					return errorf(path+".delete.name", "no earlier step creates %s %q", d.Kind, name)
				}
				delete(known[d.Kind], name)
			}
		case "schedulerConfig":
			if err := r.checkConfig(st.SchedulerConfig); err != nil {
				return errorf(path+".schedulerConfig", "%v", err)
			}
		case "scheduler":
			if !slices.Contains([]string{"pause", "resume", "step"}, st.Scheduler) {
				return errorf(path+".scheduler", "want pause, resume or step, got %q", st.Scheduler)
			}
		case "wait":
			if err := validateWait(path+".wait", st.Wait, l, known); err != nil {
				return err
			}
		case "expect":
			if err := validateExpect(path+".expect", st.Expect, known, plugins); err != nil {
				return err
			}
		case "":
			return errorf(path, "a step needs an action: create, update, delete, schedulerConfig, scheduler, wait or expect")
		default:
			return errorf(path, "a step has exactly one action, this one has %s", strings.ReplaceAll(action, "+", " and "))
		}
	}
	return nil
}

// existing names the objects a scenario may update, delete and expect
// things of without creating them: all of them on minisched's own cluster,
// on a shared one only those minisched labelled.
func (r *Runner) existing(ctx context.Context, afterReset bool) map[string]map[string]bool {
	known := map[string]map[string]bool{}
	for _, k := range kinds {
		known[k] = map[string]bool{}
	}
	if afterReset {
		if classes, err := r.env.Client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{}); err == nil {
			for _, pc := range classes.Items {
				if cluster.SystemPriorityClass(pc.Name) {
					known["PriorityClass"][pc.Name] = true
				}
			}
		}
		return known
	}
	opts := metav1.ListOptions{}
	if r.env.OwnedOnly {
		opts.LabelSelector = cluster.OwnerLabel
	}
	if nodes, err := r.env.Client.CoreV1().Nodes().List(ctx, opts); err == nil {
		for _, n := range nodes.Items {
			known["Node"][n.Name] = true
		}
	}
	if pods, err := r.env.Client.CoreV1().Pods("").List(ctx, opts); err == nil {
		for _, p := range pods.Items {
			known["Pod"][p.Namespace+"/"+p.Name] = true
		}
	}
	if classes, err := r.env.Client.SchedulingV1().PriorityClasses().List(ctx, opts); err == nil {
		for _, pc := range classes.Items {
			known["PriorityClass"][pc.Name] = true
		}
	}
	return known
}

func (r *Runner) checkConfig(raw json.RawMessage) error {
	cfg, err := schedconfig.Load(raw, r.env.SchedulerName)
	if err != nil {
		return err
	}
	return r.env.Scheduler.CheckConfig(cfg)
}

func checkKind(path, kind string) error {
	if !slices.Contains(kinds, kind) {
		return errorf(path, "want one of %s, got %q", strings.Join(kinds, ", "), kind)
	}
	return nil
}

func checkCount(path string, count int, l Limits) error {
	if count < 0 || count > l.MaxCount {
		return errorf(path, "count %d is outside 0 to %d", count, l.MaxCount)
	}
	return nil
}

func nameKey(kind, name string) string {
	if namespacedKind(kind) {
		return podKey(name)
	}
	return name
}

func validateWait(path string, w *Wait, l Limits, known map[string]map[string]bool) error {
	if time.Duration(w.Duration) > l.MaxWait || time.Duration(w.Timeout) > l.MaxWait {
		return errorf(path, "waits are limited to %v", l.MaxWait)
	}
	if w.Duration < 0 || w.Timeout < 0 {
		return errorf(path, "durations cannot be negative")
	}
	switch {
	case w.For == "" && w.Duration == 0:
		return errorf(path, "wait for a duration or for a condition (%s)", strings.Join(waitConditions, ", "))
	case w.For != "" && w.Duration != 0:
		return errorf(path, "wait for a duration or for a condition, not both")
	case w.For == "":
		return nil
	case !slices.Contains(waitConditions, w.For):
		return errorf(path+".for", "want one of %s, got %q", strings.Join(waitConditions, ", "), w.For)
	}
	if w.Selector != "" {
		if _, err := labels.Parse(w.Selector); err != nil {
			return errorf(path+".selector", "%v", err)
		}
		switch {
		case !slices.Contains(selectorConditions, w.For):
			return errorf(path+".selector", "waiting for %s counts no pods: a selector goes with %s", w.For, strings.Join(selectorConditions, ", "))
		case w.Pod != "":
			return errorf(path+".pod", "wait for one pod or for the pods of a selector, not both")
		case w.Count < 0 || w.Count > l.MaxObjects:
			return errorf(path+".count", "count %d is outside 0 to %d", w.Count, l.MaxObjects)
		case w.For == "deleted" && w.Count != 0:
			return errorf(path+".count", "waiting for deleted waits for none to be left: it takes no count")
		case w.Node != "" && (w.For == "unschedulable" || w.For == "deleted"):
			return errorf(path+".node", "waiting for %s pods counts no node's pods", w.For)
		case w.Node != "" && !known["Node"][w.Node]:
			return errorf(path+".node", "no earlier step creates node %q", w.Node)
		}
		return nil
	}
	if w.Count != 0 || w.Node != "" {
		return errorf(path+".count", "a count and a node go with a selector")
	}
	needsPod := w.For != "settled" && w.For != "queueEmpty"
	if needsPod && w.Pod == "" {
		return errorf(path+".pod", "waiting for %s needs the pod, or a selector", w.For)
	}
	if w.Pod != "" && !known["Pod"][podKey(w.Pod)] {
		return errorf(path+".pod", "no earlier step creates pod %q", podKey(w.Pod))
	}
	return nil
}

func validateExpect(path string, e *Expect, known map[string]map[string]bool, plugins []string) error {
	podChecks := e.Node != "" || e.Queue != "" || e.RejectedBy != "" || e.MovedBy != "" || e.SkippedBy != "" || e.GatedBy != "" || e.MinAttempts != 0 || e.Explains != ""
	counts := e.ScheduledPods != nil || e.UnscheduledPods != nil || e.NodePods != nil
	if !podChecks && !counts {
		return errorf(path, "an expectation needs something to check: node, queue, rejectedBy, movedBy, skippedBy, gatedBy, minAttempts, explains, scheduledPods, unscheduledPods or nodePods")
	}
	if e.Selector != "" {
		if !counts {
			return errorf(path+".selector", "a selector keeps the counts (scheduledPods, unscheduledPods, nodePods) to its pods: count something")
		}
		if _, err := labels.Parse(e.Selector); err != nil {
			return errorf(path+".selector", "%v", err)
		}
	}
	mostPods := maxPods(known)
	if np := e.NodePods; np != nil {
		if !known["Node"][np.Node] {
			return errorf(path+".nodePods.node", "no earlier step creates node %q, so this can never hold", np.Node)
		}
		if np.Count < 0 || np.Count > mostPods {
			return errorf(path+".nodePods.count", "%d pods can never be counted: the scenario has at most %d", np.Count, mostPods)
		}
	}
	if podChecks && e.Pod == "" {
		return errorf(path+".pod", "the expectation is about a pod: name it")
	}
	if e.Pod != "" && !known["Pod"][podKey(e.Pod)] {
		return errorf(path+".pod", "no earlier step creates pod %q, so this can never hold", podKey(e.Pod))
	}
	if e.Node != "" && !known["Node"][e.Node] {
		return errorf(path+".node", "no earlier step creates node %q, so this can never hold", e.Node)
	}
	if e.Queue != "" && !slices.Contains(queueNames, e.Queue) {
		return errorf(path+".queue", "want one of %s, got %q", strings.Join(queueNames, ", "), e.Queue)
	}
	if e.RejectedBy != "" && !slices.Contains(plugins, e.RejectedBy) {
		return errorf(path+".rejectedBy", "no plugin is called %q", e.RejectedBy)
	}
	if e.SkippedBy != "" && !slices.Contains(plugins, e.SkippedBy) {
		return errorf(path+".skippedBy", "no plugin is called %q", e.SkippedBy)
	}
	if e.GatedBy != "" && !slices.Contains(plugins, e.GatedBy) {
		return errorf(path+".gatedBy", "no plugin is called %q", e.GatedBy)
	}
	if e.MovedBy != "" && !slices.Contains(queueEvents, e.MovedBy) && !hasAnyPrefix(e.MovedBy, eventResources) {
		return errorf(path+".movedBy", "%q is not a queue event: want a cluster event such as NodeAdd or one of %s", e.MovedBy, strings.Join(queueEvents, ", "))
	}
	for name, n := range map[string]*int{"scheduledPods": e.ScheduledPods, "unscheduledPods": e.UnscheduledPods} {
		if n != nil && (*n < 0 || *n > mostPods) {
			return errorf(path+"."+name, "%d pods can never be counted: the scenario has at most %d", *n, mostPods)
		}
	}
	if e.MinAttempts < 0 {
		return errorf(path+".minAttempts", "cannot be negative")
	}
	return nil
}

// maxPods is the most pods there can be: those the steps name, or no
// bound once a workload makes pods of its own.
func maxPods(known map[string]map[string]bool) int {
	for kind, r := range resources {
		if r.makesPods && len(known[kind]) > 0 {
			return math.MaxInt
		}
	}
	return len(known["Pod"])
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// checkRunGates checks that the run has the gates the scenario needs for
// the whole run: they cannot change while minisched runs.
func checkRunGates(value string) error {
	gates, err := minisched.ParseGates(value)
	if err != nil {
		return err
	}
	if err := utilfeature.DefaultMutableFeatureGate.DeepCopy().SetFromMap(gates); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		if utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name)) != gates[name] {
			return fmt.Errorf("the scenario needs %s=%t for the whole run: start minisched with --feature-gates=%s (minisched scenario run does)",
				name, gates[name], minisched.FormatGates(gates))
		}
	}
	return nil
}
