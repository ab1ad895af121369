package minisched

// The call runner: every plugin call is timed, a panic becomes an Error
// status, and a point that outlives the cycle's timeout is abandoned.

import (
	"context"
	"errors"
	"fmt"
	"time"

	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// call runs one plugin call, times it, and turns a panic into an Error
// status: a broken plugin fails the pod's cycle, never the scheduler.
func call(plugin string, f func() *fwk.Status) (status *fwk.Status, nanos int64) {
	start := clock()
	status, end := callFrom(start, plugin, f)
	return status, end - start
}

// callFrom is call for a run of calls, one after another: start is when
// this call began (the previous one's end), and it returns when it ended,
// which saves reading the clock twice per call on thousands of nodes.
func callFrom(start int64, plugin string, f func() *fwk.Status) (status *fwk.Status, end int64) {
	defer func() {
		if r := recover(); r != nil {
			status = fwk.AsStatus(fmt.Errorf("plugin %s panicked: %v", plugin, r))
		}
		if status != nil {
			status.SetPlugin(plugin)
		}
		end = clock()
	}()
	return f(), 0
}

// epoch anchors clock.
var epoch = time.Now()

// clock reads the monotonic clock alone, at half the cost of time.Now: Filter
// and Score time every plugin on every node, thousands of calls per cycle.
func clock() int64 { return int64(time.Since(epoch)) }

func result(plugin string, status *fwk.Status, nanos int64) event.PluginResult {
	return event.PluginResult{Plugin: plugin, Code: int(status.Code()), Reason: status.Message(), Nanos: nanos}
}

// bounded runs one extension point and gives up on it after its timeout
// (limit): a plugin that hangs fails this pod's cycle with an error, and the
// scheduler moves on. Go cannot stop the goroutine left behind, so bounded
// cuts it off from the cycle instead:
//   - f runs with a context that is cancelled at the timeout, so plugins
//     that watch it return, and f's loops call no further plugin once
//     abandoned says so (the snapshot's nodes are the next cycle's);
//   - f runs with a cycle state of its own (see ownState): what its plugins
//     do there reaches state only when f returns in time.
//
// The caller may read the variables f writes only when bounded returned nil:
// after a timeout they belong to the abandoned goroutine.
func (c *cycle) bounded(ctx context.Context, point string, state fwk.CycleState, f func(context.Context, fwk.CycleState)) *fwk.Status {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The last point's plugin must not take the blame for this one's hang.
	c.plugin.Store("")
	own := newOwnState(state)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx, own)
	}()
	limit := c.limit(point)
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
		own.commit(state)
		return nil
	case <-timer.C:
		who := point
		if p, _ := c.plugin.Load().(string); p != "" {
			who = point + " plugin " + p
		}
		err := fmt.Errorf("%s did not return within %v", who, limit)
		cancel(fmt.Errorf("%w: %w", errAbandoned, err))
		return fwk.AsStatus(err)
	}
}

// limit is how long point may take: the binding cycle's points wait for
// volumes and devices as upstream's do, the others are not meant to wait.
func (c *cycle) limit(point string) time.Duration {
	switch point {
	case "PreBindPreFlight", "PreBind", "Bind", "PostBind":
		return c.binding
	}
	return c.timeout
}

// errAbandoned is the cause of the context bounded cancels at the timeout.
var errAbandoned = errors.New("abandoned by the scheduler")

// abandoned returns an error once bounded gave up on the extension point
// that ctx was made for, and nil before. The loops that call plugins ask it
// before each call. A scheduler that stops cancels ctx too, but its loops go
// on as upstream's do: only an abandoned point is cut short.
func abandoned(ctx context.Context) *fwk.Status {
	if ctx.Err() == nil {
		return nil
	}
	if err := context.Cause(ctx); errors.Is(err, errAbandoned) {
		return fwk.AsStatus(err)
	}
	return nil
}
