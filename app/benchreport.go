package app

// `minisched bench --html FILE`: the report as one self-contained HTML
// page (no script, no file or address it loads), with its pictures drawn
// in SVG: pods/s each second of each run, where the scheduling cycle's
// time goes (a flame of points and their plugins), and each plugin's call
// times.

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"minisched/schedperf"
)

//go:embed benchreport.html
var benchReportPage string

var benchReportTemplate = template.Must(template.New("bench").Parse(benchReportPage))

// Chart sizes, in SVG user units.
const (
	chartW, chartH   = 720.0, 220.0
	chartPad         = 40.0
	flameW, flameRow = 720.0, 26.0
	latencyW         = 240.0
)

type htmlReport struct {
	Workload string
	Written  string
	Summary  string
	Runs     []htmlRun
	Lines    []htmlLine
	MaxRate  float64
	Seconds  int
	// Ticks label the rate chart's axes.
	YTicks, XTicks []htmlTick
	Flame          []htmlBlock
	Plugins        []htmlPlugin
	Cycles         int
	CycleTime      string
	LatencyTicks   []htmlTick
	W, H, FlameW   float64
	FlameH         float64
	LatencyW       float64
}

type htmlRun struct {
	Round                             int
	Scheduler, Window                 string
	Placed, Pods                      int
	PodsPerSecond, CPUPerPod          string
	Throughput, APICalls, Colour, Key string
}

type htmlLine struct {
	Label, Colour, Points string
	rates                 []float64
}

type htmlTick struct {
	At    float64
	Label string
}

// htmlBlock is one box of the flame: a point on the first row, one of its
// plugins on the second.
type htmlBlock struct {
	X, Y, W, H  float64
	Label, Tip  string
	Point, Wide bool
}

type htmlPlugin struct {
	schedperf.PluginRow
	Share                   string
	X50, X90, X99           float64
	P50s, P90s, P99s, Total string
}

// writeBenchHTML writes rep as the HTML report.
func writeBenchHTML(w io.Writer, rep *benchReport, now time.Time) error {
	out := htmlReport{Workload: rep.Workload, Written: now.UTC().Format(time.RFC3339), Cycles: rep.Cycles,
		CycleTime: rep.CycleTime.Round(time.Millisecond).String(), W: chartW, H: chartH, FlameW: flameW, LatencyW: latencyW}
	var summary strings.Builder
	writeRatio(&summary, rep)
	out.Summary = strings.TrimSpace(summary.String())
	out.runs(rep)
	out.flame(rep.Plugins)
	out.latencies(rep.Plugins)
	return benchReportTemplate.Execute(w, out)
}

// runColours: minisched's runs in blues, kube-scheduler's in oranges.
var runColours = map[string][]string{
	"minisched":   {"#1f5fae", "#4a8fd9", "#86b6ea"},
	kubeScheduler: {"#c2571a", "#e88a3c", "#f2b47c"},
}

func (r *htmlReport) runs(rep *benchReport) {
	seen := map[string]int{}
	for i, round := range rep.Rounds {
		for _, run := range round.Runs {
			colours := runColours[run.Scheduler]
			colour := colours[seen[run.Scheduler]%len(colours)]
			seen[run.Scheduler]++
			for _, m := range run.Measures {
				h := htmlRun{Round: i + 1, Scheduler: run.Scheduler, Window: m.Name + backlogWords(m), Placed: m.Placed, Pods: m.Pods,
					PodsPerSecond: fmt.Sprintf("%.1f", m.PodsPerSecond), CPUPerPod: fmt.Sprintf("%.2f ms", m.CPUPerPod),
					Throughput: throughputWords(m.Throughput), APICalls: m.APICalls, Colour: colour}
				r.Runs = append(r.Runs, h)
				if len(m.Rates) == 0 {
					continue
				}
				r.Lines = append(r.Lines, htmlLine{Label: fmt.Sprintf("round %d, %s, %s", i+1, run.Scheduler, m.Name), Colour: colour, rates: m.Rates})
				r.Seconds = max(r.Seconds, len(m.Rates))
				for _, v := range m.Rates {
					r.MaxRate = math.Max(r.MaxRate, v)
				}
			}
		}
	}
	if r.MaxRate == 0 {
		return
	}
	top := niceCeil(r.MaxRate)
	for i := range r.Lines {
		pts := make([]string, len(r.Lines[i].rates))
		for j, v := range r.Lines[i].rates {
			pts[j] = fmt.Sprintf("%.1f,%.1f", r.x(j), chartH-chartPad-v/top*(chartH-2*chartPad))
		}
		r.Lines[i].Points = strings.Join(pts, " ")
	}
	for k := 0; k <= 4; k++ {
		v := top * float64(k) / 4
		r.YTicks = append(r.YTicks, htmlTick{At: chartH - chartPad - v/top*(chartH-2*chartPad), Label: fmt.Sprintf("%g", v)})
	}
	step := max(1, r.Seconds/8)
	for s := 0; s < r.Seconds; s += step {
		r.XTicks = append(r.XTicks, htmlTick{At: r.x(s), Label: fmt.Sprintf("%d s", s+1)})
	}
}

