package provisioner

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	volumehelpers "k8s.io/component-helpers/storage/volume"
)

func TestNewVolume(t *testing.T) {
	retain := v1.PersistentVolumeReclaimRetain
	block := v1.PersistentVolumeBlock
	claim := func(edit func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
		c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data", UID: "u1"},
			Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")}}}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{v1.LabelHostname: "host-1"}}}
	tests := []struct {
		name        string
		claim       *v1.PersistentVolumeClaim
		class       *storagev1.StorageClass
		node        *v1.Node
		wantReclaim v1.PersistentVolumeReclaimPolicy
		wantMode    *v1.PersistentVolumeMode
		wantError   string
	}{
		{name: "the default class deletes its volumes", claim: claim(nil), class: DefaultClass(), node: node,
			wantReclaim: v1.PersistentVolumeReclaimDelete},
		{name: "a class that retains", claim: claim(nil), node: node, wantReclaim: v1.PersistentVolumeReclaimRetain,
			class: &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "keep"}, Provisioner: Name, ReclaimPolicy: &retain}},
		{name: "a block claim gets a block volume", claim: claim(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeMode = &block }),
			class: DefaultClass(), node: node, wantReclaim: v1.PersistentVolumeReclaimDelete, wantMode: &block},
		{name: "a claim that asks no size", class: DefaultClass(), node: node,
			claim:     claim(func(c *v1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }),
			wantError: "requests no storage"},
		{name: "a node without a hostname label", claim: claim(nil), class: DefaultClass(),
			node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}, wantError: "has no kubernetes.io/hostname label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pv, err := newVolume("pvc-u1", tt.claim, tt.class, tt.node)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := pv.Spec.Capacity[v1.ResourceStorage]; got.Cmp(resource.MustParse("2Gi")) != 0 {
				t.Errorf("capacity %s, want 2Gi", got.String())
			}
			if pv.Spec.PersistentVolumeReclaimPolicy != tt.wantReclaim {
				t.Errorf("reclaim policy %s, want %s", pv.Spec.PersistentVolumeReclaimPolicy, tt.wantReclaim)
			}
			if (pv.Spec.VolumeMode == nil) != (tt.wantMode == nil) || (tt.wantMode != nil && *pv.Spec.VolumeMode != *tt.wantMode) {
				t.Errorf("volume mode %v, want %v", pv.Spec.VolumeMode, tt.wantMode)
			}
			if pv.Spec.StorageClassName != tt.class.Name || pv.Annotations[volumehelpers.AnnDynamicallyProvisioned] != Name {
				t.Errorf("class %q, provisioned by %q", pv.Spec.StorageClassName, pv.Annotations[volumehelpers.AnnDynamicallyProvisioned])
			}
			if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != "shop" || ref.Name != "data" || ref.UID != "u1" {
				t.Errorf("claimRef %v, want shop/data u1", ref)
			}
			// The scheduler's VolumeBinding checks the affinity against
			// the node's labels as upstream does.
			if err := volumehelpers.CheckNodeAffinity(pv, tt.node.Labels); err != nil {
				t.Errorf("the volume does not fit its own node: %v", err)
			}
			if err := volumehelpers.CheckNodeAffinity(pv, map[string]string{v1.LabelHostname: "host-2"}); err == nil {
				t.Error("the volume fits another node")
			}
		})
	}
}

func TestOurs(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{"handed to this provisioner", map[string]string{volumehelpers.AnnStorageProvisioner: Name}, true},
		{"handed by the beta annotation", map[string]string{volumehelpers.AnnBetaStorageProvisioner: Name}, true},
		{"handed to another provisioner", map[string]string{volumehelpers.AnnStorageProvisioner: "ebs.csi.aws.com"}, false},
		{"not handed to any", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
			if got := ours(claim); got != tt.want {
				t.Errorf("ours = %v, want %v", got, tt.want)
			}
		})
	}
}
