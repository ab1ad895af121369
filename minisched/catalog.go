package minisched

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/minisched/plugins"
	"minisched/minisched/schedconfig"
)

// registry is every plugin a configuration may enable: the in-tree ones,
// the learning plugins and the user's own.
func registry(outOfTree frameworkruntime.Registry) (frameworkruntime.Registry, error) {
	r := frameworkplugins.NewInTreeRegistry()
	if err := r.Merge(plugins.Registry()); err != nil {
		return nil, fmt.Errorf("registering learning plugins: %w", err)
	}
	if err := r.Merge(outOfTree); err != nil {
		return nil, fmt.Errorf("registering out-of-tree plugins: %w", err)
	}
	return r, nil
}

// PluginInfo is what a plugin offers: the extension points it implements
// and the cluster events it registers to have pods it rejected tried again
// (their labels, as queue moves name them).
type PluginInfo struct {
	Name            string   `json:"name"`
	ExtensionPoints []string `json:"extensionPoints"`
	Events          []string `json:"events,omitempty"`
}

// Catalog describes every plugin a configuration may enable, whether
// enabled or not. The first call makes an instance of each, with
// kube-scheduler's default arguments and the running framework as its
// handle, and asks it what it implements, as the framework does when it
// expands multiPoint; later calls answer from that.
func (s *Scheduler) Catalog(ctx context.Context) ([]PluginInfo, error) {
	s.catalog.once.Do(func() { s.catalog.list, s.catalog.err = s.describePlugins(ctx) })
	return s.catalog.list, s.catalog.err
}

func (s *Scheduler) describePlugins(ctx context.Context) ([]PluginInfo, error) {
	reg, err := registry(s.opts.OutOfTree)
	if err != nil {
		return nil, err
	}
	handle := s.order[0]
	defaults, err := schedconfig.Default(handle.name)
	if err != nil {
		return nil, err
	}
	args := map[string]runtime.Object{}
	for _, pc := range defaults.Profiles[0].PluginConfig {
		args[pc.Name] = pc.Args
	}
	var out []PluginInfo
	for name, factory := range reg {
		p, err := factory(ctx, args[name], handle.fw)
		if err != nil {
			// A plugin that needs arguments of its own shows, without what
			// it implements.
			out = append(out, PluginInfo{Name: name, ExtensionPoints: []string{}})
			continue
		}
		info := PluginInfo{Name: name, ExtensionPoints: implemented(p)}
		if ext, ok := p.(fwk.EnqueueExtensions); ok {
			events, err := ext.EventsToRegister(ctx)
			if err == nil {
				for _, e := range events {
					info.Events = append(info.Events, labels(e.Event)...)
				}
			}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// labels names the cluster events ev stands for, one per action, as queue
// moves name the event that made them (NodeAdd, NodeUpdateNodeTaint...); a
// registration for every update is one "Update" (DeviceClassUpdate), which
// stands for every NodeUpdate... label.
func labels(ev fwk.ClusterEvent) []string {
	if ev.CustomLabel != "" {
		return []string{ev.CustomLabel}
	}
	label := func(a fwk.ActionType) string { return fwk.ClusterEvent{Resource: ev.Resource, ActionType: a}.Label() }
	if ev.ActionType&fwk.All == fwk.All {
		return []string{label(fwk.All)}
	}
	var out []string
	for _, a := range []fwk.ActionType{fwk.Add, fwk.Delete} {
		if ev.ActionType&a != 0 {
			out = append(out, label(a))
		}
	}
	// Every kind of update is "Update", as the plugin registered it: most
	// update bits (UpdatePodLabel...) mean nothing for most resources.
	if ev.ActionType&fwk.Update == fwk.Update {
		return append(out, label(fwk.Update))
	}
	for bit := fwk.ActionType(1); bit != 0 && bit <= ev.ActionType; bit <<= 1 {
		if ev.ActionType&bit&fwk.Update != 0 && bit.String() != "" {
			out = append(out, label(bit))
		}
	}
	return out
}

// implemented lists the extension points p implements, in the order a pod
// meets them.
func implemented(p fwk.Plugin) []string {
	points := []string{}
	for _, ep := range []struct {
		name string
		ok   bool
	}{
		{"PreEnqueue", is[fwk.PreEnqueuePlugin](p)}, {"QueueSort", is[fwk.QueueSortPlugin](p)},
		{"PreFilter", is[fwk.PreFilterPlugin](p)}, {"Filter", is[fwk.FilterPlugin](p)},
		{"PostFilter", is[fwk.PostFilterPlugin](p)}, {"PreScore", is[fwk.PreScorePlugin](p)},
		{"Score", is[fwk.ScorePlugin](p)}, {"Reserve", is[fwk.ReservePlugin](p)},
		{"Permit", is[fwk.PermitPlugin](p)}, {"PreBind", is[fwk.PreBindPlugin](p)},
		{"Bind", is[fwk.BindPlugin](p)}, {"PostBind", is[fwk.PostBindPlugin](p)},
	} {
		if ep.ok {
			points = append(points, ep.name)
		}
	}
	return points
}

func is[T any](p fwk.Plugin) bool {
	_, ok := p.(T)
	return ok
}