// x is where the rate chart puts sample i.
func (r *htmlReport) x(i int) float64 {
	if r.Seconds <= 1 {
		return chartPad
	}
	return chartPad + float64(i)/float64(r.Seconds-1)*(chartW-2*chartPad)
}

// flame lays the scheduling cycle's plugin time out as two rows: each
// extension point as wide as the time its plugins took (summed over the
// nodes they ran on), and under it each of its plugins.
func (r *htmlReport) flame(rows []schedperf.PluginRow) {
	type point struct {
		name    string
		total   time.Duration
		plugins []schedperf.PluginRow
	}
	var points []*point
	byName := map[string]*point{}
	var all time.Duration
	for _, row := range rows {
		if row.Binding || row.Total <= 0 {
			continue
		}
		p := byName[row.Point]
		if p == nil {
			p = &point{name: row.Point}
			byName[row.Point] = p
			points = append(points, p)
		}
		p.total += row.Total
		p.plugins = append(p.plugins, row)
		all += row.Total
	}
	if all == 0 {
		return
	}
	scale := flameW / float64(all)
	x := 0.0
	for _, p := range points {
		w := float64(p.total) * scale
		r.Flame = append(r.Flame, htmlBlock{X: x, Y: 0, W: w, H: flameRow - 2, Label: p.name, Point: true, Wide: w > 60,
			Tip: fmt.Sprintf("%s: %s, %.1f%% of the plugin time", p.name, p.total.Round(time.Microsecond), 100*float64(p.total)/float64(all))})
		sort.SliceStable(p.plugins, func(i, j int) bool { return p.plugins[i].Total > p.plugins[j].Total })
		px := x
		for _, pl := range p.plugins {
			pw := float64(pl.Total) * scale
			r.Flame = append(r.Flame, htmlBlock{X: px, Y: flameRow, W: pw, H: flameRow - 2, Label: pl.Plugin, Wide: pw > 60,
				Tip: fmt.Sprintf("%s at %s: %d calls, %s, %.1f%% of the plugin time", pl.Plugin, p.name, pl.Calls, pl.Total.Round(time.Microsecond), 100*float64(pl.Total)/float64(all))})
			px += pw
		}
		x += w
	}
	r.FlameH = 2 * flameRow
}

// latencies places each plugin's p50, p90 and p99 on one logarithmic axis,
// from the shortest p50 to the longest p99.
func (r *htmlReport) latencies(rows []schedperf.PluginRow) {
	lo, hi := math.Inf(1), 0.0
	for _, row := range rows {
		if row.Calls == 0 {
			continue
		}
		lo = math.Min(lo, float64(max(row.P50, time.Nanosecond)))
		hi = math.Max(hi, float64(row.P99))
	}
	if hi == 0 {
		return
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	at := func(d time.Duration) float64 {
		v := math.Max(float64(d), lo)
		return 4 + (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(latencyW-8)
	}
	for v := lo; v <= hi*1.0001; v *= 10 {
		r.LatencyTicks = append(r.LatencyTicks, htmlTick{At: at(time.Duration(v)), Label: time.Duration(v).String()})
	}
	for _, row := range rows {
		share := fmt.Sprintf("%.1f%%", 100*row.Share)
		if row.Binding {
			share = "binding"
		}
		r.Plugins = append(r.Plugins, htmlPlugin{PluginRow: row, Share: share,
			X50: at(row.P50), X90: at(row.P90), X99: at(row.P99),
			P50s: row.P50.String(), P90s: row.P90.String(), P99s: row.P99.String(), Total: row.Total.Round(time.Microsecond).String()})
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
