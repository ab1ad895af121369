package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/scenario"
)

// On a real cluster minisched reads by default (Writes: WritesNone). With
// --allow-writes it may create nodes, pods and PriorityClasses, and it marks
// each with OwnerLabel; it deletes only what carries the label
// (WritesOwned). The embedded cluster is minisched's own (WritesAll).
type Writes int

const (
	WritesAll Writes = iota
	WritesOwned
	WritesNone
)

// OwnerLabel marks the objects minisched created on a cluster it shares.
const OwnerLabel = scenario.OwnerLabel

// clusterRoutes are the API routes that write to the cluster; the others
// change only minisched (pause, its configuration) or read.
var clusterRoutes = []string{"/api/v1/nodes", "/api/v1/pods", "/api/v1/priorityclasses", "/api/v1/scenarios", "/api/v1/reset"}

// guardWrites refuses cluster writes when minisched only reads.
func (s *Server) guardWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if s.opts.Writes != WritesNone || !changes(r.Method) {
			return next(c)
		}
		// Cancelling a scenario run writes nothing.
		if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/v1/scenarios/") {
			return next(c)
		}
		for _, route := range clusterRoutes {
			if r.URL.Path == route || strings.HasPrefix(r.URL.Path, route+"/") {
				return apiError(http.StatusForbidden, "minisched is attached to a real cluster and only reads it: "+
					"start it with --allow-writes to create objects (it then deletes only those it labelled %s)", OwnerLabel)
			}
		}
		return next(c)
	}
}

// own marks an object minisched is about to create on a shared cluster.
func (s *Server) own(obj metav1.Object) {
	if s.opts.Writes != WritesOwned {
		return
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[OwnerLabel] = "minisched"
	obj.SetLabels(labels)
}

// getDeleter is the part of a typed client deleteObject needs.
type getDeleter[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// deleteObject deletes one object; on a shared cluster only one that
// minisched labelled.
func deleteObject[T metav1.Object](s *Server, c echo.Context, kind, name string, client getDeleter[T], opts metav1.DeleteOptions) error {
	ctx, cancel := s.apiContext(c)
	defer cancel()
	if s.opts.Writes == WritesOwned {
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if obj.GetLabels()[OwnerLabel] == "" {
			return apiError(http.StatusForbidden, "%s %s was not created by minisched (no %s label): minisched deletes only its own objects on a real cluster", kind, name, OwnerLabel)
		}
	}
	if err := client.Delete(ctx, name, opts); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
