package minisched

// How a point runs its plugins: in order, each call reported, the point
// reported once it returned.

import (
	"context"
	"fmt"
	"iter"
	"sort"

	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/event"
)

// runPoint runs a pod-level extension point: it calls the plugins one after
// another within the cycle timeout (see bounded), reports every call, and
// reports the point once it returned in time. What the point makes of each
// call is its own: then reads the plugin's status and what else run got
// from the plugin (v), may add to the call's report (r), and says whether
// the point stops there. runPoint returns bounded's status: when it is not
// nil the point was abandoned, and nothing then wrote may be read.
func runPoint[T fwk.Plugin, V any](ctx context.Context, c *cycle, state fwk.CycleState, point, node string, plugins iter.Seq2[int, T],
	run func(context.Context, fwk.CycleState, T) (V, *fwk.Status),
	then func(pl T, v V, s *fwk.Status, r *event.PluginResult) (stop bool)) *fwk.Status {
	// A point without plugins has nothing to run or report: no goroutine,
	// timer or copy of the state for it (the default profile has no
	// Permit or PostBind plugin, and that is two of each a pod).
	empty := true
	for range plugins {
		empty = false
		break
	}
	if empty {
		return nil
	}
	var results []event.PluginResult
	if timeout := c.bounded(ctx, point, state, func(ctx context.Context, state fwk.CycleState) {
		for _, pl := range plugins {
			if abandoned(ctx) != nil {
				return
			}
			c.plugin.Store(pl.Name())
			var v V
			s, nanos := call(pl.Name(), func() *fwk.Status {
				var s *fwk.Status
				v, s = run(ctx, state, pl)
				return s
			})
			r := result(pl.Name(), s, nanos)
			stop := then(pl, v, s, &r)
			results = append(results, r)
			if stop {
				return
			}
		}
	}); timeout != nil {
		return timeout
	}
	c.point(point, node, results)
	return nil
}

// statusOnly adapts a plugin call that returns nothing but a status to
// runPoint.
func statusOnly[T fwk.Plugin](run func(context.Context, fwk.CycleState, T) *fwk.Status) func(context.Context, fwk.CycleState, T) (struct{}, *fwk.Status) {
	return func(ctx context.Context, state fwk.CycleState, pl T) (struct{}, *fwk.Status) {
		return struct{}{}, run(ctx, state, pl)
	}
}

// pluginError turns a plugin's failure into its point's error, which names
// the plugin.
func pluginError(point, plugin string, s *fwk.Status) *fwk.Status {
	return fwk.AsStatus(fmt.Errorf("running %s plugin %q: %w", point, plugin, s.AsError())).WithPlugin(plugin)
}

// rejectedOrError is the status of a point that a plugin's failure stops: a
// rejection stays a rejection, anything else becomes an error.
func rejectedOrError(point, plugin string, s *fwk.Status) *fwk.Status {
	if s.IsRejected() {
		return s
	}
	return pluginError(point, plugin, s)
}

func always(*fwk.Status) bool { return true }

// inOrder runs an extension point whose plugins share one rule: a call
// either passes or stops the point, and the point's status is then that of
// the call (see rejectedOrError).
func inOrder[T fwk.Plugin](ctx context.Context, c *cycle, state fwk.CycleState, point, node string, plugins iter.Seq2[int, T], passes func(*fwk.Status) bool, run func(context.Context, fwk.CycleState, T) *fwk.Status) *fwk.Status {
	var status *fwk.Status
	if timeout := runPoint(ctx, c, state, point, node, plugins, statusOnly(run),
		func(pl T, _ struct{}, s *fwk.Status, _ *event.PluginResult) bool {
			if passes(s) {
				return false
			}
			status = rejectedOrError(point, pl.Name(), s)
			return true
		}); timeout != nil {
		return timeout
	}
	return status
}

// rejectors lists the plugins a diagnosis blames, sorted.
func rejectors(d *framework.Diagnosis) []string {
	if d == nil {
		return nil
	}
	out := sets.List(d.UnschedulablePlugins.Union(d.PendingPlugins))
	sort.Strings(out)
	return out
}
