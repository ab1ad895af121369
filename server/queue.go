package server

// The scheduling queue as the API shows it: GET /queue.

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"minisched/event"
	"minisched/minisched"
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
	// Plugins and RejectedBy (the same list, named as on queue events)
	// rejected the pod in its last attempt; HintedBy are the plugins whose
	// QueueingHint made its last move, when a cluster event made it.
	Plugins      []string `json:"plugins,omitempty"`
	RejectedBy   []string `json:"rejectedBy,omitempty"`
	HintedBy     []string `json:"hintedBy,omitempty"`
	GatingPlugin string   `json:"gatingPlugin,omitempty"`
	// LastEvent is what last moved the pod; Message why its last attempt
	// failed.
	LastEvent string `json:"lastEvent,omitempty"`
	Message   string `json:"message,omitempty"`
	// LastSkip is the last cluster event checked against the pod since
	// that move whose QueueingHints all answered QueueSkip.
	LastSkip *HintSkip `json:"lastSkip,omitempty"`
	// Order sorts the pods of one queue as it pops them (QueueMove.Order).
	Order string `json:"order,omitempty"`
	// PodGroup (namespace/name) is the group the pod is queued with
	// (GenericWorkload).
	PodGroup string `json:"podGroup,omitempty"`
}

// HintSkip is a cluster event (Event, about Object) to which Plugins'
// QueueingHints answered QueueSkip: the pod stayed.
type HintSkip struct {
	Event   string   `json:"event"`
	Object  string   `json:"object,omitempty"`
	Plugins []string `json:"plugins"`
}

// QueueView is the whole queue.
type QueueView struct {
	Active        []QueuedPod `json:"active"`
	Backoff       []QueuedPod `json:"backoff"`
	ErrorBackoff  []QueuedPod `json:"errorBackoff"`
	Unschedulable []QueuedPod `json:"unschedulable"`
	InFlight      []QueuedPod `json:"inFlight"`
	// The pods of pod groups (GenericWorkload) that wait apart: for their
	// PodGroup object, or for their group's cycle to end.
	IncompletePodGroup []QueuedPod `json:"incompletePodGroup,omitempty"`
	PendingPodGroup    []QueuedPod `json:"pendingPodGroup,omitempty"`
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
			SecondsInQueue: now.Sub(e.EnteredAt).Seconds(), Plugins: e.Plugins, RejectedBy: e.Plugins, HintedBy: e.HintedBy, GatingPlugin: e.GatingPlugin,
			LastEvent: e.LastEvent, Message: e.LastMessage, Order: e.Order, PodGroup: e.PodGroup,
		}
		if k := e.LastSkip; k != nil {
			qp.LastSkip = &HintSkip{Event: k.Event, Object: k.Object, Plugins: k.Plugins}
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
		case event.IncompleteGroup:
			v.IncompletePodGroup = append(v.IncompletePodGroup, qp)
		case event.PendingGroup:
			v.PendingPodGroup = append(v.PendingPodGroup, qp)
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
