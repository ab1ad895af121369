package schedperf

// Templates as upstream's runner renders them: Go text/template over the
// file, with Index and Count (and the op's templateParams), then strict
// YAML into the object.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"text/template"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// render fills obj from the template at path.
func render(path string, env map[string]any, obj any) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the template: %w", err)
	}
	t, err := template.New(path).Funcs(templateFuncs).Parse(string(text))
	if err != nil {
		return fmt.Errorf("template %s: %w", path, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, env); err != nil {
		return fmt.Errorf("template %s: %w", path, err)
	}
	if err := yaml.UnmarshalStrict(out.Bytes(), obj); err != nil {
		return fmt.Errorf("template %s: %w", path, err)
	}
	return nil
}

// templateFuncs are the functions upstream's templates call.
var templateFuncs = template.FuncMap{
	"AddInt":        func(a, b any) int { return toInt(a) + toInt(b) },
	"SubtractInt":   func(a, b any) int { return toInt(a) - toInt(b) },
	"MultiplyInt":   func(a, b any) int { return toInt(a) * toInt(b) },
	"DivideInt":     func(a, b any) int { return toInt(a) / toInt(b) },
	"Mod":           func(a, b any) int { return toInt(a) % toInt(b) },
	"AddFloat":      func(a, b any) float64 { return toFloat(a) + toFloat(b) },
	"SubtractFloat": func(a, b any) float64 { return toFloat(a) - toFloat(b) },
	"MultiplyFloat": func(a, b any) float64 { return toFloat(a) * toFloat(b) },
	"DivideFloat":   func(a, b any) float64 { return toFloat(a) / toFloat(b) },
	"Int":           toInt,
	"JSON": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// baseNode is the node a createNodes without a template makes: 4 CPUs,
// 32Gi and 110 pods, Ready, as upstream's runner makes it.
func baseNode(prefix string) *v1.Node {
	room := v1.ResourceList{v1.ResourcePods: resource.MustParse("110"), v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("32Gi")}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}, Status: v1.NodeStatus{
		Capacity: room, Allocatable: room.DeepCopy(), Phase: v1.NodeRunning,
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
	}}
}

// basePod is the pod a createPods without a template makes: a pause
// container asking for 100m and 500Mi, as upstream's runner makes it.
func basePod() *v1.Pod {
	asks := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi")}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "pod-"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "pause", Image: "pause:3.10", Ports: []v1.ContainerPort{{ContainerPort: 80}},
		Resources: v1.ResourceRequirements{Limits: asks, Requests: asks.DeepCopy()},
	}}}}
}
