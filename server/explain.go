package server

// GET /pods/{namespace}/{name}/explain: why a pending pod fits no node, and
// what would make it fit; .../explain/nodes/{node}: one node, its changes
// tried (docs/API.md, "Explanations").

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minisched/minisched"
)

func (s *Server) getExplain(c echo.Context) error {
	sched := s.scheduler()
	if sched == nil {
		return apiError(http.StatusServiceUnavailable, "no scheduler runs in this process")
	}
	ctx, cancel := s.apiContext(c)
	defer cancel()
	ns, name, node := c.Param("namespace"), c.Param("name"), c.Param("node")
	var e any
	var err error
	if node == "" {
		e, err = sched.Explain(ctx, ns, name)
	} else {
		e, err = sched.ExplainNode(ctx, ns, name, node)
	}
	switch {
	case errors.Is(err, minisched.ErrNoNode):
		return apiError(http.StatusNotFound, "%v", err)
	case errors.Is(err, minisched.ErrNotPending):
		return apiError(http.StatusConflict, "%v: an explanation is for a pod that waits", err)
	case apierrors.IsNotFound(err):
		return apiError(http.StatusNotFound, "no pod %s/%s", ns, name)
	case apierrors.IsBadRequest(err):
		return apiError(http.StatusUnprocessableEntity, "%v", err)
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, e)
}
