package metrics

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"minisched/event"
)

func TestObserve(t *testing.T) {
	ref := &event.PodRef{Namespace: "default", Name: "p"}
	tests := []struct {
		name   string
		events []event.Event
		metric string
		want   string
	}{
		{
			name: "a cycle's end counts an attempt by its result",
			events: []event.Event{
				{Kind: event.KindCycleEnd, Pod: ref, Cycle: 1, CycleEnd: &event.CycleEnd{Result: event.ResultScheduled, Nanos: 2e6}},
				{Kind: event.KindCycleEnd, Pod: ref, Cycle: 2, CycleEnd: &event.CycleEnd{Result: event.ResultUnschedulable}},
				{Kind: event.KindCycleEnd, Pod: ref, Cycle: 3, CycleEnd: &event.CycleEnd{Result: event.ResultScheduled}},
			},
			metric: "scheduler_schedule_attempts_total",
			want: `
scheduler_schedule_attempts_total{result="scheduled"} 2
scheduler_schedule_attempts_total{result="unschedulable"} 1
`,
		},
		{
			name: "moves into a queue count by queue and event; pops and updates do not",
			events: []event.Event{
				{Kind: event.KindQueue, Pod: ref, Queue: &event.QueueMove{Action: event.ActionAdd, To: event.ActiveQ, Event: "PodAdd"}},
				{Kind: event.KindQueue, Pod: ref, Queue: &event.QueueMove{Action: event.ActionPop, From: event.ActiveQ, To: event.InFlight}},
				{Kind: event.KindQueue, Pod: ref, Queue: &event.QueueMove{Action: event.ActionMove, From: event.Unschedulable, To: event.BackoffQ, Event: "NodeAdd"}},
				{Kind: event.KindQueue, Pod: ref, Queue: &event.QueueMove{Action: event.ActionUpdate, From: event.ActiveQ, To: event.ActiveQ, Event: "PodUpdate"}},
			},
			metric: "scheduler_queue_incoming_pods_total",
			want: `
scheduler_queue_incoming_pods_total{event="NodeAdd",queue="backoff"} 1
scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 1
`,
		},
		{
			name: "plugin durations are sampled one cycle in ten, by the code's name",
			events: []event.Event{
				{Kind: event.KindPoint, Pod: ref, Cycle: 10, Point: &event.PointResults{Point: "PreFilter", Results: []event.PluginResult{{Plugin: "Fit", Code: 5, Nanos: 1000}}}},
				{Kind: event.KindPoint, Pod: ref, Cycle: 11, Point: &event.PointResults{Point: "PreFilter", Results: []event.PluginResult{{Plugin: "Fit", Code: 0, Nanos: 1000}}}},
				{Kind: event.KindFilter, Pod: ref, Cycle: 20, Filter: filterOf(t, []string{"Fit"}, []event.NodeFilter{
					{Node: "a", Codes: []int{2}, Nanos: []int64{500}}, {Node: "b", Codes: []int{0}, Nanos: []int64{500}}})},
			},
			metric: "scheduler_plugin_execution_duration_seconds",
			want: `
scheduler_plugin_execution_duration_seconds_count{extension_point="Filter",plugin="Fit",status="Success"} 1
scheduler_plugin_execution_duration_seconds_count{extension_point="Filter",plugin="Fit",status="Unschedulable"} 1
scheduler_plugin_execution_duration_seconds_count{extension_point="PreFilter",plugin="Fit",status="Skip"} 1
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := New(reg, nil)
			for _, e := range tt.events {
				m.Observe(e)
			}
			if got, want := series(t, reg, tt.metric), strings.TrimSpace(tt.want); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// series prints each series of a metric as name{labels} value, sorted: a
// counter's value, a histogram's count of observations.
func filterOf(t *testing.T, plugins []string, rows []event.NodeFilter) *event.FilterResults {
	t.Helper()
	f, err := event.FilterFrom(plugins, rows)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func series(t *testing.T, reg *prometheus.Registry, metric string) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, mf := range families {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			name, value := metric, m.GetCounter().GetValue()
			if h := m.GetHistogram(); h != nil {
				name, value = metric+"_count", float64(h.GetSampleCount())
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %g", name, strings.Join(labels, ","), value))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
