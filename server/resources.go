package server

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/labstack/echo/v4"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// DefaultNodeAllocatable is what a node gets for each resource its manifest
// does not state: no kubelet runs here to report the real figures.
var DefaultNodeAllocatable = v1.ResourceList{
	v1.ResourceCPU:    resource.MustParse("4"),
	v1.ResourceMemory: resource.MustParse("16Gi"),
	v1.ResourcePods:   resource.MustParse("110"),
}

// apiTimeout bounds each call to the apiserver made for one request.
const apiTimeout = 30 * time.Second

// deleteNow deletes without a grace period: no kubelet will ever confirm a
// graceful deletion here, and a pod would stay Terminating forever.
var deleteNow = metav1.DeleteOptions{GracePeriodSeconds: new(int64)}

func (s *Server) apiContext(c echo.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request().Context(), apiTimeout)
}

type list[T any] struct {
	Items []T `json:"items"`
}

// listNodes answers, on a real cluster, from the server's informer cache:
// dashboards polling it never load the apiserver or starve the scheduler's
// client. On minisched's own cluster it asks the apiserver, so that a list
// right after a create shows what was created.
func (s *Server) listNodes(c echo.Context) error {
	items := []v1.Node{} // [] when empty, never null
	if s.opts.Writes == WritesAll {
		ctx, cancel := s.apiContext(c)
		defer cancel()
		nodes, err := s.opts.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		items = append(items, nodes.Items...)
	} else {
		nodes, err := s.cluster.nodes.List(labels.Everything())
		if err != nil {
			return err
		}
		for _, n := range nodes {
			items = append(items, *n)
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return c.JSON(http.StatusOK, list[v1.Node]{Items: items})
}

func (s *Server) getNode(c echo.Context) error {
	ctx, cancel := s.apiContext(c)
	defer cancel()
	node, err := s.opts.Client.CoreV1().Nodes().Get(ctx, c.Param("name"), metav1.GetOptions{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, node)
}

// createNode creates a node from a manifest. Status is a subresource the
// apiserver ignores on create, so capacity and allocatable are written in a
// second call; a node whose status cannot be written is deleted again.
func (s *Server) createNode(c echo.Context) error {
	data, err := readBody(c)
	if err != nil {
		return err
	}
	node := &v1.Node{}
	if err := decodeManifest(data, c.Request().Header.Get(echo.HeaderContentType), node); err != nil {
		return err
	}
	created, err := s.CreateNode(c.Request().Context(), node)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, created)
}

// CreateNode creates node with its status, filling in defaults for what it
// leaves out.
func (s *Server) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if n := s.cluster.count(countNodes); n >= s.opts.MaxNodes {
		return nil, apiError(http.StatusUnprocessableEntity, "the cluster holds %d nodes, the limit (--max-nodes %d): delete some first", n, s.opts.MaxNodes)
	}
	nodeDefaults(node)
	s.own(node)
	status := node.Status
	created, err := s.opts.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	created.Status = status
	updated, err := s.opts.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		_ = s.opts.Client.CoreV1().Nodes().Delete(context.WithoutCancel(ctx), created.Name, metav1.DeleteOptions{})
		return nil, err
	}
	return updated, nil
}

func (s *Server) deleteNode(c echo.Context) error {
	return deleteObject(s, c, "node", c.Param("name"), s.opts.Client.CoreV1().Nodes(), metav1.DeleteOptions{})
}

// listPods answers as listNodes does.
func (s *Server) listPods(c echo.Context) error {
	items := []v1.Pod{}
	if s.opts.Writes == WritesAll {
		ctx, cancel := s.apiContext(c)
		defer cancel()
		pods, err := s.opts.Client.CoreV1().Pods(c.QueryParam("namespace")).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		items = append(items, pods.Items...)
	} else {
		pods, err := s.cluster.pods.Pods(c.QueryParam("namespace")).List(labels.Everything())
		if err != nil {
			return err
		}
		for _, p := range pods {
			items = append(items, *p)
		}
	}
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	return c.JSON(http.StatusOK, list[v1.Pod]{Items: items})
}

func (s *Server) getPod(c echo.Context) error {
	ctx, cancel := s.apiContext(c)
	defer cancel()
	pod, err := s.opts.Client.CoreV1().Pods(c.Param("namespace")).Get(ctx, c.Param("name"), metav1.GetOptions{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pod)
}

func (s *Server) createPod(c echo.Context) error {
	data, err := readBody(c)
	if err != nil {
		return err
	}
	pod := &v1.Pod{}
	if err := decodeManifest(data, c.Request().Header.Get(echo.HeaderContentType), pod); err != nil {
		return err
	}
	created, err := s.CreatePod(c.Request().Context(), pod)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, created)
}

// CreatePod creates pod, in the default namespace unless it names one. A pod
// that sets no termination grace period gets 0: no kubelet runs here to end
// it gracefully, and a pod preemption evicts must go at once.
func (s *Server) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if n := s.cluster.count(countPods); n >= s.opts.MaxPods {
		return nil, apiError(http.StatusUnprocessableEntity, "the cluster holds %d pods, the limit (--max-pods %d): delete some first", n, s.opts.MaxPods)
	}
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		pod.Spec.TerminationGracePeriodSeconds = new(int64)
	}
	s.own(pod)
	return s.opts.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

func (s *Server) deletePod(c echo.Context) error {
	return deleteObject(s, c, "pod", c.Param("name"), s.opts.Client.CoreV1().Pods(c.Param("namespace")), deleteNow)
}

func (s *Server) listPriorityClasses(c echo.Context) error {
	ctx, cancel := s.apiContext(c)
	defer cancel()
	classes, err := s.opts.Client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	sort.Slice(classes.Items, func(i, j int) bool { return classes.Items[i].Value > classes.Items[j].Value })
	return c.JSON(http.StatusOK, list[schedulingv1.PriorityClass]{Items: classes.Items})
}

// createPriorityClass creates a PriorityClass, which pods name in
// spec.priorityClassName to get a priority (the apiserver refuses a bare
// spec.priority).
func (s *Server) createPriorityClass(c echo.Context) error {
	data, err := readBody(c)
	if err != nil {
		return err
	}
	pc := &schedulingv1.PriorityClass{}
	if err := decodeManifest(data, c.Request().Header.Get(echo.HeaderContentType), pc); err != nil {
		return err
	}
	ctx, cancel := s.apiContext(c)
	defer cancel()
	s.own(pc)
	created, err := s.opts.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, created)
}

func (s *Server) deletePriorityClass(c echo.Context) error {
	return deleteObject(s, c, "PriorityClass", c.Param("name"), s.opts.Client.SchedulingV1().PriorityClasses(), metav1.DeleteOptions{})
}
