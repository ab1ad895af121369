package devices

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/cel"
)

func annotated(value string) *v1.Node {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1"}}
	if value != "-" {
		node.Annotations = map[string]string{CountAnnotation: value}
	}
	return node
}

func TestCount(t *testing.T) {
	tests := []struct {
		name      string
		value     string // "-": no annotation
		want      int
		wantError bool
	}{
		{name: "no annotation, no devices", value: "-", want: 0},
		{name: "zero", value: "0", want: 0},
		{name: "four", value: "4", want: 4},
		{name: "the most a node may have", value: "64", want: MaxDevices},
		{name: "one too many", value: "65", wantError: true},
		{name: "negative", value: "-1", wantError: true},
		{name: "not a number", value: "two", wantError: true},
		{name: "a fraction", value: "1.5", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Count(annotated(tt.value))
			if tt.wantError {
				if err == nil || !strings.Contains(err.Error(), CountAnnotation) {
					t.Fatalf("Count = %d, %v; want an error naming the annotation", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Count = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestSlice(t *testing.T) {
	node := annotated("3")
	s := slice(node, 3)
	if s.Name != SliceName("n1") || *s.Spec.NodeName != "n1" || s.Spec.Pool.Name != "n1" || s.Spec.Driver != Driver {
		t.Fatalf("slice %s for node %v, pool %s, driver %s", s.Name, s.Spec.NodeName, s.Spec.Pool.Name, s.Spec.Driver)
	}
	if len(s.Spec.Devices) != 3 || s.Spec.Devices[2].Name != "dev-2" {
		t.Fatalf("devices %v, want dev-0 to dev-2", s.Spec.Devices)
	}
	if ref := s.OwnerReferences; len(ref) != 1 || ref[0].Kind != "Node" || ref[0].UID != "u1" {
		t.Errorf("owner %v, want the node", ref)
	}

	// The built-in class selects every device, as the scheduler's CEL
	// evaluates it.
	expr := Class(nil).Spec.Selectors[0].CEL.Expression
	compiled := cel.GetCompiler(cel.Features{}).CompileCELExpression(expr, cel.Options{})
	if compiled.Error != nil {
		t.Fatalf("the class's selector %q: %v", expr, compiled.Error)
	}
	for _, d := range s.Spec.Devices {
		ok, _, err := compiled.DeviceMatches(context.Background(), cel.Device{Driver: s.Spec.Driver, Attributes: d.Attributes})
		if err != nil || !ok {
			t.Errorf("the class does not select %s: %v", d.Name, err)
		}
	}
	if ok, _, _ := compiled.DeviceMatches(context.Background(), cel.Device{Driver: "gpu.example.com"}); ok {
		t.Error("the class selects another driver's device")
	}
}

func TestSame(t *testing.T) {
	want := slice(annotated("2"), 2)
	tests := []struct {
		name string
		have func() bool
		same bool
	}{
		{"as published", func() bool { return same(slice(annotated("2"), 2), want) }, true},
		{"a device more", func() bool { return same(slice(annotated("3"), 3), want) }, false},
		{"a device less", func() bool { return same(slice(annotated("1"), 1), want) }, false},
		{"a node of the same name made again", func() bool {
			node := annotated("2")
			node.UID = "u2"
			return same(slice(node, 2), want)
		}, false},
		{"an attribute edited by someone else", func() bool {
			have := slice(annotated("2"), 2)
			have.Spec.Devices[0].Attributes["model"] = have.Spec.Devices[0].Attributes["index"]
			return same(have, want)
		}, false},
		{"split in two slices", func() bool {
			have := slice(annotated("2"), 2)
			have.Spec.Pool.ResourceSliceCount = 2
			return same(have, want)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.have(); got != tt.same {
				t.Errorf("same = %v, want %v", got, tt.same)
			}
		})
	}
}
