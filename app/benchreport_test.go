package app

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"minisched/schedperf"
)

// TestHTMLReportLayout checks the pictures' geometry on a made-up report:
// one line a run, a point a second; the flame's points span its width and
// each point's plugins span the point; the latency marks in order.
func TestHTMLReportLayout(t *testing.T) {
	rep := &benchReport{Workload: "SchedulingBasic/500Nodes", Cycles: 3, CycleTime: 30 * time.Millisecond}
	m := func(rates ...float64) []schedperf.Measure {
		return []schedperf.Measure{{Name: "SchedulingBasic", Pods: 3, Placed: 3, PodsPerSecond: 100, Rates: rates}}
	}
	rep.Rounds = append(rep.Rounds, struct {
		Runs []benchRun `json:"runs"`
	}{Runs: []benchRun{{Scheduler: "minisched", Measures: m(90, 110, 105)}, {Scheduler: kubeScheduler, Measures: m(80, 95)}}})
	rep.Plugins = []schedperf.PluginRow{
		{Point: "Filter", Plugin: "NodeResourcesFit", Calls: 10, P50: 2 * time.Microsecond, P90: 5 * time.Microsecond, P99: 40 * time.Microsecond, Total: 3 * time.Millisecond},
		{Point: "Filter", Plugin: "TaintToleration", Calls: 10, P50: time.Microsecond, P90: time.Microsecond, P99: 2 * time.Microsecond, Total: time.Millisecond},
		{Point: "Score", Plugin: "ImageLocality", Calls: 10, P50: 3 * time.Microsecond, P90: 4 * time.Microsecond, P99: 9 * time.Microsecond, Total: 4 * time.Millisecond},
		{Point: "Bind", Plugin: "DefaultBinder", Calls: 3, P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond, Total: 6 * time.Millisecond, Binding: true},
	}
	out := htmlReport{}
	out.runs(rep)
	out.flame(rep.Plugins)
	out.latencies(rep.Plugins)

	if len(out.Lines) != 2 || len(strings.Fields(out.Lines[0].Points)) != 3 || len(strings.Fields(out.Lines[1].Points)) != 2 {
		t.Errorf("lines = %+v, want 2: of 3 and 2 points", out.Lines)
	}
	if out.Seconds != 3 || out.YTicks[len(out.YTicks)-1].Label != "200" {
		t.Errorf("the rate axis: %d seconds, ticks %+v; want 3 seconds and a top of 200 pods/s", out.Seconds, out.YTicks)
	}
	var points, plugins float64
	for _, b := range out.Flame {
		if b.Point {
			points += b.W
		} else {
			plugins += b.W
		}
		if strings.Contains(b.Label, "DefaultBinder") {
			t.Errorf("the binding cycle's %s is in the flame", b.Label)
		}
	}
	if math.Abs(points-flameW) > 0.01 || math.Abs(plugins-flameW) > 0.01 {
		t.Errorf("the flame's rows are %.2f and %.2f wide, want %v each", points, plugins, flameW)
	}
	if f := out.Flame[0]; f.Label != "Filter" || math.Abs(f.W-flameW*4/8) > 0.01 {
		t.Errorf("the first point = %+v, want Filter, half the width (4 of 8 ms)", f)
	}
	for _, p := range out.Plugins {
		if !(p.X50 <= p.X90 && p.X90 <= p.X99) || p.X50 < 0 || p.X99 > latencyW {
			t.Errorf("%s/%s: marks at %.1f, %.1f, %.1f, want in order within %v", p.Point, p.Plugin, p.X50, p.X90, p.X99, latencyW)
		}
	}
	var page bytes.Buffer
	if err := writeBenchHTML(&page, rep, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), "<polyline"); n != 2 {
		t.Errorf("the page draws %d lines, want 2", n)
	}
}

// TestRatioWords: the ratio line says whether both schedulers placed every
// pod; a steady state's backlog, made and pending by design, does not count
// against it.
func TestRatioWords(t *testing.T) {
	tests := []struct {
		name       string
		mini, kube schedperf.Measure
		want       string
	}{
		{"every pod placed", schedperf.Measure{Pods: 10, Placed: 10, PodsPerSecond: 20}, schedperf.Measure{Pods: 10, Placed: 10, PodsPerSecond: 10},
			"2.00 (means over the rounds: 20.0 / 10.0); both placed every pod"},
		{"a pod left", schedperf.Measure{Pods: 10, Placed: 9, PodsPerSecond: 9}, schedperf.Measure{Pods: 10, Placed: 10, PodsPerSecond: 9},
			"every pod placed: minisched false, kube-scheduler true"},
		{"a steady state's backlog", schedperf.Measure{Pods: 412, Placed: 410, Backlog: 10, PodsPerSecond: 41}, schedperf.Measure{Pods: 358, Placed: 357, Backlog: 10, PodsPerSecond: 35.7},
			"both placed every pod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &benchReport{}
			rep.Rounds = append(rep.Rounds, struct {
				Runs []benchRun `json:"runs"`
			}{Runs: []benchRun{{Scheduler: "minisched", Measures: []schedperf.Measure{tt.mini}}, {Scheduler: kubeScheduler, Measures: []schedperf.Measure{tt.kube}}}})
			var out bytes.Buffer
			writeBench(&out, rep)
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("got\n%s\nwant %q", out.String(), tt.want)
			}
			if tt.mini.Backlog > 0 && !strings.Contains(out.String(), "410 of 412 pods placed (a steady state with a backlog of 10)") {
				t.Errorf("the window's line does not name the backlog:\n%s", out.String())
			}
		})
	}
}
