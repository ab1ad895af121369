package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"minisched/compare"
)

const packConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
`

// TestRescheduleAll: pods spread by the default LeastAllocated are packed
// once the configuration says MostAllocated and the whole workload is
// scheduled again; the report says which moved and why.
func TestRescheduleAll(t *testing.T) {
	reset(t)
	t.Cleanup(func() {
		var defaults map[string]any
		api(t, "GET", "/api/v1/scheduler/config?defaults=true", "", nil, &defaults)
		body, _ := json.Marshal(defaults)
		if code := api(t, "PUT", "/api/v1/scheduler/config", "application/json", body, nil); code != http.StatusOK {
			t.Errorf("putting the defaults back: %d", code)
		}
	})
	packable(t, "wi")
	if code := api(t, "PUT", "/api/v1/scheduler/config", "application/yaml", []byte(packConfig), nil); code != http.StatusOK {
		t.Fatalf("PUT the MostAllocated configuration: %d", code)
	}
	eventually(t, 30*time.Second, "the scheduler running again", func() bool { return inst.Scheduler.State().State == "running" })

	var r compare.Report
	if code := api(t, "POST", "/api/v1/whatif/reschedule", "", nil, &r); code != http.StatusOK {
		t.Fatalf("POST /whatif/reschedule: %d %+v", code, r)
	}
	if len(r.Pods) != 3 || r.A != "before" || r.B != "after" {
		t.Fatalf("report %+v", r)
	}
	packed := 0
	for _, p := range r.Pods {
		if p.NodeB == "" {
			t.Errorf("%s is unbound after the run", p.Pod)
		}
		if p.NodeB == "wi-small" {
			packed++
		}
		if n := boundNode(t, p.Pod[len("default/"):]); n != p.NodeB {
			t.Errorf("%s: the report says %s, the cluster %s", p.Pod, p.NodeB, n)
		}
	}
	// MostAllocated prefers the node its pods fill most: the small one,
	// which three 1-CPU pods fit.
	if packed != 3 {
		t.Errorf("after: %+v, want every pod on wi-small", r.Pods)
	}
	if r.Moved != 3 {
		t.Errorf("%d moved, want all three from wi-big: %+v", r.Moved, r.Pods)
	}
}

// packable makes nodes PREFIX-small and PREFIX-big and pods PREFIX-1..3,
// and waits for the pods to be bound. Nodes and pods have one shape (2 GiB
// a CPU), so that BalancedAllocation scores every node alike and
// NodeResourcesFit alone decides, by wide margins: under LeastAllocated
// the big node, under MostAllocated the small one, for each pod.
func packable(t *testing.T, prefix string) {
	t.Helper()
	node := func(name, cpu, memory string) []byte {
		return []byte(fmt.Sprintf(`{"metadata":{"name":%q},"status":{"allocatable":{"cpu":%q,"memory":%q,"pods":"110"}}}`, name, cpu, memory))
	}
	mustCreate(t, "/api/v1/nodes", node(prefix+"-small", "4", "8Gi"))
	mustCreate(t, "/api/v1/nodes", node(prefix+"-big", "16", "32Gi"))
	// A pod that came before the scheduler held both nodes could go to the
	// one it knew.
	eventually(t, 10*time.Second, "both nodes in the scheduler", func() bool {
		return inst.Scheduler.Scheduler().HasNode(prefix+"-small") && inst.Scheduler.Scheduler().HasNode(prefix+"-big")
	})
	pods := []string{prefix + "-1", prefix + "-2", prefix + "-3"}
	for _, name := range pods {
		mustCreate(t, "/api/v1/pods", []byte(fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"containers":[{"name":"c","image":"pause:3.10","resources":{"requests":{"cpu":"1","memory":"2Gi"}}}]}}`, name)))
	}
	eventually(t, 30*time.Second, "the pods bound", func() bool {
		for _, name := range pods {
			if boundNode(t, name) == "" {
				return false
			}
		}
		return true
	})
}
