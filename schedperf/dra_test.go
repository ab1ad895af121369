package schedperf

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestAllocResourceClaims allocates claims against a real apiserver as
// upstream's op does: each claim gets a device of its own, on a node whose
// slice has one free; a claim allocated already is left as it is; a claim
// no node has a device for fails the op, naming it.
func TestAllocResourceClaims(t *testing.T) {
	e, client := startCluster(t, nil)
	ctx := context.Background()
	const driver = "test-driver.cdi.k8s.io"
	for _, node := range []string{"a", "b"} {
		if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		slice := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "slice-" + node},
			Spec: resourceapi.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(node),
				Pool:    resourceapi.ResourcePool{Name: node, ResourceSliceCount: 1},
				Devices: []resourceapi.Device{{Name: "dev-0"}, {Name: "dev-1"}}}}
		if _, err := client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == %q", driver)}}}}}
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim := func(ns string, i int) {
		t.Helper()
		c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", i)},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name: "req", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu"}}}}}}
		if _, err := client.ResourceV1().ResourceClaims(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{"init", "other"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		claim("init", i)
	}
	claim("other", 0)

	t.Run("each claim of the namespace gets a device of its own", func(t *testing.T) {
		if err := e.allocResourceClaims(ctx, &allocResourceClaimsOp{Namespace: "init"}); err != nil {
			t.Fatal(err)
		}
		taken := map[string]string{}
		claims, err := client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claims.Items {
			if c.Namespace == "other" {
				if c.Status.Allocation != nil {
					t.Errorf("%s/%s of another namespace allocated", c.Namespace, c.Name)
				}
				continue
			}
			if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 {
				t.Fatalf("%s: allocation %+v, want one device", c.Name, c.Status.Allocation)
			}
			r := c.Status.Allocation.Devices.Results[0]
			id := r.Pool + "/" + r.Device
			if other, ok := taken[id]; ok {
				t.Errorf("%s and %s both have %s", other, c.Name, id)
			}
			taken[id] = c.Name
			if sel := c.Status.Allocation.NodeSelector; sel == nil || !strings.Contains(sel.String(), r.Pool) {
				t.Errorf("%s: device on %s, node selector %v", c.Name, r.Pool, sel)
			}
		}
		if len(taken) != 3 {
			t.Errorf("%d devices taken, want 3: %v", len(taken), taken)
		}
	})

	t.Run("a claim no device is left for fails the op", func(t *testing.T) {
		for i := 3; i < 5; i++ {
			claim("init", i)
		}
		err := e.allocResourceClaims(ctx, &allocResourceClaimsOp{Namespace: "init"})
		if err == nil || !strings.Contains(err.Error(), "no node of 2 has devices for it") {
			t.Fatalf("got %v, want the claim no node has a device for", err)
		}
	})
}
