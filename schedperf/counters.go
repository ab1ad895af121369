package schedperf

// What a window of work cost the process: its CPU, and the requests the
// embedded apiserver served. Both count the whole process (the scheduler,
// the control plane and the informers), which is what a run on one machine
// compares.

import (
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
)

// ProcessCPU is the CPU time this process has used, user and system. On a
// machine other work shares, CPU per pod compares better than pods per
// second.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// APICalls counts the requests the embedded apiserver has served, by verb
// and resource ("create pods", "create pods/binding"), from its own
// apiserver_request_total.
func APICalls() map[string]float64 {
	out := map[string]float64{}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != "apiserver_request_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := labels["verb"] + " " + labels["resource"]
			if sub := labels["subresource"]; sub != "" {
				key += "/" + sub
			}
			out[key] += m.GetCounter().GetValue()
		}
	}
	return out
}

// CallsPer says the calls made between two counts per unit (of n units),
// busiest first, watches left out: "3.02 API calls/pod, create pods/binding
// 1.00, ...".
func CallsPer(before, after map[string]float64, n float64, unit string) string {
	type call struct {
		key string
		n   float64
	}
	var calls []call
	total := 0.0
	for k, v := range after {
		if d := v - before[k]; d > 0 && !strings.HasPrefix(k, "WATCH") {
			calls = append(calls, call{k, d})
			total += d
		}
	}
	sort.Slice(calls, func(i, j int) bool {
		return calls[i].n > calls[j].n || calls[i].n == calls[j].n && calls[i].key < calls[j].key
	})
	parts := []string{fmt.Sprintf("%.2f API calls/%s", total/n, unit)}
	for _, c := range calls {
		if c.n/n >= 0.01 {
			parts = append(parts, fmt.Sprintf("%s %.2f", c.key, c.n/n))
		}
	}
	return strings.Join(parts, ", ")
}
