package kubelet

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func runningPod(policy v1.RestartPolicy, annotations map[string]string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1", Annotations: annotations},
		Spec: v1.PodSpec{RestartPolicy: policy, NodeName: "n1",
			InitContainers: []v1.Container{{Name: "init"}, {Name: "sidecar", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}},
			Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}}}
	return p
}

func TestStart(t *testing.T) {
	k := &Kubelets{addresses: newAddresses()}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.0.2.7"}}}}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		pod       func() *v1.Pod
		wantIP    string // "" means any pod address, not the host's
		wantReady v1.ConditionStatus
	}{
		{"a pod gets its own address and is Ready", func() *v1.Pod { return runningPod(v1.RestartPolicyAlways, nil) }, "", v1.ConditionTrue},
		{"a hostNetwork pod has the host's address", func() *v1.Pod {
			p := runningPod(v1.RestartPolicyAlways, nil)
			p.Spec.HostNetwork = true
			return p
		}, "192.0.2.7", v1.ConditionTrue},
		{"a readiness gate not True keeps it not Ready", func() *v1.Pod {
			p := runningPod(v1.RestartPolicyAlways, nil)
			p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/lb"}}
			return p
		}, "", v1.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pod()
			k.start(p, node, now)
			s := p.Status
			if s.Phase != v1.PodRunning || s.StartTime == nil || !s.StartTime.Time.Equal(now) || s.HostIP != "192.0.2.7" {
				t.Errorf("phase %s, start %v, host IP %s", s.Phase, s.StartTime, s.HostIP)
			}
			if tt.wantIP != "" && s.PodIP != tt.wantIP || tt.wantIP == "" && (s.PodIP == "" || s.PodIP == s.HostIP) {
				t.Errorf("pod IP %q, want %q", s.PodIP, tt.wantIP)
			}
			if got := conditionStatus(p, v1.PodReady); got != tt.wantReady {
				t.Errorf("Ready = %s, want %s", got, tt.wantReady)
			}
			if len(s.InitContainerStatuses) != 2 || s.InitContainerStatuses[0].State.Terminated == nil || s.InitContainerStatuses[1].State.Running == nil {
				t.Errorf("init containers: %+v (want the first completed, the sidecar running)", s.InitContainerStatuses)
			}
			cs := s.ContainerStatuses[0]
			if cs.State.Running == nil || !cs.Ready || !cs.AllocatedResources.Cpu().Equal(resource.MustParse("1")) {
				t.Errorf("container status %+v", cs)
			}
		})
	}
}

func TestExit(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 30, 0, time.UTC)
	tests := []struct {
		name         string
		policy       v1.RestartPolicy
		code         int32
		wantPhase    v1.PodPhase
		wantRestarts int32
	}{
		{"Never, code 0: Succeeded", v1.RestartPolicyNever, 0, v1.PodSucceeded, 0},
		{"Never, code 1: Failed", v1.RestartPolicyNever, 1, v1.PodFailed, 0},
		{"OnFailure, code 0: Succeeded", v1.RestartPolicyOnFailure, 0, v1.PodSucceeded, 0},
		{"OnFailure, code 2: restarted", v1.RestartPolicyOnFailure, 2, v1.PodRunning, 1},
		{"Always, code 0: restarted", v1.RestartPolicyAlways, 0, v1.PodRunning, 1},
	}
	k := &Kubelets{addresses: newAddresses()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := runningPod(tt.policy, nil)
			k.start(p, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, now.Add(-30*time.Second))
			k.exit(p, tt.code, now)
			cs := p.Status.ContainerStatuses[0]
			if p.Status.Phase != tt.wantPhase || cs.RestartCount != tt.wantRestarts {
				t.Fatalf("phase %s, restarts %d; want %s, %d", p.Status.Phase, cs.RestartCount, tt.wantPhase, tt.wantRestarts)
			}
			switch {
			case tt.wantRestarts > 0:
				if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != tt.code || cs.State.Running == nil ||
					!lastStart(p).Equal(now) {
					t.Errorf("a restart: last state %+v, state %+v, last start %v", cs.LastTerminationState, cs.State, lastStart(p))
				}
			default:
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != tt.code || conditionStatus(p, v1.PodReady) != v1.ConditionFalse {
					t.Errorf("an end: state %+v, Ready %s", cs.State, conditionStatus(p, v1.PodReady))
				}
			}
		})
	}
}

