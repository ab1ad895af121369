// Package snapshot reads a cluster into one versioned document and loads
// such a document into a cluster. The same code serves GET /export and
// POST /import, --load FILE, and --import-from KUBECONFIG, which copies a
// real cluster, reading it only, into the embedded one.
package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// The document's header: a reader refuses any other, so that a format that
// changes meaning changes its version.
const (
	APIVersion = "minisched.dev/v1"
	Kind       = "Snapshot"
)

// Document is a cluster as minisched copies it: what the scheduler reads,
// without what the apiserver sets (uid, resourceVersion, managedFields,
// creation time, owner references, finalizers), so that it loads into any
// cluster. Every list is sorted by namespace and name.
type Document struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// SchedulerConfiguration is the configuration the scheduler ran with,
	// when the document came from minisched; a real cluster's is not
	// readable through its API.
	SchedulerConfiguration *configv1.KubeSchedulerConfiguration `json:"schedulerConfiguration,omitempty"`

	Namespaces             []v1.Namespace               `json:"namespaces,omitempty"`
	PriorityClasses        []schedulingv1.PriorityClass `json:"priorityClasses,omitempty"`
	RuntimeClasses         []nodev1.RuntimeClass        `json:"runtimeClasses,omitempty"`
	StorageClasses         []storagev1.StorageClass     `json:"storageClasses,omitempty"`
	PersistentVolumeClaims []v1.PersistentVolumeClaim   `json:"persistentVolumeClaims,omitempty"`
	PersistentVolumes      []v1.PersistentVolume        `json:"persistentVolumes,omitempty"`
	CSINodes               []storagev1.CSINode          `json:"csiNodes,omitempty"`
	DeviceClasses          []resourcev1.DeviceClass     `json:"deviceClasses,omitempty"`
	Nodes                  []v1.Node                    `json:"nodes,omitempty"`
	ResourceSlices         []resourcev1.ResourceSlice   `json:"resourceSlices,omitempty"`
	ResourceClaims         []resourcev1.ResourceClaim   `json:"resourceClaims,omitempty"`
	// The workloads whose pods the document holds, each only when it
	// holds all of them (wholeOwners), and the budgets that guard pods.
	Deployments          []appsv1.Deployment            `json:"deployments,omitempty"`
	ReplicaSets          []appsv1.ReplicaSet            `json:"replicaSets,omitempty"`
	StatefulSets         []appsv1.StatefulSet           `json:"statefulSets,omitempty"`
	DaemonSets           []appsv1.DaemonSet             `json:"daemonSets,omitempty"`
	PodDisruptionBudgets []policyv1.PodDisruptionBudget `json:"podDisruptionBudgets,omitempty"`
	Pods                 []v1.Pod                       `json:"pods,omitempty"`

	// LeftOut names what Collect could not read and the copy does without
	// (poddisruptionbudgets, workloads): the identity may not list it.
	LeftOut []string `json:"-"`
}

// FormatError is a document that cannot be read: malformed, an unknown
// field, another apiVersion or kind. The API answers it with 400.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return e.Msg }

// InvalidError is a document that reads but cannot be loaded as it is (a
// missing name, a pod in a namespace it does not list, more nodes than the
// limit). The API answers it with 422; nothing is written.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// Decode reads a document, JSON or YAML, strictly: an unknown or duplicate
// field is an error rather than silently lost data.
func Decode(data []byte) (*Document, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &FormatError{"the snapshot is empty"}
	}
	doc := &Document{}
	if trimmed[0] == '{' {
		// JSON is decoded as it is, without YAML's conversion, which holds
		// the whole document a second time as a tree of maps.
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(doc); err != nil {
			return nil, &FormatError{"malformed snapshot: " + strings.TrimPrefix(err.Error(), "json: ")}
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, &FormatError{"malformed snapshot: data after the document"}
		}
	} else if err := yaml.UnmarshalStrict(trimmed, doc); err != nil {
		return nil, &FormatError{"malformed snapshot: " + strings.ReplaceAll(err.Error(), "json: ", "")}
	}
	if doc.APIVersion != APIVersion || doc.Kind != Kind {
		return nil, &FormatError{fmt.Sprintf("expected apiVersion %s, kind %s; got apiVersion %q, kind %q", APIVersion, Kind, doc.APIVersion, doc.Kind)}
	}
	return doc, nil
}

// JSON encodes the document, sorted, one line per document.
func (d *Document) JSON() ([]byte, error) {
	d.Sort()
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the snapshot: %w", err)
	}
	return data, nil
}

// YAML encodes the document, sorted.
func (d *Document) YAML() ([]byte, error) {
	d.Sort()
	data, err := yaml.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the snapshot: %w", err)
	}
	return data, nil
}

