package server

// Snapshots: GET /export reads the cluster into one document, POST /import
// loads one (package snapshot does both).

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"minisched/cluster"
	"minisched/exclusive"
	"minisched/manifest"
	"minisched/minisched/schedconfig"
	"minisched/snapshot"
)

// importPath is the route whose body may hold a whole cluster.
const importPath = "/api/v1/import"

// DefaultImportLimit bounds an imported snapshot: 5,000 nodes and 50,000
// pods, the most --max-nodes and --max-pods allow, take some 100 MiB as
// JSON with a few kilobytes per pod (a pod of a Deployment, with its
// service account volume and tolerations, is about 2 KB; a node with its
// images up to 10 KB); the bound leaves room for pods twice as large.
const DefaultImportLimit = 256 << 20

// loadTimeout bounds one import: 50,000 pods at a thousand a second and
// more, with room.
const loadTimeout = 10 * time.Minute

// export answers the cluster as a snapshot: YAML or JSON as the client
// asks (?format=, else Accept), as a file to save.
func (s *Server) export(c echo.Context) error {
	opts := snapshot.CollectOptions{Selector: c.QueryParam("selector")}
	if _, err := labels.Parse(opts.Selector); err != nil {
		return apiError(http.StatusBadRequest, "selector %q: %v", opts.Selector, err)
	}
	var err error
	if opts.Pods, err = snapshot.ParsePods(c.QueryParam("pods")); err != nil {
		return apiError(http.StatusBadRequest, "%v", err)
	}
	for _, ns := range strings.Split(c.QueryParam("namespaces"), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			opts.Namespaces = append(opts.Namespaces, ns)
		}
	}
	if s.opts.Scheduler != nil {
		opts.SchedulerConfig = s.opts.Scheduler.Config()
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), loadTimeout)
	defer cancel()
	doc, err := snapshot.Collect(ctx, s.opts.Client, opts)
	if err != nil {
		return err
	}
	format := c.QueryParam("format")
	switch {
	case format == "json", format == "" && !wantsYAML(c):
		data, err := doc.JSON()
		if err != nil {
			return err
		}
		c.Response().Header().Set("Content-Disposition", `attachment; filename="minisched-snapshot.json"`)
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, data)
	case format == "yaml", format == "":
		data, err := doc.YAML()
		if err != nil {
			return err
		}
		c.Response().Header().Set("Content-Disposition", `attachment; filename="minisched-snapshot.yaml"`)
		return c.Blob(http.StatusOK, "application/yaml", data)
	}
	return apiError(http.StatusBadRequest, "format %q: want yaml or json", format)
}

// importSnapshot loads a snapshot into the embedded cluster: an empty one,
// or, with ?replace=true, after emptying it. It answers what it created.
func (s *Server) importSnapshot(c echo.Context) error {
	if s.cluster.Writes() != cluster.WritesAll {
		return apiError(http.StatusForbidden, "minisched is attached to a real cluster: a snapshot loads only into the embedded one")
	}
	var replace bool
	switch c.QueryParam("replace") {
	case "", "false":
	case "true":
		replace = true
	default:
		return apiError(http.StatusBadRequest, "replace=%q: want true or false", c.QueryParam("replace"))
	}
	if !manifest.IsSupportedType(c.Request().Header.Get(echo.HeaderContentType)) {
		return apiError(http.StatusUnsupportedMediaType, "send the snapshot as application/yaml or application/json")
	}
	// Begun before the body is read: a second import, or one during a
	// lesson, is refused before it costs a whole cluster's worth of memory.
	// The load goes on if the client leaves: a cluster half loaded is
	// worse than an answer nobody reads.
	ctx, end, err := s.owner.Begin(context.WithoutCancel(c.Request().Context()), exclusive.Import, "")
	if err != nil {
		return err
	}
	defer end()
	data, err := readBody(c)
	if err != nil {
		return err
	}
	counts, err := s.loadSnapshot(ctx, data, replace, CopyOf{Kind: "import", Source: "a snapshot loaded over the API"})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, counts)
}

// resetCluster empties the cluster as POST /reset does, refusing while
// another operation is under way (unless ctx is that operation's).
func (s *Server) resetCluster(ctx context.Context) error {
	ctx, end, err := s.owner.Begin(ctx, exclusive.Reset, "")
	if err != nil {
		return err
	}
	defer end()
	return s.cluster.Reset(ctx)
}

// importError gives a failed import its status code, keeping the words
// that name the object.
func importError(err error) error {
	var format *snapshot.FormatError
	var invalid *snapshot.InvalidError
	var config *schedconfig.Error
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &format):
		return apiError(http.StatusBadRequest, "%v", err)
	case errors.As(err, &invalid), errors.As(err, &config):
		return apiError(http.StatusUnprocessableEntity, "%v", err)
	case errors.Is(err, snapshot.ErrNotEmpty):
		return apiError(http.StatusConflict, "%v", err)
	case errors.As(err, &status):
		code := int(status.Status().Code)
		if code == 0 {
			code = http.StatusInternalServerError
		}
		return apiError(code, "%v", err)
	}
	return err
}
