package minisched_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"minisched/event"
)

// widgetGate is an out-of-tree plugin that waits for a custom resource: it
// rejects pods until a Widget exists, and registers Widget adds, with a
// QueueingHint that says Queue.
type widgetGate struct{ open atomic.Bool }

const widgets = "widgets.v1.example.com"

func (*widgetGate) Name() string { return "WidgetGate" }

func (g *widgetGate) PreFilter(context.Context, fwk.CycleState, *v1.Pod, []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !g.open.Load() {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "no widget yet")
	}
	return nil, nil
}

func (*widgetGate) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func (*widgetGate) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{{
		Event: fwk.ClusterEvent{Resource: widgets, ActionType: fwk.Add},
		QueueingHintFn: func(klog.Logger, *v1.Pod, any, any) (fwk.QueueingHint, error) {
			return fwk.Queue, nil
		},
	}}, nil
}

// TestCustomResourceEventMovesPod: a pod an out-of-tree plugin rejected
// waits for the custom resource it registered (widgets.v1.example.com), as
// upstream's dynamic informers make it: a Widget's creation moves it at
// once, not at the five-minute flush, and it binds.
func TestCustomResourceEventMovesPod(t *testing.T) {
	ctx := context.Background()
	ext := apiextensions.NewForConfigOrDie(cp.RESTConfig())
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{})
	})
	waitFor(t, 30*time.Second, "the CRD established", func() bool {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	})

	gate := &widgetGate{}
	h := start(t, multiPoint("WidgetGate"), withPlugin(gate))
	h.addNodes(node("node-1", "4"))
	createPod(t, client, pod("waits-for-widget", "100m"))
	h.waitUnschedulable("waits-for-widget")
	h.waitParked("waits-for-widget")

	gate.open.Store(true)
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}}}
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Create(ctx, widget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	moved := h.await("waits-for-widget", "the move on the Widget's add", func(e event.Event) bool {
		return e.Kind == event.KindQueue && e.Queue.From == event.Unschedulable && strings.Contains(e.Queue.Event, widgets)
	})
	if moved.Queue.To != event.ActiveQ && moved.Queue.To != event.BackoffQ {
		t.Errorf("moved to %s, want activeQ or backoffQ", moved.Queue.To)
	}
	if got := waitBound(t, client, "waits-for-widget"); got != "node-1" {
		t.Errorf("bound to %q, want node-1", got)
	}
}
