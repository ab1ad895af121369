package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minisched/cluster"
)

// apiTimeout bounds each call to the apiserver made for one request.
const apiTimeout = 30 * time.Second

func (s *Server) apiContext(c echo.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request().Context(), apiTimeout)
}

type list[T any] struct {
	Items []T `json:"items"`
}

// listNodes answers, on a real cluster, from the watch's cache: dashboards
// polling it never load the apiserver or starve the scheduler's client. On
// minisched's own cluster it asks the apiserver, so that a list right after
// a create shows what was created.
func (s *Server) listNodes(c echo.Context) error {
	items := []v1.Node{} // [] when empty, never null
	if s.cluster.Writes() == cluster.WritesAll {
		ctx, cancel := s.apiContext(c)
		defer cancel()
		nodes, err := s.opts.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		items = append(items, nodes.Items...)
		sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	} else {
		for _, n := range s.cluster.Nodes() {
			items = append(items, *n)
		}
	}
	return c.JSON(http.StatusOK, list[v1.Node]{Items: items})
}

// listPods answers as listNodes does.
func (s *Server) listPods(c echo.Context) error {
	items := []v1.Pod{}
	if s.cluster.Writes() == cluster.WritesAll {
		ctx, cancel := s.apiContext(c)
		defer cancel()
		pods, err := s.opts.Client.CoreV1().Pods(c.QueryParam("namespace")).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		items = append(items, pods.Items...)
		sort.Slice(items, func(i, j int) bool {
			a, b := items[i], items[j]
			return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
		})
	} else {
		for _, p := range s.cluster.Pods(c.QueryParam("namespace")) {
			items = append(items, *p)
		}
	}
	return c.JSON(http.StatusOK, list[v1.Pod]{Items: items})
}

func (s *Server) getNode(c echo.Context) error {
	ctx, cancel := s.apiContext(c)
	defer cancel()
	node, err := s.opts.Client.CoreV1().Nodes().Get(ctx, c.Param("name"), metav1.GetOptions{})
	return respond(c, http.StatusOK, node, err)
}

func (s *Server) getPod(c echo.Context) error {
	ctx, cancel := s.apiContext(c)
	defer cancel()
	pod, err := s.opts.Client.CoreV1().Pods(c.Param("namespace")).Get(ctx, c.Param("name"), metav1.GetOptions{})
	return respond(c, http.StatusOK, pod, err)
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

func (s *Server) createNode(c echo.Context) error { return create(c, &v1.Node{}, s.cluster.CreateNode) }
func (s *Server) createPod(c echo.Context) error  { return create(c, &v1.Pod{}, s.cluster.CreatePod) }
func (s *Server) createPriorityClass(c echo.Context) error {
	return create(c, &schedulingv1.PriorityClass{}, s.cluster.CreatePriorityClass)
}
func (s *Server) createDeployment(c echo.Context) error {
	return create(c, &appsv1.Deployment{}, s.cluster.CreateDeployment)
}
func (s *Server) createDaemonSet(c echo.Context) error {
	return create(c, &appsv1.DaemonSet{}, s.cluster.CreateDaemonSet)
}

// create decodes a manifest into obj and creates it the way the cluster
// package does (defaults, limits, the owner label).
func create[T runtime.Object](c echo.Context, obj T, makeIt func(context.Context, T) (T, error)) error {
	data, err := readBody(c)
	if err != nil {
		return err
	}
	if err := decodeManifest(data, c.Request().Header.Get(echo.HeaderContentType), obj); err != nil {
		return err
	}
	created, err := makeIt(c.Request().Context(), obj)
	return respond(c, http.StatusCreated, created, err)
}

// patchNode changes what the dashboard edits of a node: cordon, labels,
// taints, allocatable, its kubelet's state (cluster.NodeChange).
func (s *Server) patchNode(c echo.Context) error {
	data, err := readBody(c)
	if err != nil {
		return err
	}
	if ct := c.Request().Header.Get(echo.HeaderContentType); !strings.HasPrefix(ct, echo.MIMEApplicationJSON) && !strings.HasPrefix(ct, "application/merge-patch+json") {
		return apiError(http.StatusUnsupportedMediaType, "send the change as application/json")
	}
	var change cluster.NodeChange
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&change); err != nil {
		return apiError(http.StatusBadRequest, "a node change is {unschedulable, labels, taints, allocatable, kubelet, devices}: %v", err)
	}
	node, err := s.cluster.UpdateNode(c.Request().Context(), c.Param("name"), change)
	return respond(c, http.StatusOK, node, err)
}

func (s *Server) deleteNode(c echo.Context) error {
	return deleted(c)(s.cluster.DeleteNode(c.Request().Context(), c.Param("name")))
}

func (s *Server) deletePod(c echo.Context) error {
	return deleted(c)(s.cluster.DeletePod(c.Request().Context(), c.Param("namespace"), c.Param("name")))
}

func (s *Server) deleteDeployment(c echo.Context) error {
	return deleted(c)(s.cluster.DeleteDeployment(c.Request().Context(), c.Param("namespace"), c.Param("name")))
}

func (s *Server) deleteDaemonSet(c echo.Context) error {
	return deleted(c)(s.cluster.DeleteDaemonSet(c.Request().Context(), c.Param("namespace"), c.Param("name")))
}

func (s *Server) deletePriorityClass(c echo.Context) error {
	return deleted(c)(s.cluster.DeletePriorityClass(c.Request().Context(), c.Param("name")))
}

// respond writes obj as JSON with code, or the error.
func respond(c echo.Context, code int, obj any, err error) error {
	if err != nil {
		return clusterError(err)
	}
	return c.JSON(code, obj)
}

// deleted answers a delete as the apiserver does: the object, with its
// deletionTimestamp, when it waits on finalizers; 204 when it is gone.
func deleted(c echo.Context) func(pending metav1.Object, err error) error {
	return func(pending metav1.Object, err error) error {
		switch {
		case err != nil:
			return clusterError(err)
		case pending != nil:
			return c.JSON(http.StatusOK, pending)
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// clusterError gives the cluster package's refusals their status codes.
func clusterError(err error) error {
	var limit *cluster.LimitError
	var notOwned *cluster.NotOwnedError
	var invalid *cluster.InvalidChangeError
	var tooLarge *cluster.TooLargeError
	var forbidden *cluster.ForbiddenError
	switch {
	case errors.As(err, &limit), errors.As(err, &invalid), errors.As(err, &tooLarge):
		return apiError(http.StatusUnprocessableEntity, "%v", err)
	case errors.As(err, &notOwned), errors.As(err, &forbidden):
		return apiError(http.StatusForbidden, "%v", err)
	}
	return err
}
