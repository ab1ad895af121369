package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
)

// apiCalls counts the requests the embedded apiserver has served, by verb
// and resource, from its own apiserver_request_total.
func apiCalls() map[string]float64 {
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

// perPod prints the calls made between two counts, per pod, busiest first.
func perPod(before, after map[string]float64, pods int) string {
	return callsPer(before, after, float64(pods), "pod")
}

// perSecond prints them per second of a window.
func perSecond(before, after map[string]float64, window time.Duration) string {
	return callsPer(before, after, window.Seconds(), "s")
}

func callsPer(before, after map[string]float64, n float64, unit string) string {
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
	sort.Slice(calls, func(i, j int) bool { return calls[i].n > calls[j].n })
	parts := []string{fmt.Sprintf("%.2f API calls/%s", total/n, unit)}
	for _, c := range calls {
		if c.n/n >= 0.01 {
			parts = append(parts, fmt.Sprintf("%s %.2f", c.key, c.n/n))
		}
	}
	return strings.Join(parts, ", ")
}
