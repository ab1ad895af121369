package server

// GET /mirror: how far a mirrored copy is behind its source, and how many
// pods minisched placed elsewhere than the real scheduler did.

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"minisched/mirror"
)

// Following is a mirror as the server needs it: its status.
type Following interface{ Status() mirror.Status }

type mirrorRef struct{ m Following }

// Follow says the cluster is kept in step with its source by m.
func (s *Server) Follow(m Following) { s.mirror.Store(&mirrorRef{m: m}) }

// MirrorView is GET /mirror's answer.
type MirrorView struct {
	mirror.Status
	// Source names the cluster followed.
	Source string `json:"source,omitempty"`
	// Compared counts the pods both schedulers placed; Differ those the
	// two placed on different nodes.
	Compared int `json:"compared"`
	Differ   int `json:"differ"`
}

func (s *Server) getMirror(c echo.Context) error {
	ref := s.mirror.Load()
	if ref == nil {
		return apiError(http.StatusNotFound, "minisched follows no cluster: start it with --mirror KUBECONFIG")
	}
	view := MirrorView{Status: ref.m.Status()}
	if cp := s.copyOf.Load(); cp != nil {
		view.Source = cp.Source
	}
	_, pods := s.cluster.Summaries()
	for _, p := range pods {
		if p.RealNode != "" && p.NodeName != "" {
			view.Compared++
			if p.RealNode != p.NodeName {
				view.Differ++
			}
		}
	}
	return c.JSON(http.StatusOK, view)
}
