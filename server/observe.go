package server

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"sigs.k8s.io/yaml"

	"minisched/manifest"
	"minisched/minisched"
	"minisched/minisched/event"
	"minisched/minisched/schedconfig"
	"minisched/recorder"
)

// QueuedPod is one pod of the scheduling queue as the API shows it.
type QueuedPod struct {
	Pod            event.PodRef    `json:"pod"`
	Queue          event.QueueName `json:"queue"`
	Priority       int32           `json:"priority"`
	Attempts       int             `json:"attempts"`
	EnteredAt      time.Time       `json:"enteredAt"`
	SecondsInQueue float64         `json:"secondsInQueue"`
	BackoffUntil   *time.Time      `json:"backoffUntil,omitempty"`
	// Plugins rejected the pod in its last attempt.
	Plugins      []string `json:"plugins,omitempty"`
	GatingPlugin string   `json:"gatingPlugin,omitempty"`
	// LastEvent is what last moved the pod; Message why its last attempt
	// failed.
	LastEvent string `json:"lastEvent,omitempty"`
	Message   string `json:"message,omitempty"`
	// Order sorts the pods of one queue as it pops them (QueueMove.Order).
	Order string `json:"order,omitempty"`
}

// QueueView is the whole queue.
type QueueView struct {
	Active        []QueuedPod `json:"active"`
	Backoff       []QueuedPod `json:"backoff"`
	ErrorBackoff  []QueuedPod `json:"errorBackoff"`
	Unschedulable []QueuedPod `json:"unschedulable"`
	InFlight      []QueuedPod `json:"inFlight"`
}

func (s *Server) queueView() QueueView {
	v := QueueView{Active: []QueuedPod{}, Backoff: []QueuedPod{}, ErrorBackoff: []QueuedPod{}, Unschedulable: []QueuedPod{}, InFlight: []QueuedPod{}}
	sched := s.scheduler()
	if sched == nil {
		return v
	}
	now := time.Now()
	for _, e := range sched.Queue().List() {
		qp := QueuedPod{
			Pod: *event.RefOf(e.Pod), Queue: e.Queue, Attempts: e.Attempts, EnteredAt: e.EnteredAt,
			SecondsInQueue: now.Sub(e.EnteredAt).Seconds(), Plugins: e.Plugins, GatingPlugin: e.GatingPlugin,
			LastEvent: e.LastEvent, Message: e.LastMessage, Order: e.Order,
		}
		if e.Pod.Spec.Priority != nil {
			qp.Priority = *e.Pod.Spec.Priority
		}
		if e.Queue == event.BackoffQ || e.Queue == event.ErrorBackoffQ {
			until := e.BackoffUntil
			qp.BackoffUntil = &until
		}
		switch e.Queue {
		case event.ActiveQ:
			v.Active = append(v.Active, qp)
		case event.BackoffQ:
			v.Backoff = append(v.Backoff, qp)
		case event.ErrorBackoffQ:
			v.ErrorBackoff = append(v.ErrorBackoff, qp)
		case event.Unschedulable:
			v.Unschedulable = append(v.Unschedulable, qp)
		case event.InFlight:
			v.InFlight = append(v.InFlight, qp)
		}
	}
	return v
}

func (s *Server) scheduler() *minisched.Scheduler {
	if s.opts.Scheduler == nil {
		return nil
	}
	return s.opts.Scheduler.Scheduler()
}

func (s *Server) getQueue(c echo.Context) error { return c.JSON(http.StatusOK, s.queueView()) }

// queryInt reads an integer query parameter within [min, max].
func queryInt(c echo.Context, name string, def, min, max int) (int, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < min || n > max {
		return 0, apiError(http.StatusBadRequest, "query parameter %s=%q: want an integer from %d to %d", name, raw, min, max)
	}
	return n, nil
}

func querySeq(c echo.Context, name string) (uint64, bool, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return 0, false, apiError(http.StatusBadRequest, "query parameter %s=%q: want a sequence number (an integer of 0 or more)", name, raw)
	}
	return n, true, nil
}

// podKey checks a ?pod=namespace/name parameter.
func podKey(c echo.Context) (string, error) {
	pod := c.QueryParam("pod")
	if pod == "" {
		return "", nil
	}
	ns, name, ok := strings.Cut(pod, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", apiError(http.StatusBadRequest, "query parameter pod=%q: want namespace/name", pod)
	}
	return pod, nil
}

func (s *Server) listCycles(c echo.Context) error {
	limit, err := queryInt(c, "limit", 50, 1, 10000)
	if err != nil {
		return err
	}
	pod, err := podKey(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{
		"items":   s.opts.Recorder.Cycles(pod, limit),
		"history": s.opts.Recorder.Stats(),
	})
}

