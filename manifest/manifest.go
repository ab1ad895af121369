// Package manifest decodes the Kubernetes manifests people type: JSON or
// YAML, one object, strictly (an unknown field is an error, not a silently
// empty one).
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// Error is a manifest that cannot be decoded. Unsupported marks a content
// type that is neither JSON nor YAML.
type Error struct {
	Unsupported bool
	Msg         string
}

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) *Error { return &Error{Msg: fmt.Sprintf(format, args...)} }

var strict = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
	json.SerializerOptions{Yaml: true, Strict: true})

// IsSupportedType accepts the content types a manifest may come in; an empty
// one (curl --data without a header) is decoded by its content.
func IsSupportedType(contentType string) bool {
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch mt {
	case "application/json", "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain",
		"application/x-www-form-urlencoded": // curl -d's default
		return true
	}
	return false
}

// Decode decodes one manifest of into's kind. A manifest without apiVersion
// and kind is taken to be of that kind; one of another kind is refused.
func Decode(data []byte, contentType string, into runtime.Object) error {
	if !IsSupportedType(contentType) {
		return &Error{Unsupported: true, Msg: fmt.Sprintf("content type %q is not supported: send application/json or application/yaml", contentType)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return errorf("the request body is empty: send a manifest")
	}
	if n := documents(data); n > 1 {
		return errorf("the body holds %d YAML documents: send one manifest per request (POST /api/v1/import takes many)", n)
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(into)
	if err != nil {
		return fmt.Errorf("no kind registered for %T: %w", into, err)
	}
	want := gvks[0]
	obj, gvk, err := strict.Decode(data, &want, into)
	switch {
	case err != nil && (runtime.IsNotRegisteredError(err) || runtime.IsMissingKind(err)):
		return errorf("expected a %s manifest: %v", want.Kind, err)
	case err != nil && (errors.Is(err, resource.ErrFormatWrong) || strings.Contains(err.Error(), resource.ErrFormatWrong.Error())):
		return quantityError(want.Kind, data)
	case err != nil:
		return errorf("malformed %s manifest: %s", want.Kind, strings.ReplaceAll(err.Error(), "json: ", ""))
	case gvk.GroupKind() != want.GroupKind() || gvk.Version != want.Version || obj != into:
		return errorf("expected kind %s (apiVersion %s), got %s", want.Kind, want.GroupVersion(), describe(gvk))
	}
	return nil
}

// documents counts the YAML documents of data that hold more than comments;
// a document that does not split cleanly counts as one, for the decoder to
// report.
func documents(data []byte) int {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	n := 0
	for {
		doc, err := r.Read()
		if err != nil {
			return max(n, 1)
		}
		for _, line := range bytes.Split(doc, []byte("\n")) {
			if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.HasPrefix(t, []byte("---")) {
				n++
				break
			}
		}
	}
}

func describe(gvk *schema.GroupVersionKind) string {
	if gvk == nil || gvk.Kind == "" {
		return "no kind"
	}
	return fmt.Sprintf("kind %s (apiVersion %s)", gvk.Kind, gvk.GroupVersion())
}
