package minisched_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/event"
)

// TestProfilesChooseBySchedulerName: with two profiles, as kube-scheduler,
// each pod goes through the profile its spec.schedulerName names (the
// cycle says which), and a pod no profile names is left alone.
func TestProfilesChooseBySchedulerName(t *testing.T) {
	const cfg = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`
	h := start(t, cfg)
	if got := h.svc.Scheduler().Profiles(); len(got) != 2 || got[0] != "default-scheduler" || got[1] != "packer" {
		t.Fatalf("Profiles() = %v, want [default-scheduler packer]", got)
	}
	h.addNodes(node("busy", "4"), node("idle", "4"))
	createPod(t, client, pod("resident", "2", func(p *v1.Pod) { p.Spec.NodeName = "busy" }))
	waitFor(t, 30*time.Second, "the resident pod in the cache", func() bool {
		return h.svc.Scheduler().NodeCount() == 2 && h.svc.Scheduler().HasNode("busy")
	})

	for _, tt := range []struct{ pod, profile, want string }{
		{"spread-out", "default-scheduler", "idle"}, // LeastAllocated
		{"packed-in", "packer", "busy"},             // MostAllocated
	} {
		createPod(t, client, pod(tt.pod, "500m", func(p *v1.Pod) { p.Spec.SchedulerName = tt.profile }))
		if got := waitBound(t, client, tt.pod); got != tt.want {
			t.Errorf("%s (profile %s) bound to %s, want %s", tt.pod, tt.profile, got, tt.want)
		}
		start := h.await(tt.pod, "its cycle", ofKind(event.KindCycleStart)).CycleStart
		if start.Profile != tt.profile {
			t.Errorf("%s's cycle ran profile %q, want %q", tt.pod, start.Profile, tt.profile)
		}
	}

	createPod(t, client, pod("someone-elses", "100m", func(p *v1.Pod) { p.Spec.SchedulerName = "other-scheduler" }))
	// A pod of a profile after it: when it is bound, the other one was
	// seen and left alone (the queue takes pods in arrival order).
	createPod(t, client, pod("after-it", "100m"))
	waitBound(t, client, "after-it")
	got, err := client.CoreV1().Pods("default").Get(t.Context(), "someone-elses", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "" || len(h.log.find("someone-elses", func(event.Event) bool { return true })) > 0 {
		t.Errorf("a pod of another scheduler was touched: node %q, events %v", got.Spec.NodeName, h.log.find("someone-elses", func(event.Event) bool { return true }))
	}
}
