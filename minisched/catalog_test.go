package minisched

import (
	"fmt"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
)

func TestLabels(t *testing.T) {
	tests := []struct {
		name string
		ev   fwk.ClusterEvent
		want string
	}{
		{"one action", fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, "[NodeAdd]"},
		{"specific updates stay specific", fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable | fwk.UpdateNodeTaint},
			"[NodeAdd NodeUpdateNodeAllocatable NodeUpdateNodeTaint]"},
		{"every update is one Update, not a pod's bits on a DeviceClass", fwk.ClusterEvent{Resource: fwk.DeviceClass, ActionType: fwk.Add | fwk.Update},
			"[resource.k8s.io/DeviceClassAdd resource.k8s.io/DeviceClassUpdate]"},
		{"everything", fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.All}, "[PersistentVolumeAll]"},
		{"a custom label", fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add, CustomLabel: "Mine"}, "[Mine]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprint(labels(tt.ev)); got != tt.want {
				t.Errorf("labels = %s, want %s", got, tt.want)
			}
		})
	}
}