func (s *Server) getCycle(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return apiError(http.StatusBadRequest, "cycle id %q: want a positive integer", c.Param("id"))
	}
	rec, err := s.opts.Recorder.Cycle(id)
	if errors.Is(err, recorder.ErrNoCycle) {
		return apiError(http.StatusNotFound, "cycle %d is not in the history (it may have been dropped to stay within the history cap)", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rec)
}

// listEvents serves the stream's events to clients that poll.
func (s *Server) listEvents(c echo.Context) error {
	since, _, err := querySeq(c, "since")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 1000, 1, 10000)
	if err != nil {
		return err
	}
	entries, _, err := s.opts.Recorder.Since(since, limit)
	if errors.Is(err, recorder.ErrTruncated) {
		st := s.opts.Recorder.Stats()
		return apiError(http.StatusGone, "the history no longer holds the events after %d (it keeps %d to %d): load a fresh snapshot from /api/v1/snapshot", since, st.FirstSeq, st.LastSeq)
	}
	if err != nil {
		return err
	}
	// lastSeq is the page's own last event, so that since=lastSeq reads
	// the next page; the history's newest says whether there is one.
	last := since
	if len(entries) > 0 {
		last = entries[len(entries)-1].Event.Seq
	}
	var buf bytes.Buffer
	buf.WriteString(`{"lastSeq":`)
	buf.WriteString(strconv.FormatUint(last, 10))
	buf.WriteString(`,"more":`)
	buf.WriteString(strconv.FormatBool(last < s.opts.Recorder.LastSeq()))
	buf.WriteString(`,"events":[`)
	for i, e := range entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.JSON())
	}
	buf.WriteString("]}")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf.Bytes())
}

func (s *Server) getHistory(c echo.Context) error {
	return c.JSON(http.StatusOK, s.opts.Recorder.Stats())
}

// Snapshot is the state a stream client starts from: everything up to Seq.
type Snapshot struct {
	Type      string               `json:"type"`
	Schema    string               `json:"schema"`
	Seq       uint64               `json:"seq"`
	Time      time.Time            `json:"time"`
	Reason    string               `json:"reason,omitempty"`
	Nodes     []event.NodeSummary  `json:"nodes"`
	Pods      []event.PodSummary   `json:"pods"`
	Queue     QueueView            `json:"queue"`
	Scheduler event.SchedulerState `json:"scheduler"`
	History   recorder.Stats       `json:"history"`
	// QueueSort says how activeQ is ordered.
	QueueSort QueueSort `json:"queueSort"`
	// Vocabulary names the codes, kinds, queues and extension points the
	// events use.
	Vocabulary event.Vocabulary `json:"vocabulary"`
}

// QueueSort names the QueueSort plugin, and says whether activeQ's pods
// carry an order (QueueMove.Order); without one a viewer shows arrival order.
type QueueSort struct {
	Plugin  string `json:"plugin"`
	Ordered bool   `json:"ordered"`
}

// snapshot takes the sequence number first: anything that happens while the
// lists are built is also sent as an event, and clients apply events
// idempotently.
func (s *Server) snapshot(reason string) Snapshot {
	seq := s.opts.Recorder.LastSeq()
	nodes, pods := s.cluster.objects()
	snap := Snapshot{Type: "snapshot", Schema: event.SchemaVersion, Seq: seq, Time: time.Now(), Reason: reason,
		Nodes: nodes, Pods: pods, Queue: s.queueView(), History: s.opts.Recorder.Stats(), Vocabulary: event.Words()}
	if s.opts.Scheduler != nil {
		snap.Scheduler = s.opts.Scheduler.State()
	}
	if sched := s.scheduler(); sched != nil {
		snap.QueueSort.Plugin, snap.QueueSort.Ordered = sched.QueueSort()
	}
	return snap
}

func (s *Server) getSnapshot(c echo.Context) error { return c.JSON(http.StatusOK, s.snapshot("")) }

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
	if err := s.Reset(c.Request().Context()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// Reset empties the cluster and the history.
func (s *Server) Reset(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	client := s.opts.Client.CoreV1()
	namespaces, err := client.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ns := range namespaces.Items {
		if err := client.Pods(ns.Name).DeleteCollection(ctx, deleteNow, metav1.ListOptions{}); err != nil {
			return err
		}
	}
	if err := client.Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	// Priority classes people made (scenarios make them); the system's stay.
	classes, err := s.opts.Client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, pc := range classes.Items {
		if !strings.HasPrefix(pc.Name, "system-") {
			if err := s.opts.Client.SchedulingV1().PriorityClasses().Delete(ctx, pc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	s.opts.Recorder.Reset()
	s.opts.Observer.Observe(event.Event{Time: time.Now(), Kind: event.KindReset})
	return nil
}
