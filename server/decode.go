package server

import (
	"errors"
	"net/http"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minisched/manifest"
)

// decodeManifest decodes a request's manifest; a bad one is a 400, a wrong
// content type a 415.
func decodeManifest(data []byte, contentType string, into runtime.Object) error {
	err := manifest.Decode(data, contentType, into)
	var me *manifest.Error
	switch {
	case errors.As(err, &me) && me.Unsupported:
		return apiError(http.StatusUnsupportedMediaType, "%s", me.Msg)
	case errors.As(err, &me):
		return apiError(http.StatusBadRequest, "%s", me.Msg)
	}
	return err
}

// nodeDefaults fills what a person typing a manifest by hand leaves out and a
// kubelet would report in a real cluster.
func nodeDefaults(node *v1.Node) {
	// A kubelet labels its node with its hostname; topology rules on
	// kubernetes.io/hostname (anti-affinity, spread) need the label.
	if node.Labels[v1.LabelHostname] == "" {
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[v1.LabelHostname] = node.Name
	}
	if len(node.Status.Allocatable) == 0 && len(node.Status.Capacity) > 0 {
		node.Status.Allocatable = node.Status.Capacity.DeepCopy()
	}
	if len(node.Status.Capacity) == 0 && len(node.Status.Allocatable) > 0 {
		node.Status.Capacity = node.Status.Allocatable.DeepCopy()
	}
	// Either map may be given empty ({}) rather than left out.
	if node.Status.Allocatable == nil {
		node.Status.Allocatable = v1.ResourceList{}
	}
	if node.Status.Capacity == nil {
		node.Status.Capacity = v1.ResourceList{}
	}
	for name, q := range DefaultNodeAllocatable {
		if _, ok := node.Status.Allocatable[name]; !ok {
			node.Status.Allocatable[name] = q.DeepCopy()
		}
		if _, ok := node.Status.Capacity[name]; !ok {
			node.Status.Capacity[name] = node.Status.Allocatable[name].DeepCopy()
		}
	}
	if len(node.Status.Conditions) == 0 {
		node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "MinischedNode",
			Message: "created by minisched; no kubelet runs here"}}
	}
}