// Sort puts every list in canonical order, by namespace and name, so that
// two documents of the same cluster are byte-equal.
func (d *Document) Sort() {
	sortBy(d.Namespaces, func(o v1.Namespace) (string, string) { return "", o.Name })
	sortBy(d.PriorityClasses, func(o schedulingv1.PriorityClass) (string, string) { return "", o.Name })
	sortBy(d.RuntimeClasses, func(o nodev1.RuntimeClass) (string, string) { return "", o.Name })
	sortBy(d.StorageClasses, func(o storagev1.StorageClass) (string, string) { return "", o.Name })
	sortBy(d.PersistentVolumeClaims, func(o v1.PersistentVolumeClaim) (string, string) { return o.Namespace, o.Name })
	sortBy(d.PersistentVolumes, func(o v1.PersistentVolume) (string, string) { return "", o.Name })
	sortBy(d.CSINodes, func(o storagev1.CSINode) (string, string) { return "", o.Name })
	sortBy(d.DeviceClasses, func(o resourcev1.DeviceClass) (string, string) { return "", o.Name })
	sortBy(d.Nodes, func(o v1.Node) (string, string) { return "", o.Name })
	sortBy(d.ResourceSlices, func(o resourcev1.ResourceSlice) (string, string) { return "", o.Name })
	sortBy(d.ResourceClaims, func(o resourcev1.ResourceClaim) (string, string) { return o.Namespace, o.Name })
	sortBy(d.Deployments, func(o appsv1.Deployment) (string, string) { return o.Namespace, o.Name })
	sortBy(d.ReplicaSets, func(o appsv1.ReplicaSet) (string, string) { return o.Namespace, o.Name })
	sortBy(d.StatefulSets, func(o appsv1.StatefulSet) (string, string) { return o.Namespace, o.Name })
	sortBy(d.DaemonSets, func(o appsv1.DaemonSet) (string, string) { return o.Namespace, o.Name })
	sortBy(d.PodDisruptionBudgets, func(o policyv1.PodDisruptionBudget) (string, string) { return o.Namespace, o.Name })
	sortBy(d.Pods, func(o v1.Pod) (string, string) { return o.Namespace, o.Name })
}

func sortBy[T any](items []T, key func(T) (string, string)) {
	slices.SortFunc(items, func(a, b T) int {
		ans, an := key(a)
		bns, bn := key(b)
		if c := strings.Compare(ans, bns); c != 0 {
			return c
		}
		return strings.Compare(an, bn)
	})
}

// builtinNamespaces exist in every cluster: objects may be in them without
// the document listing them.
var builtinNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// Validate checks what the apiserver would otherwise refuse halfway through
// a load: names, duplicates, and namespaced objects in namespaces the
// document neither lists nor every cluster has.
func (d *Document) Validate() error {
	var errs []error
	namespaces := map[string]bool{}
	for _, ns := range builtinNamespaces {
		namespaces[ns] = true
	}
	check := func(kind, namespace, name string, seen map[string]bool, namespaced bool) {
		key := name
		if namespaced {
			key = namespace + "/" + name
		}
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("a %s without metadata.name", kind))
		case namespaced && namespace == "":
			errs = append(errs, fmt.Errorf("%s %s without metadata.namespace", kind, name))
		case namespaced && !namespaces[namespace]:
			errs = append(errs, fmt.Errorf("%s %s: namespace %s is not in the snapshot's namespaces", kind, key, namespace))
		case seen[key]:
			errs = append(errs, fmt.Errorf("%s %s appears twice", kind, key))
		}
		seen[key] = true
	}
	seen := map[string]map[string]bool{}
	d.eachMeta(func(kind string, m *metav1.ObjectMeta) {
		if seen[kind] == nil {
			seen[kind] = map[string]bool{}
		}
		check(kind, m.Namespace, m.Name, seen[kind], namespacedKinds[kind])
		if kind == "namespace" {
			namespaces[m.Name] = true
		}
	})
	if len(errs) > 0 {
		if len(errs) > 10 {
			errs = append(errs[:10], fmt.Errorf("and %d more", len(errs)-10))
		}
		return &InvalidError{"the snapshot cannot be loaded: " + errors.Join(errs...).Error()}
	}
	return nil
}

// eachMeta calls f on every object's metadata, kind by kind in the order
// they load: namespaces first.
func (d *Document) eachMeta(f func(kind string, m *metav1.ObjectMeta)) {
	metas(d.Namespaces, "namespace", f)
	metas(d.PriorityClasses, "PriorityClass", f)
	metas(d.RuntimeClasses, "RuntimeClass", f)
	metas(d.StorageClasses, "StorageClass", f)
	metas(d.PersistentVolumeClaims, "PersistentVolumeClaim", f)
	metas(d.PersistentVolumes, "PersistentVolume", f)
	metas(d.CSINodes, "CSINode", f)
	metas(d.DeviceClasses, "DeviceClass", f)
	metas(d.Nodes, "node", f)
	metas(d.ResourceSlices, "ResourceSlice", f)
	metas(d.ResourceClaims, "ResourceClaim", f)
	metas(d.Deployments, "Deployment", f)
	metas(d.ReplicaSets, "ReplicaSet", f)
	metas(d.StatefulSets, "StatefulSet", f)
	metas(d.DaemonSets, "DaemonSet", f)
	metas(d.PodDisruptionBudgets, "PodDisruptionBudget", f)
	metas(d.Pods, "pod", f)
}

func metas[T any, P interface {
	*T
	metav1.ObjectMetaAccessor
}](items []T, kind string, f func(kind string, m *metav1.ObjectMeta)) {
	for i := range items {
		f(kind, P(&items[i]).GetObjectMeta().(*metav1.ObjectMeta))
	}
}

// metaObject is an object's pointer whose metadata Load reads.
type metaObject[T any] interface {
	*T
	GetName() string
	GetNamespace() string
}

var namespacedKinds = map[string]bool{"PersistentVolumeClaim": true, "ResourceClaim": true, "pod": true,
	"Deployment": true, "ReplicaSet": true, "StatefulSet": true, "DaemonSet": true, "PodDisruptionBudget": true}
