package minisched_test

import (
	"fmt"
	"testing"
	"time"

	metricstestutil "k8s.io/component-base/metrics/testutil"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"minisched/event"
)

// timing is how long each scheduler took to settle after the steps: not
// compared, reported, since the queues may retry at different times.
type timing struct {
	mini, up time.Duration
	// worst is the step where the two differed most.
	worst              string
	worstMini, worstUp time.Duration
}

func (t *timing) add(step string, mini, up time.Duration) {
	t.mini += mini
	t.up += up
	if (mini - up).Abs() > (t.worstMini - t.worstUp).Abs() {
		t.worst, t.worstMini, t.worstUp = step, mini, up
	}
}

func (t *timing) merge(o timing, seed int64) {
	t.add(fmt.Sprintf("seed %d, %s", seed, o.worst), o.worstMini, o.worstUp)
	t.mini += o.mini - o.worstMini
	t.up += o.up - o.worstUp
}

func (t *timing) String() string {
	return fmt.Sprintf("time to settle after the steps: minisched %v, kube-scheduler %v; widest gap %s: minisched %v, kube-scheduler %v",
		t.mini.Round(time.Millisecond), t.up.Round(time.Millisecond), t.worst, t.worstMini.Round(time.Millisecond), t.worstUp.Round(time.Millisecond))
}

// attemptsMetric reads kube-scheduler's PodSchedulingAttempts histogram,
// which only kube-scheduler observes in this process: minisched keeps no
// such metric.
type attemptsMetric struct {
	count uint64
	sum   float64
}

func readAttemptsMetric(t *testing.T) attemptsMetric {
	t.Helper()
	count, err := metricstestutil.GetHistogramMetricCount(schedmetrics.PodSchedulingAttempts.ObserverMetric)
	if err != nil {
		t.Fatalf("reading kube-scheduler's attempts metric: %v", err)
	}
	sum, err := metricstestutil.GetHistogramMetricValue(schedmetrics.PodSchedulingAttempts.ObserverMetric)
	if err != nil {
		t.Fatalf("reading kube-scheduler's attempts metric: %v", err)
	}
	return attemptsMetric{count: count, sum: sum}
}

// figures are what one seed, or all of them, compared.
type figures struct {
	pods, bound, pending, deleted            int
	nodesAgree                               int
	pendingSeen, pluginsAgree, attemptsAgree int
	boundAttempts, boundAttemptsAgree        int
	ties                                     int
	stories                                  storyFigures
	diverged                                 int
	seed                                     int64
	timing                                   timing
}

type storyFigures struct {
	preemptions, preemptionsAgree, nominatedFirst int
	// slowVolumes: pods whose volume took over 30 s to bind (one seed).
	slowVolumes, slowVolumesAgree int
}

func (d *diff) figures() *figures {
	f := &figures{seed: d.seed, stories: d.stories}
	if d.diverged {
		f.diverged = 1
	}
	mini, up := d.settle("at the end")
	for _, name := range d.created {
		tr := d.tracks[name]
		f.pods++
		m, inMini := mini[name]
		u, inUp := up[name]
		switch {
		case !inMini && !inUp:
			f.deleted++
		case inMini && inUp && !m.pending() && !u.pending():
			f.bound++
		case inMini && inUp && m.pending() && u.pending():
			f.pending++
		}
		if tr.nodeOK && inMini == inUp && m.Node == u.Node {
			f.nodesAgree++
		}
		if tr.boundAttempts {
			f.boundAttempts++
			if tr.boundAttemptsOK {
				f.boundAttemptsAgree++
			}
		}
		if tr.pendingSeen {
			f.pendingSeen++
			if tr.pluginsOK {
				f.pluginsAgree++
			}
			if tr.attemptsOK {
				f.attemptsAgree++
			}
		}
	}
	for _, name := range d.created {
		for _, e := range d.h.log.find(name, func(e event.Event) bool { return e.Kind == event.KindCycleEnd }) {
			if e.CycleEnd.Result == event.ResultScheduled && len(e.CycleEnd.Ties) > 0 {
				f.ties++
			}
		}
	}
	f.timing = d.timing
	return f
}

func (f *figures) add(o *figures) {
	f.pods += o.pods
	f.bound += o.bound
	f.pending += o.pending
	f.deleted += o.deleted
	f.nodesAgree += o.nodesAgree
	f.pendingSeen += o.pendingSeen
	f.pluginsAgree += o.pluginsAgree
	f.attemptsAgree += o.attemptsAgree
	f.boundAttempts += o.boundAttempts
	f.boundAttemptsAgree += o.boundAttemptsAgree
	f.ties += o.ties
	f.stories.preemptions += o.stories.preemptions
	f.stories.preemptionsAgree += o.stories.preemptionsAgree
	f.stories.nominatedFirst += o.stories.nominatedFirst
	f.stories.slowVolumes += o.stories.slowVolumes
	f.stories.slowVolumesAgree += o.stories.slowVolumesAgree
	f.timing.merge(o.timing, o.seed)
	f.diverged += o.diverged
}

func (f *figures) String() string {
	return fmt.Sprintf("%d pods compared (at the end %d bound, %d pending, %d deleted by preemption); "+
		"nodes agree for %d/%d (%d placements among equally scored nodes); "+
		"attempts that bound a pod agree for %d/%d; "+
		"of %d pods seen pending, rejecting plugins agree for %d and attempts for %d; "+
		"preemptions with the same victims and node %d/%d; nominated node taken first by kube-scheduler %d times; "+
		"pods bound on the same node after a volume slower than 30 s %d/%d; seeds that diverged %d",
		f.pods, f.bound, f.pending, f.deleted, f.nodesAgree, f.pods, f.ties,
		f.boundAttemptsAgree, f.boundAttempts,
		f.pendingSeen, f.pluginsAgree, f.attemptsAgree,
		f.stories.preemptionsAgree, f.stories.preemptions, f.stories.nominatedFirst,
		f.stories.slowVolumesAgree, f.stories.slowVolumes, f.diverged) + "; " + f.timing.String()
}
