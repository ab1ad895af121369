// Package metrics turns minisched's events into Prometheus metrics named
// after kube-scheduler's, and counts the stream's clients.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"minisched/event"
)

// Metrics turns events into Prometheus metrics named after kube-scheduler's,
// and counts the stream's clients. It is an event.Observer.
type Metrics struct {
	attempts        *prometheus.CounterVec
	attemptDuration *prometheus.HistogramVec
	pluginDuration  *prometheus.HistogramVec
	incoming        *prometheus.CounterVec
	streamClients   prometheus.Gauge
	streamDropped   prometheus.Counter
	streamClosed    *prometheus.CounterVec
}

// pluginSampleEvery samples plugin durations one cycle in ten, as
// kube-scheduler does: observing every Filter call of a large cluster would
// cost more than the calls.
const pluginSampleEvery = 10

// New registers minisched's metrics in reg. pending reports the
// queue's sizes at scrape time.
func New(reg *prometheus.Registry, pending func() map[event.QueueName]int) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result.",
		}, []string{"result"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result"}),
		pluginDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_plugin_execution_duration_seconds",
			Help:    "Duration for running a plugin at a specific extension point (sampled one cycle in ten).",
			Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20),
		}, []string{"plugin", "extension_point", "status"}),
		incoming: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_queue_incoming_pods_total",
			Help: "Number of pods added to scheduling queues by event and queue type.",
		}, []string{"queue", "event"}),
		streamClients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "minisched_stream_clients",
			Help: "Number of connected websocket stream clients.",
		}),
		streamDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "minisched_stream_dropped_messages_total",
			Help: "Events skipped for stream clients that fell behind and were resynchronised.",
		}),
		streamClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "minisched_stream_disconnects_total",
			Help: "Stream clients the server disconnected, by reason (slow: a write timed out; shutdown).",
		}, []string{"reason"}),
	}
	// One gauge per queue, read at scrape time.
	for _, q := range []event.QueueName{event.ActiveQ, event.BackoffQ, event.Unschedulable} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "scheduler_pending_pods",
			Help:        "Number of pending pods, by the queue type.",
			ConstLabels: prometheus.Labels{"queue": string(q)},
		}, func() float64 {
			if pending == nil {
				return 0
			}
			counts := pending()
			if q == event.BackoffQ {
				// Upstream counts both backoffs as "backoff".
				return float64(counts[q] + counts[event.ErrorBackoffQ])
			}
			return float64(counts[q])
		}))
	}
	reg.MustRegister(m.attempts, m.attemptDuration, m.pluginDuration, m.incoming, m.streamClients, m.streamDropped, m.streamClosed)
	return m
}

// Observe updates the metrics an event touches.
func (m *Metrics) Observe(e event.Event) {
	switch {
	case e.CycleEnd != nil:
		result := string(e.CycleEnd.Result)
		m.attempts.WithLabelValues(result).Inc()
		m.attemptDuration.WithLabelValues(result).Observe(time.Duration(e.CycleEnd.Nanos).Seconds())
	case e.Queue != nil:
		if e.Queue.To != "" && e.Queue.To != event.InFlight && e.Queue.Action != event.ActionUpdate && e.Queue.Action != event.ActionSkip {
			m.incoming.WithLabelValues(string(e.Queue.To), e.Queue.Event).Inc()
		}
	case e.Cycle%pluginSampleEvery != 0:
	case e.Point != nil:
		for _, r := range e.Point.Results {
			m.observePlugin(r.Plugin, e.Point.Point, r.Code, r.Nanos)
		}
	case e.Filter != nil:
		for i := range e.Filter.NodeNames {
			codes, nanos := e.Filter.Calls(i)
			for j, code := range codes {
				m.observePlugin(e.Filter.Plugins[j], "Filter", int(code), nanos[j])
			}
		}
	case e.Score != nil:
		s, k := e.Score, len(e.Score.Plugins)
		for i := range s.NodeNames {
			if !s.Reached(i) {
				continue
			}
			for j, nanos := range s.PluginNanos[i*k : (i+1)*k] {
				m.observePlugin(s.Plugins[j].Name, "Score", 0, nanos)
			}
		}
	}
}

func (m *Metrics) observePlugin(plugin, point string, code int, nanos int64) {
	m.pluginDuration.WithLabelValues(plugin, point, event.CodeName(code)).Observe(time.Duration(nanos).Seconds())
}

// StreamClients counts a stream client in (+1) or out (-1).
func (m *Metrics) StreamClients(delta float64) { m.streamClients.Add(delta) }

// StreamDropped counts events a client skipped when it was resynchronised.
func (m *Metrics) StreamDropped(n uint64) { m.streamDropped.Add(float64(n)) }

// StreamClosed counts a client the server disconnected, by reason.
func (m *Metrics) StreamClosed(reason string) { m.streamClosed.WithLabelValues(reason).Inc() }
