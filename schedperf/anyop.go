package schedperf

// createAny: any object from a template, as upstream's runner makes it
// (operations.go): the template rendered with Index and Count and the op's
// templateParams, the kind resolved through discovery, created through the
// dynamic client with strict field validation, and tried again for up to
// 20 s (a CRD just made may not be served yet), as upstream's is.

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/kubernetes/pkg/controlplane"
	"k8s.io/kubernetes/pkg/features"
)

type createAnyOp struct {
	Opcode         string         `json:"opcode"`
	Namespace      string         `json:"namespace"`
	TemplatePath   string         `json:"templatePath"`
	Count          *int           `json:"count"`
	CountParam     string         `json:"countParam"`
	TemplateParams map[string]any `json:"templateParams"`
}

// served is what kube-apiserver 1.37 serves by default, as minisched's
// embedded one does.
var served = controlplane.DefaultAPIResourceConfigSource()

// RuntimeConfig is the --runtime-config scheduler_perf gives its apiserver
// (mustSetupCluster) for a workload with these feature gates: every version
// of resource.k8s.io when DRA is on, scheduling.k8s.io/v1beta1 for pod
// groups.
func RuntimeConfig(gates map[string]bool) map[string]string {
	rc := map[string]string{}
	if gates[string(features.DynamicResourceAllocation)] {
		for _, gv := range []string{"v1", "v1beta2", "v1beta1", "v1alpha3"} {
			rc["resource.k8s.io/"+gv] = "true"
		}
	}
	if gates[string(features.GenericWorkload)] {
		rc["scheduling.k8s.io/v1beta1"] = "true"
	}
	return rc
}

// checkServed skips a workload whose op writes an API version the
// embedded apiserver does not serve, with the workload's runtime config,
// read from each template it names, rendered for its first object.
func checkServed(tc *TestCase, op any, runtimeConfig map[string]string) error {
	var paths []string
	env := map[string]any{"Index": 0, "Count": 1}
	switch o := op.(type) {
	case *createAnyOp:
		paths = []string{o.TemplatePath}
		maps.Copy(env, o.TemplateParams)
	case *updateAnyOp:
		paths = []string{o.TemplatePath}
	case *churnOp:
		paths = o.TemplatePaths
	}
	for _, p := range paths {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		if err := render(tc.File(p), env, &obj.Object); err != nil {
			return err
		}
		gv := obj.GroupVersionKind().GroupVersion()
		if !served.GroupVersionConfigs[gv] && runtimeConfig[gv.String()] != "true" {
			return &SkipError{Reason: fmt.Sprintf("%s writes %s, which kube-apiserver 1.37 does not serve by default, nor with the workload's feature gates", filepath.Base(p), gv)}
		}
	}
	return nil
}

// anyClient writes objects of any kind: the dynamic client and a mapper
// from kinds to resources, made on first use.
type anyClient struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
}

func (e *executor) anyClient() (*anyClient, error) {
	if e.any != nil {
		return e.any, nil
	}
	if e.o.RESTConfig == nil {
		return nil, fmt.Errorf("createAny needs Options.RESTConfig")
	}
	d, err := dynamic.NewForConfig(e.o.RESTConfig)
	if err != nil {
		return nil, err
	}
	e.any = &anyClient{dynamic: d, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.o.Client.Discovery()))}
	return e.any, nil
}

// object renders the template and finds where its kind is served.
func (e *executor) object(path string, env map[string]any) (*meta.RESTMapping, *unstructured.Unstructured, error) {
	c, err := e.anyClient()
	if err != nil {
		return nil, nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	if err := render(e.tc.File(path), env, &obj.Object); err != nil {
		return nil, nil, err
	}
	gvk := obj.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// A kind served since the mapper last asked (a new CRD).
		meta.MaybeResetRESTMapper(c.mapper)
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return mapping, obj, nil
}

// resource is object's, with the client for the op's namespace, which
// must be set for a namespaced kind and only for one.
func (e *executor) resource(path, namespace string, env map[string]any) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
	mapping, obj, err := e.object(path, env)
	if err != nil {
		return nil, nil, err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case namespace != "" && !namespaced:
		return nil, nil, fmt.Errorf("namespace %q set for %s, but %s is cluster-scoped", namespace, path, mapping.GroupVersionKind)
	case namespace == "" && namespaced:
		return nil, nil, fmt.Errorf("no namespace set for %s, but %s is namespaced", path, mapping.GroupVersionKind)
	case namespaced:
		return e.any.dynamic.Resource(mapping.Resource).Namespace(namespace), obj, nil
	}
	return e.any.dynamic.Resource(mapping.Resource), obj, nil
}

// anyCount makes the namespace an op of any kind names, as upstream's
// runner does, and returns how many objects the op writes (1 unless set).
func (e *executor) anyCount(ctx context.Context, namespace string, count *int) (int, error) {
	if namespace != "" {
		if err := e.ensureNamespace(ctx, namespace); err != nil {
			return 0, err
		}
	}
	if count == nil {
		return 1, nil
	}
	return *count, nil
}

func (e *executor) createAny(ctx context.Context, o *createAnyOp) error {
	count, err := e.anyCount(ctx, o.Namespace, o.Count)
	if err != nil {
		return err
	}
	for i := range count {
		env := maps.Clone(o.TemplateParams)
		if env == nil {
			env = map[string]any{}
		}
		env["Index"], env["Count"] = i, count
		deadline := time.Now().Add(20 * time.Second)
		for {
			client, obj, err := e.resource(o.TemplatePath, o.Namespace, env)
			if err == nil {
				_, err = client.Create(ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"})
			}
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("creating from %s: %w", o.TemplatePath, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

// updateAnyOp updates objects from a template, as upstream's updateAny:
// each rendered with Index and Count, written with Update (on the
// subresources named, if any) and then UpdateStatus, all at once or
// updatePerSecond a second.
type updateAnyOp struct {
	Opcode          string   `json:"opcode"`
	Namespace       string   `json:"namespace"`
	TemplatePath    string   `json:"templatePath"`
	Count           *int     `json:"count"`
	CountParam      string   `json:"countParam"`
	UpdatePerSecond int      `json:"updatePerSecond"`
	Subresources    []string `json:"subresources"`
}

func (e *executor) updateAny(ctx context.Context, o *updateAnyOp) error {
	count, err := e.anyCount(ctx, o.Namespace, o.Count)
	if err != nil {
		return err
	}
	var tick <-chan time.Time
	if o.UpdatePerSecond > 0 {
		t := time.NewTicker(time.Second / time.Duration(o.UpdatePerSecond))
		defer t.Stop()
		tick = t.C
	}
	opts := metav1.UpdateOptions{FieldValidation: "Strict"}
	for i := range count {
		if tick != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick:
			}
		}
		client, obj, err := e.resource(o.TemplatePath, o.Namespace, map[string]any{"Index": i, "Count": count})
		if err != nil {
			return err
		}
		if _, err := client.Update(ctx, obj, opts, o.Subresources...); err != nil {
			return fmt.Errorf("updating %s from %s: %w", obj.GetName(), o.TemplatePath, err)
		}
		if _, err := client.UpdateStatus(ctx, obj, opts); err != nil {
			return fmt.Errorf("updating the status of %s from %s: %w", obj.GetName(), o.TemplatePath, err)
		}
	}
	return nil
}
