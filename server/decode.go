package server

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
)

// strictYAML decodes JSON and YAML alike and refuses unknown fields, so that
// a typo ("contaners") is an error, not a silently empty field.
var strictYAML = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
	json.SerializerOptions{Yaml: true, Strict: true})

// isManifestType accepts the content types a manifest may come in.
func isManifestType(contentType string) bool {
	if contentType == "" {
		return true // curl --data without a header; decode by content
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

// DecodeManifest decodes one manifest of the kind of into. A manifest without
// apiVersion and kind is taken to be of that kind; one of another kind is
// refused.
func DecodeManifest(data []byte, contentType string, into runtime.Object) error {
	if !isManifestType(contentType) {
		return apiError(http.StatusUnsupportedMediaType, "content type %q is not supported: send application/json or application/yaml", contentType)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return apiError(http.StatusBadRequest, "the request body is empty: send a manifest")
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(into)
	if err != nil {
		return fmt.Errorf("no kind registered for %T: %w", into, err)
	}
	want := gvks[0]
	obj, gvk, err := strictYAML.Decode(data, &want, into)
	if err != nil {
		if runtime.IsStrictDecodingError(err) {
			return apiError(http.StatusBadRequest, "malformed %s manifest: %v", want.Kind, err)
		}
		if runtime.IsNotRegisteredError(err) || runtime.IsMissingKind(err) {
			return apiError(http.StatusBadRequest, "expected a %s manifest: %v", want.Kind, err)
		}
		return apiError(http.StatusBadRequest, "malformed %s manifest: %v", want.Kind, cleanDecodeError(err))
	}
	if gvk.GroupKind() != want.GroupKind() || gvk.Version != want.Version || obj != into {
		return apiError(http.StatusBadRequest, "expected kind %s (apiVersion %s), got %s", want.Kind, want.GroupVersion(), describeGVK(gvk))
	}
	return nil
}

func describeGVK(gvk *schema.GroupVersionKind) string {
	if gvk == nil || gvk.Kind == "" {
		return "no kind"
	}
	return fmt.Sprintf("kind %s (apiVersion %s)", gvk.Kind, gvk.GroupVersion())
}

// cleanDecodeError drops the decoder's Go type names, which mean nothing to
// the person who typed the YAML.
func cleanDecodeError(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "json: ", "")
	return msg
}

// podDefaults and nodeDefaults fill what a person typing a manifest by hand
// leaves out and a kubelet or controller would fill in a real cluster.
func nodeDefaults(node *v1.Node) {
	if len(node.Status.Allocatable) == 0 && len(node.Status.Capacity) > 0 {
		node.Status.Allocatable = node.Status.Capacity.DeepCopy()
	}
	if len(node.Status.Capacity) == 0 && len(node.Status.Allocatable) > 0 {
		node.Status.Capacity = node.Status.Allocatable.DeepCopy()
	}
	for name, q := range DefaultNodeAllocatable {
		if _, ok := node.Status.Allocatable[name]; !ok {
			if node.Status.Allocatable == nil {
				node.Status.Allocatable, node.Status.Capacity = v1.ResourceList{}, v1.ResourceList{}
			}
			node.Status.Allocatable[name] = q.DeepCopy()
			node.Status.Capacity[name] = q.DeepCopy()
		}
	}
	if len(node.Status.Conditions) == 0 {
		node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "MinischedNode",
			Message: "created by minisched; no kubelet runs here"}}
	}
}
