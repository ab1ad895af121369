package cluster

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ForbiddenError refuses a write to a cluster minisched shares that its
// policy does not allow.
type ForbiddenError struct{ msg string }

func (e *ForbiddenError) Error() string { return e.msg }

// CheckWrite holds what minisched is about to create on a cluster it
// shares (--allow-writes) to what a lesson needs, and no more: namespaced
// objects only in Options.Namespaces; pods, and workloads' pod templates,
// unbound and for minisched's scheduler (Own fills in its name) and, unless
// Options.HostAccess, without the host's namespaces or paths. On its own
// cluster everything passes.
func (c *Cluster) CheckWrite(obj metav1.Object) error {
	if c.opts.Writes != WritesOwned {
		return nil
	}
	if ns, ok := obj.(*v1.Namespace); ok {
		return c.inNamespaces("namespace "+ns.Name, ns.Name)
	}
	if ns := obj.GetNamespace(); ns != "" {
		if err := c.inNamespaces(fmt.Sprintf("%s/%s", ns, obj.GetName()), ns); err != nil {
			return err
		}
	}
	if spec := podSpecOf(obj); spec != nil {
		return c.podAllowed(fmt.Sprintf("%s %s", kindOf(obj), obj.GetName()), spec)
	}
	return nil
}

// podSpecOf returns the spec of a pod, or of a workload's pod template.
func podSpecOf(obj metav1.Object) *v1.PodSpec {
	switch o := obj.(type) {
	case *v1.Pod:
		return &o.Spec
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec
	case *appsv1.DaemonSet:
		return &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &o.Spec.Template.Spec
	case *appsv1.ReplicaSet:
		return &o.Spec.Template.Spec
	}
	return nil
}

func kindOf(obj metav1.Object) string {
	if _, ok := obj.(*v1.Pod); ok {
		return "pod"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1.")
}

func (c *Cluster) inNamespaces(what, namespace string) error {
	if slices.Contains(c.opts.Namespaces, namespace) {
		return nil
	}
	return &ForbiddenError{fmt.Sprintf("%s: minisched writes to this shared cluster only in the namespaces %s (--allow-writes-in)", what, strings.Join(c.opts.Namespaces, ", "))}
}

func (c *Cluster) podAllowed(what string, spec *v1.PodSpec) error {
	if spec.NodeName != "" {
		return &ForbiddenError{fmt.Sprintf("%s names spec.nodeName %s: on a shared cluster minisched creates pods unbound, for its scheduler to place", what, spec.NodeName)}
	}
	if name := spec.SchedulerName; name != "" && name != c.opts.SchedulerName {
		return &ForbiddenError{fmt.Sprintf("%s names schedulerName %s: on a shared cluster minisched creates pods for its own scheduler, %s (leave the field out)", what, name, c.opts.SchedulerName)}
	}
	if c.opts.HostAccess {
		return nil
	}
	var host []string
	if spec.HostNetwork {
		host = append(host, "hostNetwork")
	}
	if spec.HostPID {
		host = append(host, "hostPID")
	}
	if spec.HostIPC {
		host = append(host, "hostIPC")
	}
	for _, vol := range spec.Volumes {
		if vol.HostPath != nil {
			host = append(host, "the hostPath volume "+vol.Name)
		}
	}
	if len(host) > 0 {
		return &ForbiddenError{fmt.Sprintf("%s asks for %s: on a shared cluster minisched refuses the host's namespaces and paths unless --allow-host-access", what, strings.Join(host, ", "))}
	}
	return nil
}
