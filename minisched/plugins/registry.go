// Package plugins holds minisched's learning plugins, the ones
// mini-kube-scheduler builds lesson by lesson. The upstream in-tree plugins
// come from the in-tree registry beside them.
package plugins

import (
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"minisched/minisched/plugins/nodenumber"
	"minisched/minisched/plugins/permitdelay"
	"minisched/minisched/plugins/random"
)

// Registry returns a factory for each learning plugin.
func Registry() frameworkruntime.Registry {
	return frameworkruntime.Registry{
		nodenumber.Name:  nodenumber.New,
		permitdelay.Name: permitdelay.New,
		random.Name:      random.New,
	}
}
