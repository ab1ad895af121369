package minisched

// Scheduler extenders: HTTP webhooks outside the framework, built with
// upstream's own client (HTTPExtender) and called where kube-scheduler calls
// them (schedule_one.go): filter after the Filter plugins, prioritize beside
// the Score plugins, bind before the Bind plugins, and ProcessPreemption from
// within DefaultPreemption. Every call is timed and reported.

import (
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"

	"minisched/event"
)

// extenders are the configuration's extenders, in the order upstream calls
// them: the ignorable ones last.
type extenders struct {
	list []fwk.Extender
	// current is the cycle under way, to which a call made from within a
	// plugin (DefaultPreemption's ProcessPreemption) is reported: cycles run
	// one at a time.
	current atomic.Pointer[cycle]
	// random breaks ties between nodes an extender scored, as upstream's
	// Randomizer does; seeded, with --seed, so that runs repeat.
	mu     sync.Mutex
	random *rand.Rand
}

// newExtenders builds the configuration's extenders as upstream's
// buildExtenders does, and returns the profiles the framework is to use:
// the resources an extender manages and the scheduler is to ignore go into
// every profile's NodeResourcesFit args (ignoredResources). cfg itself is
// left as the user wrote it.
func newExtenders(cfg *config.KubeSchedulerConfiguration, seed int64) (*extenders, []config.KubeSchedulerProfile, error) {
	profiles := cfg.Profiles
	if len(cfg.Extenders) == 0 {
		return &extenders{}, profiles, nil
	}
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	e := &extenders{random: rand.New(rand.NewSource(seed))}
	var ignorable []fwk.Extender
	var ignored []string
	for i := range cfg.Extenders {
		spec := cfg.Extenders[i] // NewHTTPExtender fills in a default timeout
		x, err := kubescheduler.NewHTTPExtender(&spec)
		if err != nil {
			return nil, nil, fmt.Errorf("extender %s: %w", spec.URLPrefix, err)
		}
		if x.IsIgnorable() {
			ignorable = append(ignorable, x)
		} else {
			e.list = append(e.list, x)
		}
		for _, r := range spec.ManagedResources {
			if r.IgnoredByScheduler {
				ignored = append(ignored, r.Name)
			}
		}
	}
	e.list = append(e.list, ignorable...)
	for i, x := range e.list {
		e.list[i] = &reported{Extender: x, to: e}
	}
	if len(ignored) == 0 {
		return e, profiles, nil
	}
	profiles = make([]config.KubeSchedulerProfile, len(cfg.Profiles))
	for i := range cfg.Profiles {
		p := cfg.Profiles[i].DeepCopy()
		found := false
		for k := range p.PluginConfig {
			if p.PluginConfig[k].Name != noderesources.Name {
				continue
			}
			args, ok := p.PluginConfig[k].Args.(*config.NodeResourcesFitArgs)
			if !ok {
				return nil, nil, fmt.Errorf("want args to be of type NodeResourcesFitArgs, got %T", p.PluginConfig[k].Args)
			}
			args.IgnoredResources = ignored
			found = true
		}
		if !found {
			return nil, nil, fmt.Errorf("can't find NodeResourcesFitArgs in plugin config")
		}
		profiles[i] = *p
	}
	return e, profiles, nil
}

// filtering says whether an extender filters nodes, and scoring whether one
// prioritizes them: with either, Filter looks for as many nodes as with Score
// plugins (upstream's hasExtenderFilters and hasScoring).
func (e *extenders) filtering() bool {
	for _, x := range e.list {
		if x.IsFilter() {
			return true
		}
	}
	return false
}

func (e *extenders) scoring() bool {
	for _, x := range e.list {
		if x.IsPrioritizer() {
			return true
		}
	}
	return false
}

// prioritizers are the extenders that prioritize pod's nodes, in order.
func (e *extenders) prioritizers(pod *v1.Pod) []fwk.Extender {
	var out []fwk.Extender
	for _, x := range e.list {
		if x.IsPrioritizer() && x.IsInterested(pod) {
			out = append(out, x)
		}
	}
	return out
}

// filter runs the filter extenders one after the other over the feasible
// nodes, as upstream's findNodesThatPassExtenders: the nodes an extender
// turns away go into the diagnosis, the others on to the next. An error
// ends the cycle, unless the extender is ignorable.
func (c *cycle) extenderFilter(pod *v1.Pod, feasible []fwk.NodeInfo, d *framework.Diagnosis) ([]fwk.NodeInfo, *fwk.Status) {
	before := len(feasible)
	for _, x := range c.extenders.list {
		if len(feasible) == 0 {
			break
		}
		if !x.IsFilter() || !x.IsInterested(pod) {
			continue
		}
		call := event.ExtenderCall{Extender: x.Name(), Verb: "filter", Nodes: len(feasible)}
		start := time.Now()
		kept, failed, unresolvable, err := x.Filter(pod, feasible)
		call.Nanos = time.Since(start).Nanoseconds()
		if err != nil {
			call.Error, call.Ignored = err.Error(), x.IsIgnorable()
			c.extenderCall(call)
			if x.IsIgnorable() {
				c.logger.Info("Skipping extender as it returned error and has ignorable flag set", "extender", x.Name(), "err", err)
				continue
			}
			return nil, fwk.AsStatus(err)
		}
		for node, msg := range unresolvable {
			d.NodeToStatus.Set(node, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg))
		}
		for node, msg := range failed {
			if _, both := unresolvable[node]; !both {
				d.NodeToStatus.Set(node, fwk.NewStatus(fwk.Unschedulable, msg))
			}
		}
		call.Passed = len(kept)
		call.Failed, call.FailedCount = someReasons(failed, unresolvable)
		call.Unresolvable, call.UnresolvableCount = someReasons(unresolvable, nil)
		c.extenderCall(call)
		feasible = kept
	}
	if len(feasible) != before {
		// No extender registers events: upstream blames a fake plugin
		// whose hint queues the pod on any event.
		if d.UnschedulablePlugins == nil {
			d.UnschedulablePlugins = sets.New[string]()
		}
		d.UnschedulablePlugins.Insert(framework.ExtenderName)
	}
	return feasible, nil
}

