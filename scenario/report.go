package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minisched/event"
	"minisched/history"
)

// State is where a scenario run stands.
type State string

const (
	StateRunning   State = "running"
	StatePassed    State = "passed"
	StateFailed    State = "failed"
	StateError     State = "error"
	StateCancelled State = "cancelled"
)

// Step outcomes.
const (
	OutcomeOK     = "ok"
	OutcomeFailed = "failed"
	OutcomeError  = "error"
)

// Report is what a run did and saw.
type Report struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Title    string    `json:"title,omitempty"`
	State    State     `json:"state"`
	Message  string    `json:"message,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Seconds  float64   `json:"seconds"`

	Steps        []StepReport        `json:"steps"`
	Expectations []ExpectationReport `json:"expectations"`
	Pods         []PodReport         `json:"pods"`
	// Incomplete is true when the history dropped events before the report
	// read them: pod figures may miss some attempts.
	Incomplete bool `json:"incomplete,omitempty"`
	// RecordingSince is where the run's recording starts: GET
	// /api/v1/recording?since= with it downloads the run as one file.
	RecordingSince uint64 `json:"recordingSince,omitempty"`

	failures, errors int
}

// StepReport is one step's outcome.
type StepReport struct {
	Index   int     `json:"index"`
	Name    string  `json:"name"`
	Action  string  `json:"action"`
	Outcome string  `json:"outcome"`
	Message string  `json:"message,omitempty"`
	Seconds float64 `json:"seconds"`
}

// ExpectationReport is one expectation, passed or failed with what was seen.
type ExpectationReport struct {
	Step        int    `json:"step"`
	Expectation string `json:"expectation"`
	Passed      bool   `json:"passed"`
	Saw         string `json:"saw"`
}

// PodReport is one pod's story.
type PodReport struct {
	Pod  string `json:"pod"`
	Node string `json:"node,omitempty"`
	// Reason says why the pod has no node.
	Reason string `json:"reason,omitempty"`
	// Deleted says the pod is gone from the cluster: preempted, or deleted
	// by a step or by a controller (a rollout, a scale down, an eviction).
	Deleted  bool `json:"deleted,omitempty"`
	Attempts int  `json:"attempts"`
	// QueueSeconds is the time spent in each queue.
	QueueSeconds map[string]float64 `json:"queueSeconds"`
	// Scores are the totals of the pod's last scored attempt, best first.
	Scores []NodeScore `json:"scores,omitempty"`
}

// NodeScore is a node's total score.
type NodeScore struct {
	Node  string `json:"node"`
	Total int64  `json:"total"`
}

func (r *Report) finish(state State, msg string) {
	r.State, r.Message, r.Finished = state, msg, time.Now()
	r.Seconds = r.Finished.Sub(r.Started).Seconds()
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "scenario %s: %s", r.Name, strings.ToUpper(string(r.State)))
	if r.Message != "" {
		fmt.Fprintf(w, " (%s)", r.Message)
	}
	fmt.Fprintf(w, " in %.1fs\n", r.Seconds)
	if r.Title != "" {
		fmt.Fprintf(w, "  %s\n", r.Title)
	}
	fmt.Fprintln(w, "\nsteps:")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "  %2d. %-6s %-55s %6.2fs", s.Index+1, s.Outcome, s.Name, s.Seconds)
		if s.Message != "" {
			fmt.Fprintf(w, "  %s", s.Message)
		}
		fmt.Fprintln(w)
	}
	if len(r.Expectations) > 0 {
		fmt.Fprintln(w, "\nexpectations:")
		for _, e := range r.Expectations {
			mark := "PASS"
			if !e.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "  %s step %d: %s", mark, e.Step+1, e.Expectation)
			if !e.Passed {
				fmt.Fprintf(w, " (saw: %s)", e.Saw)
			}
			fmt.Fprintln(w)
		}
	}
	if len(r.Pods) > 0 {
		fmt.Fprintln(w, "\npods:")
		for _, p := range r.Pods {
			where := "on " + p.Node
			switch {
			case p.Deleted:
				where = "deleted: " + p.Reason
			case p.Node == "":
				where = "unscheduled: " + p.Reason
			}
			fmt.Fprintf(w, "  %-30s %s; %d attempt(s); queue time %s", p.Pod, where, p.Attempts, queueTimes(p.QueueSeconds))
			if len(p.Scores) > 0 {
				var top []string
				for _, s := range p.Scores[:min(3, len(p.Scores))] {
					top = append(top, fmt.Sprintf("%s=%d", s.Node, s.Total))
				}
				fmt.Fprintf(w, "; scores %s", strings.Join(top, " "))
			}
			fmt.Fprintln(w)
		}
	}
	if r.Incomplete {
		fmt.Fprintln(w, "\nnote: the history dropped events during the run; attempt counts and queue times may be low")
	}
}

func queueTimes(m map[string]float64) string {
	var parts []string
	for _, q := range []event.QueueName{event.ActiveQ, event.BackoffQ, event.ErrorBackoffQ, event.Unschedulable, event.InFlight} {
		if m[string(q)] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1fs", q, m[string(q)]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// tracker follows the history during a run and keeps each pod's story.
type tracker struct {
	rec       *history.Recorder
	mu        sync.Mutex
	cursor    uint64
	pods      map[string]*podStory
	order     []string
	truncated bool
}

type podStory struct {
	attempts int
	queue    string
	since    time.Time
	seconds  map[string]float64
	movedBy  []string
	gatedBy  []string
	// skips are the QueueSkip answers the pod's hints gave: "NodeAdd
	// (node-2): NodeResourcesFit".
	skips     []queueSkip
	lastEnd   *event.CycleEnd
	lastScore *event.ScoreResults
	// boundTo is the node its binding cycle last bound it to.
	boundTo string
	// preempted says who evicted the pod, and from where.
	preempted *event.Preemption
}

func newTracker(rec *history.Recorder) *tracker {
	return &tracker{rec: rec, cursor: rec.LastSeq(), pods: map[string]*podStory{}}
}

// follow reads new events until ctx ends.
func (t *tracker) follow(ctx context.Context) {
	for {
		wake := t.catchUp()
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-time.After(time.Second):
		}
	}
}

// catchUp applies every event recorded so far.
func (t *tracker) catchUp() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		entries, wake, err := t.rec.Since(t.cursor, 1024)
		if errors.Is(err, history.ErrTruncated) {
			t.truncated = true
			t.cursor = t.rec.Stats().FirstSeq - 1
			continue
		}
		if len(entries) == 0 {
			return wake
		}
		for _, e := range entries {
			t.apply(&e.Event)
			t.cursor = e.Event.Seq
		}
	}
}

func (t *tracker) apply(e *event.Event) {
	if e.Pod == nil || e.Kind == event.KindPod {
		return
	}
	key := e.Pod.Key()
	p := t.pods[key]
	if p == nil {
		p = &podStory{seconds: map[string]float64{}}
		t.pods[key] = p
		t.order = append(t.order, key)
	}
	switch {
	case e.Preemption != nil:
		p.preempted = e.Preemption
	case e.CycleStart != nil:
		p.attempts++
	case e.CycleEnd != nil:
		p.lastEnd = e.CycleEnd
	case e.Score != nil:
		p.lastScore = e.Score
	case e.BindingEnd != nil && e.BindingEnd.Bound:
		p.boundTo = e.BindingEnd.Node
	case e.Queue != nil:
		q := e.Queue
		if q.Action == event.ActionSkip {
			// Bounded: the queue reports a skip once per event and answer
			// while a pod waits, but a pod may wait many times.
			if len(p.skips) < maxSkips {
				p.skips = append(p.skips, queueSkip{event: q.Event, object: q.Object, plugins: q.Plugins})
			}
			return
		}
		if p.queue != "" {
			p.seconds[p.queue] += e.Time.Sub(p.since).Seconds()
		}
		p.queue, p.since = string(q.To), e.Time
		// A pop from backoffQ is a move too: it names PopFromBackoffQ.
		if (q.Action == event.ActionMove || q.Action == event.ActionPop) && q.Event != "" && !contains(p.movedBy, q.Event) {
			p.movedBy = append(p.movedBy, q.Event)
		}
		if q.GatingPlugin != "" && !contains(p.gatedBy, q.GatingPlugin) {
			p.gatedBy = append(p.gatedBy, q.GatingPlugin)
		}
	}
}

// maxSkips is how many QueueSkip answers a pod's story keeps.
const maxSkips = 32

// queueSkip is a cluster event (about object) to which plugins' QueueingHints
// answered QueueSkip.
type queueSkip struct {
	event, object string
	plugins       []string
}

func (s queueSkip) String() string {
	about := ""
	if s.object != "" {
		about = " (" + s.object + ")"
	}
	return s.event + about + ": " + strings.Join(s.plugins, ", ")
}

// pod returns a copy of the pod's story, or nil: the tracker's goroutine
// goes on changing the original while a step reads it. (The events lastEnd
// and lastScore point to are never changed, only replaced.)
func (t *tracker) pod(key string) *podStory {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pods[key]
	if p == nil {
		return nil
	}
	c := *p
	c.seconds = maps.Clone(p.seconds)
	c.movedBy = slices.Clone(p.movedBy)
	c.gatedBy = slices.Clone(p.gatedBy)
	c.skips = slices.Clone(p.skips)
	return &c
}

// lost says whether events left the history before the tracker read them.
func (t *tracker) lost() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.truncated
}

func (t *tracker) describePod(key string) string {
	p := t.pod(key)
	switch {
	case p == nil:
		return "the scheduler has not seen the pod"
	case p.lastEnd != nil && p.lastEnd.Result != event.ResultScheduled:
		return fmt.Sprintf("its last attempt was %s: %s", p.lastEnd.Result, p.lastEnd.Message)
	case p.queue != "":
		return "it waits in " + p.queue
	}
	return fmt.Sprintf("%d attempt(s) so far", p.attempts)
}

// podReports tells every pod's story, in the order the pods appeared.
func (t *tracker) podReports(ctx context.Context, c kubernetes.Interface) []PodReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	nodes := map[string]string{}
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	listed := err == nil
	if listed {
		for _, p := range pods.Items {
			nodes[p.Namespace+"/"+p.Name] = p.Spec.NodeName
		}
	}
	now := time.Now()
	out := []PodReport{}
	for _, key := range t.order {
		p := t.pods[key]
		r := PodReport{Pod: key, Node: nodes[key], Attempts: p.attempts, QueueSeconds: map[string]float64{}}
		for q, s := range p.seconds {
			r.QueueSeconds[q] = s
		}
		if p.queue != "" {
			r.QueueSeconds[p.queue] += now.Sub(p.since).Seconds()
		}
		_, exists := nodes[key]
		r.Deleted = listed && !exists
		if r.Node == "" {
			switch {
			case p.preempted != nil:
				r.Reason = fmt.Sprintf("preempted by %s, which needed room on %s", p.preempted.Preemptor.Key(), p.preempted.Node)
			case r.Deleted && p.boundTo != "":
				r.Reason = "it had been bound to " + p.boundTo
			case r.Deleted:
				r.Reason = "before it was bound"
			case p.lastEnd != nil && p.lastEnd.Message != "":
				r.Reason = p.lastEnd.Message
			default:
				r.Reason = "not scheduled yet"
			}
		}
		if p.lastScore != nil {
			for i, name := range p.lastScore.NodeNames {
				r.Scores = append(r.Scores, NodeScore{Node: name, Total: p.lastScore.Total(i)})
			}
			sort.SliceStable(r.Scores, func(i, j int) bool { return r.Scores[i].Total > r.Scores[j].Total })
			r.Scores = r.Scores[:min(len(r.Scores), 10)]
		}
		out = append(out, r)
	}
	return out
}
