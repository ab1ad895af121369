package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"minisched/cluster"
)

// clusterRoutes are the API routes that write to the cluster; the others
// change only minisched (pause, its configuration) or read.
var clusterRoutes = []string{"/api/v1/nodes", "/api/v1/pods", "/api/v1/priorityclasses", "/api/v1/deployments", "/api/v1/daemonsets", "/api/v1/scenarios", "/api/v1/reset", importPath, "/api/v1/whatif", "/api/v1/compare"}

// guardWrites refuses cluster writes when minisched only reads.
func (s *Server) guardWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if s.cluster.Writes() != cluster.WritesNone || !changes(r.Method) {
			return next(c)
		}
		// Cancelling a scenario run writes nothing.
		if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/v1/scenarios/") {
			return next(c)
		}
		for _, route := range clusterRoutes {
			if r.URL.Path == route || strings.HasPrefix(r.URL.Path, route+"/") {
				return apiError(http.StatusForbidden, "minisched is attached to a real cluster and only reads it: "+
					"start it with --allow-writes to create objects (it then deletes only those it labelled %s)", cluster.OwnerLabel)
			}
		}
		return next(c)
	}
}
