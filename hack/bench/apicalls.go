package main

import (
	"time"

	"minisched/schedperf"
)

// perPod prints the calls made between two counts, per pod, busiest first.
func perPod(before, after map[string]float64, pods int) string {
	return schedperf.CallsPer(before, after, float64(pods), "pod")
}

// perSecond prints them per second of a window.
func perSecond(before, after map[string]float64, window time.Duration) string {
	return schedperf.CallsPer(before, after, window.Seconds(), "s")
}
