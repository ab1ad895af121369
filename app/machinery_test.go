package app

import (
	"testing"
	"time"
)

func TestNodeLeaseDurationFlag(t *testing.T) {
	tests := []struct {
		name      string
		lease     time.Duration
		wantErr   bool
		wantGrace time.Duration
	}{
		{name: "upstream's 40 s gives node lifecycle upstream's 50 s", lease: 40 * time.Second, wantGrace: 50 * time.Second},
		{name: "a longer Lease gives a grace 5/4 of it", lease: 400 * time.Second, wantGrace: 500 * time.Second},
		{name: "the shortest: a renewal every second", lease: 4 * time.Second, wantGrace: 5 * time.Second},
		{name: "shorter is refused", lease: 3 * time.Second, wantErr: true},
		{name: "a fraction of a second is refused (the kubelet's is whole seconds)", lease: 4500 * time.Millisecond, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := DefaultFlags()
			f.NodeLeaseDuration = tt.lease
			m, err := newMachinery(f, nil, nil, nil)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("--node-lease-duration %v was taken", tt.lease)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.kubelets.LeaseDuration != tt.lease || m.gracePeriod != tt.wantGrace {
				t.Errorf("kubelets' Lease %v, node lifecycle's grace %v; want %v and %v", m.kubelets.LeaseDuration, m.gracePeriod, tt.lease, tt.wantGrace)
			}
		})
	}
}