func TestRunSpec(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		wantFor     time.Duration
		wantCode    int32
		wantOK      bool
	}{
		{"none: runs until deleted", nil, 0, 0, false},
		{"run-for alone exits 0", map[string]string{RunForAnnotation: "30s"}, 30 * time.Second, 0, true},
		{"with an exit code", map[string]string{RunForAnnotation: "1m", ExitCodeAnnotation: "3"}, time.Minute, 3, true},
		{"a bad duration is ignored", map[string]string{RunForAnnotation: "soon"}, 0, 0, false},
		{"a negative duration is ignored", map[string]string{RunForAnnotation: "-1s"}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, code, ok := runSpec(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}})
			if d != tt.wantFor || code != tt.wantCode || ok != tt.wantOK {
				t.Errorf("runSpec = %v, %d, %v; want %v, %d, %v", d, code, ok, tt.wantFor, tt.wantCode, tt.wantOK)
			}
		})
	}
}

func TestNodeStatus(t *testing.T) {
	k := &Kubelets{cfg: Config{StatusReportFrequency: 5 * time.Minute}, addresses: newAddresses()}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	bare := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	status, changed := k.nodeStatus(bare, now)
	if !changed || !status.Capacity.Cpu().Equal(resource.MustParse("4")) || !status.Allocatable.Cpu().Equal(resource.MustParse("4")) {
		t.Fatalf("a bare node: changed %v, capacity %v, allocatable %v", changed, status.Capacity, status.Allocatable)
	}
	if status.NodeInfo.KubeletVersion != KubeletVersion || len(status.Addresses) != 2 {
		t.Errorf("node info %+v, addresses %v", status.NodeInfo, status.Addresses)
	}
	reported := bare.DeepCopy()
	reported.Status = status
	if _, changed := k.nodeStatus(reported, now.Add(time.Minute)); changed {
		t.Errorf("a status just reported is written again a minute later")
	}
	if _, changed := k.nodeStatus(reported, now.Add(5*time.Minute)); !changed {
		t.Errorf("the heartbeat is not written after the report frequency")
	}
	sick := reported.DeepCopy()
	sick.Annotations = map[string]string{StateAnnotation: StateNotReady}
	status, changed = k.nodeStatus(sick, now.Add(time.Minute))
	sick.Status = status
	if !changed || ready(sick) {
		t.Errorf("NotReady: changed %v, conditions %+v", changed, status.Conditions)
	}
	twoCPU := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}
	status, _ = k.nodeStatus(twoCPU, now)
	if !status.Capacity.Cpu().Equal(resource.MustParse("2")) || status.Allocatable.Memory().Value() != 0 {
		t.Errorf("a node with allocatable only: capacity %v, allocatable %v (its figures, nothing added)", status.Capacity, status.Allocatable)
	}
}

func ready(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func TestAddresses(t *testing.T) {
	a := newAddresses()
	if a.node("a").String() != "10.200.0.1" || a.node("b").String() != "10.200.0.2" || a.node("a").String() != "10.200.0.1" {
		t.Errorf("node addresses: %s %s", a.node("a"), a.node("b"))
	}
	if p1, p2 := a.pod("a"), a.pod("a"); p1.String() != "10.128.1.1" || p2.String() != "10.128.1.2" {
		t.Errorf("pod addresses of node a: %s %s", p1, p2)
	}
}

// TestPodBoundBeforeItsNodeIsSeen: a pod bound to a node the kubelets'
// cache has not seen yet (the scheduler's cache can be ahead of theirs)
// starts when the node arrives.
func TestPodBoundBeforeItsNodeIsSeen(t *testing.T) {
	ctx := t.Context()
	pod := runningPod(v1.RestartPolicyAlways, nil)
	pod.Namespace, pod.Spec.NodeName = "default", "late"
	client := fake.NewClientset(pod)
	k, err := Start(ctx, Config{Client: client, StartDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The limit only ends a broken run: the kubelet reacts to the node's event.
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("the pod did not start once its node came: %v", err)
	}
}
