package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/devices"
)

// apiTimeout bounds each call to the apiserver.
const apiTimeout = 30 * time.Second

// deleteNow deletes without a grace period: with --kubelets=false no kubelet
// would ever confirm a graceful deletion, and a pod would stay Terminating
// forever; with kubelets, the REST API's deletes still go at once, so that a
// lesson never waits on one.
var deleteNow = metav1.DeleteOptions{GracePeriodSeconds: new(int64)}

// LimitError refuses a create past MaxNodes or MaxPods.
type LimitError struct{ msg string }

func (e *LimitError) Error() string { return e.msg }

// CreateNode creates node with its status, filling in what a kubelet would
// report. The apiserver keeps a node's status on create (a kubelet
// registers its node so), so one call writes both: a simulated kubelet
// never sees the node without its figures.
func (c *Cluster) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if n := c.nodeCount.Load(); n >= int64(c.opts.MaxNodes) {
		return nil, &LimitError{fmt.Sprintf("the cluster holds %d nodes, the limit (--max-nodes %d): delete some first", n, c.opts.MaxNodes)}
	}
	if _, err := devices.Count(node); err != nil {
		return nil, &InvalidChangeError{err.Error()}
	}
	c.nodeDefaults(node)
	c.Own(node)
	if err := c.checkSize("node "+node.Name, node, 0); err != nil {
		return nil, err
	}
	return c.opts.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
}

// CreatePod creates pod, in the default namespace unless it names one. A pod
// that sets no termination grace period gets 0, so that a pod preemption
// evicts goes at once, with or without kubelets (kubectl's pods keep the
// apiserver's 30 s, which the kubelets cap at --max-grace-period).
func (c *Cluster) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if n := c.podCount.Load(); n >= int64(c.opts.MaxPods) {
		return nil, &LimitError{fmt.Sprintf("the cluster holds %d pods, the limit (--max-pods %d): delete some first", n, c.opts.MaxPods)}
	}
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		pod.Spec.TerminationGracePeriodSeconds = new(int64)
	}
	c.Own(pod)
	if err := c.CheckWrite(pod); err != nil {
		return nil, err
	}
	if err := c.checkSize("pod "+pod.Name, pod, 0); err != nil {
		return nil, err
	}
	return c.opts.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// CreatePriorityClass creates a PriorityClass, which pods name in
// spec.priorityClassName to get a priority (the apiserver refuses a bare
// spec.priority).
func (c *Cluster) CreatePriorityClass(ctx context.Context, pc *schedulingv1.PriorityClass) (*schedulingv1.PriorityClass, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	c.Own(pc)
	return c.opts.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
}

// Own marks an object minisched is about to create on a cluster it shares,
// and gives a pod (or a workload's pods) that names no scheduler
// minisched's.
func (c *Cluster) Own(obj metav1.Object) {
	if c.opts.Writes != WritesOwned {
		return
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[OwnerLabel] = "minisched"
	obj.SetLabels(labels)
	if spec := podSpecOf(obj); spec != nil && spec.SchedulerName == "" {
		spec.SchedulerName = c.opts.SchedulerName
	}
}

// nodeDefaults fills what a person typing a manifest by hand leaves out and a
// kubelet would report in a real cluster.
func (c *Cluster) nodeDefaults(node *v1.Node) {
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
	for name, q := range c.opts.NodeAllocatable {
		if _, ok := node.Status.Allocatable[name]; !ok {
			node.Status.Allocatable[name] = q.DeepCopy()
		}
		if _, ok := node.Status.Capacity[name]; !ok {
			node.Status.Capacity[name] = node.Status.Allocatable[name].DeepCopy()
		}
	}
	if len(node.Status.Conditions) == 0 {
		node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "MinischedNode",
			Message: "created by minisched with this status"}}
	}
}

// classWait bounds how long WaitForClass waits; the admission's cache is
// normally a few milliseconds behind.
const classWait = 30 * time.Second

// WaitForClass calls create, which creates a pod naming a PriorityClass the
// caller knows exists, again and again while the apiserver refuses the pod
// for that class: the Priority admission plugin looks classes up in an
// informer's cache, with no live read behind it, so a class created a
// moment ago is "not found" until the cache has it. Any other error is
// final, and so is that one after classWait or once ctx ends.
func WaitForClass(ctx context.Context, create func() error) error {
	delay := 10 * time.Millisecond
	deadline := time.Now().Add(classWait)
	for {
		err := create()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no PriorityClass with name") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return err
		}
		delay = min(2*delay, time.Second)
	}
}