// someReasons keeps at most event.MaxExtenderReasons of the reasons, by
// node name, leaving out the nodes in skip, and counts them all.
func someReasons(reasons, skip extenderv1.FailedNodesMap) (map[string]string, int) {
	names := make([]string, 0, len(reasons))
	for node := range reasons {
		if _, ok := skip[node]; !ok {
			names = append(names, node)
		}
	}
	if len(names) == 0 {
		return nil, 0
	}
	sort.Strings(names)
	out := make(map[string]string, min(len(names), event.MaxExtenderReasons))
	for _, node := range names[:min(len(names), event.MaxExtenderReasons)] {
		out[node] = reasons[node]
	}
	return out, len(names)
}

// prioritize runs the prioritizers on the nodes in parallel, as upstream,
// into their columns of res (k plugin columns first): raw is the
// extender's score, normalized times MaxNodeScore/MaxExtenderPriority, so
// that the weighted score is upstream's finalscore. A failed call leaves
// its column at zero, as upstream ignores it. It returns the rows some
// extender scored.
func (c *cycle) extenderPrioritize(pod *v1.Pod, nodes []fwk.NodeInfo, xs []fwk.Extender, res *event.ScoreResults, k int) []bool {
	scored := make([]bool, len(nodes))
	row := make(map[string]int, len(nodes))
	for i, ni := range nodes {
		row[ni.Node().Name] = i
	}
	cols := len(res.Plugins)
	var wg sync.WaitGroup
	var mu sync.Mutex // scored is shared
	for j, x := range xs {
		wg.Add(1)
		go func(col int, x fwk.Extender) {
			defer wg.Done()
			call := event.ExtenderCall{Extender: x.Name(), Verb: "prioritize", Nodes: len(nodes)}
			start := time.Now()
			list, weight, err := x.Prioritize(pod, nodes)
			call.Nanos, call.Weight = time.Since(start).Nanoseconds(), weight
			d := &res.Plugins[col]
			d.Nanos, d.Weight = call.Nanos, weight
			if err != nil {
				c.logger.V(5).Info("Failed to run extender's priority function. No score given by this extender.", "error", err, "extender", x.Name())
				call.Error, call.Ignored = err.Error(), true
				d.Code, d.Reason = int(fwk.Error), err.Error()
				c.extenderCall(call)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, hp := range *list {
				if i, ok := row[hp.Host]; ok {
					res.Raw[i*cols+col] = hp.Score
					res.Normalized[i*cols+col] = hp.Score * (fwk.MaxNodeScore / extenderv1.MaxExtenderPriority)
					scored[i] = true
				}
			}
			call.Passed = len(*list)
			c.extenderCall(call)
		}(k+j, x)
	}
	wg.Wait()
	return scored
}

// randomize gives the nodes an extender scored a random tie-breaker, as
// upstream does (and only to them): of equal totals, the heap then picks
// one at random.
func (e *extenders) randomize(totals []fwk.NodePluginScores, scored []bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range totals {
		if scored[i] {
			totals[i].Randomizer = e.random.Int()
		}
	}
}

// bind lets the first binder extender interested in the pod bind it, as
// upstream's extendersBinding: it then stands in for the Bind plugins.
func (c *cycle) extenderBind(pod *v1.Pod, node string) (bound bool, status *fwk.Status) {
	for _, x := range c.extenders.list {
		if !x.IsBinder() || !x.IsInterested(pod) {
			continue
		}
		call := event.ExtenderCall{Extender: x.Name(), Verb: "bind", Nodes: 1, Node: node}
		start := time.Now()
		err := x.Bind(&v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     v1.ObjectReference{Kind: "Node", Name: node},
		})
		call.Nanos = time.Since(start).Nanoseconds()
		if err != nil {
			call.Error = err.Error()
		} else {
			call.Passed = 1
		}
		c.extenderCall(call)
		return true, fwk.AsStatus(err)
	}
	return false, nil
}

// extenderCall reports one call as the cycle's.
func (c *cycle) extenderCall(call event.ExtenderCall) {
	c.emit(event.Event{Kind: event.KindExtender, Extender: &call})
}

// reported is an extender whose ProcessPreemption, which DefaultPreemption
// calls from within PostFilter, reports itself to the cycle under way.
type reported struct {
	fwk.Extender
	to *extenders
}

func (r *reported) ProcessPreemption(pod *v1.Pod, victims map[string]*extenderv1.Victims, nodes fwk.NodeInfoLister) (map[string]*extenderv1.Victims, error) {
	start := time.Now()
	out, err := r.Extender.ProcessPreemption(pod, victims, nodes)
	if c := r.to.current.Load(); c != nil {
		call := event.ExtenderCall{Extender: r.Name(), Verb: "preempt", Nodes: len(victims), Passed: len(out), Nanos: time.Since(start).Nanoseconds()}
		if err != nil {
			call.Error, call.Ignored = err.Error(), r.IsIgnorable()
		}
		c.extenderCall(call)
	}
	return out, err
}

// begin and end mark the cycle under way for the calls made from within
// plugins.
func (e *extenders) begin(c *cycle) { e.current.Store(c) }
func (e *extenders) end(c *cycle)   { e.current.CompareAndSwap(c, nil) }
