package server

import (
	"errors"
	"net/http"

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
