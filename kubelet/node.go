package kubelet

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/featuregate"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	// Registers Kubernetes' feature gates, which the discovery reads.
	_ "k8s.io/kubernetes/pkg/features"
	"k8s.io/utils/ptr"
)

// KubeletVersion is the version the simulated kubelets report: the one
// every other component here is built from.
const KubeletVersion = "v1.37.2"

// leaseNamespace is where kubelets keep their Leases.
const leaseNamespace = v1.NamespaceNodeLease

// syncLease keeps one node's Lease fresh, as its kubelet's lease
// controller would.
func (k *Kubelets) syncLease(ctx context.Context, name string) (time.Duration, error) {
	node, err := k.nodes.Get(name)
	if err != nil || stateOf(node) == StateStopped {
		// A node gone, or a kubelet gone that renews nothing: an
		// annotation change brings the node back here.
		k.leases.forget(name)
		return 0, ignoreGone(err)
	}
	renewIn, err := k.leases.renew(ctx, node)
	if err != nil {
		return 0, fmt.Errorf("renewing the lease of node %s: %w", name, err)
	}
	return renewIn, nil
}

// syncNode keeps one node's status fresh, as its kubelet would.
func (k *Kubelets) syncNode(ctx context.Context, name string) (time.Duration, error) {
	node, err := k.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		k.addresses.forget(name)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if stateOf(node) == StateStopped {
		return 0, nil
	}
	if status, changed := k.nodeStatus(node, time.Now()); changed {
		updated := node.DeepCopy()
		updated.Status = status
		if _, err := k.client.CoreV1().Nodes().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	return k.cfg.StatusReportFrequency, nil
}

// nodeStatus is the status the node's kubelet would post now, and whether
// it differs from what the node has enough to be written: a changed
// condition or field, or a heartbeat older than the report frequency.
func (k *Kubelets) nodeStatus(node *v1.Node, now time.Time) (v1.NodeStatus, bool) {
	status := *node.Status.DeepCopy()
	changed := false
	fill := func(list *v1.ResourceList, from v1.ResourceList) {
		for name, q := range from {
			if _, ok := (*list)[name]; !ok {
				if *list == nil {
					*list = v1.ResourceList{}
				}
				(*list)[name] = q
				changed = true
			}
		}
	}
	// A kubelet reports its machine. A node made without figures (kubectl
	// create ignores status) gets the default machine; one with only
	// allocatable reports it as its capacity too.
	if len(status.Capacity) == 0 && len(status.Allocatable) == 0 {
		fill(&status.Capacity, k.cfg.machine())
	}
	fill(&status.Capacity, status.Allocatable)
	fill(&status.Allocatable, status.Capacity)
	if len(status.Addresses) == 0 {
		status.Addresses = []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: k.addresses.node(node.Name).String()},
			{Type: v1.NodeHostName, Address: node.Name},
		}
		changed = true
	}
	info := &status.NodeInfo
	for _, f := range []struct {
		field *string
		value string
	}{
		{&info.KubeletVersion, KubeletVersion},
		{&info.OperatingSystem, "linux"},
		{&info.Architecture, "amd64"},
		{&info.ContainerRuntimeVersion, "minisched://" + KubeletVersion},
		{&info.OSImage, "minisched simulated kubelet"},
		{&info.KernelVersion, "none (simulated)"},
	} {
		if *f.field == "" {
			*f.field, changed = f.value, true
		}
	}
	if status.DaemonEndpoints.KubeletEndpoint.Port == 0 {
		status.DaemonEndpoints.KubeletEndpoint.Port, changed = 10250, true
	}
	if features := declaredFeatures(); !slices.Equal(status.DeclaredFeatures, features) {
		status.DeclaredFeatures, changed = features, true
	}
	heartbeat := metav1.NewTime(now)
	want := []v1.NodeCondition{
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: v1.NodePIDPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
	}
	if stateOf(node) == StateNotReady {
		want[3] = v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: "KubeletNotReady",
			Message: "container runtime network not ready: NetworkReady=false (set by the " + StateAnnotation + " annotation)"}
	}
	for _, c := range want {
		i := slices.IndexFunc(status.Conditions, func(have v1.NodeCondition) bool { return have.Type == c.Type })
		if i < 0 {
			c.LastHeartbeatTime, c.LastTransitionTime = heartbeat, heartbeat
			status.Conditions = append(status.Conditions, c)
			changed = true
			continue
		}
		have := &status.Conditions[i]
		if have.Status != c.Status || have.Reason != c.Reason || have.Message != c.Message {
			if have.Status != c.Status {
				have.LastTransitionTime = heartbeat
			}
			have.Status, have.Reason, have.Message = c.Status, c.Reason, c.Message
			have.LastHeartbeatTime = heartbeat
			changed = true
		}
	}
	if !changed {
		// Unchanged: the heartbeat alone, once per report frequency.
		for i := range status.Conditions {
			if now.Sub(status.Conditions[i].LastHeartbeatTime.Time) >= k.cfg.StatusReportFrequency {
				changed = true
			}
		}
	}
	if changed {
		for i := range status.Conditions {
			status.Conditions[i].LastHeartbeatTime = heartbeat
		}
	}
	return status, changed
}

// machine is what a node made without figures has.
func (c Config) machine() v1.ResourceList {
	if c.Machine != nil {
		return c.Machine
	}
	return v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
}

var (
	featuresOnce sync.Once
	features     []string
)

// declaredFeatures are what a 1.37.2 kubelet declares under this
// process's feature gates, found by upstream's own discovery
// (nodedeclaredfeatures), with a container runtime that offers none of the
// optional runtime features.
func declaredFeatures() []string {
	featuresOnce.Do(func() {
		features = ndf.DefaultFramework.DiscoverNodeFeatures(&ndf.NodeConfiguration{
			FeatureGates: gates{utilfeature.DefaultFeatureGate},
			Version:      version.MustParse(KubeletVersion),
		})
	})
	return features
}

// gates adapts the feature gates to nodedeclaredfeatures, as the kubelet's
// FeatureGateAdapter does.
type gates struct{ featuregate.FeatureGate }

func (g gates) Enabled(key string) bool { return g.FeatureGate.Enabled(featuregate.Feature(key)) }

// leases keeps each node's Lease in kube-node-lease, as the kubelet's
// lease controller does: created with the node as owner, renewed every
// quarter of its duration. As the kubelet does, it keeps the Lease it last
// wrote and renews that, reading it again only when someone else wrote it.
type leases struct {
	client   kubernetes.Interface
	duration time.Duration

	mu   sync.Mutex
	last map[string]*coordinationv1.Lease // node name -> the Lease as last written
}

func (l *leases) forget(node string) {
	l.mu.Lock()
	delete(l.last, node)
	l.mu.Unlock()
}

// renew renews the node's Lease when a quarter of its duration has passed,
// and says when it is due next.
func (l *leases) renew(ctx context.Context, node *v1.Node) (time.Duration, error) {
	interval := l.duration / 4
	l.mu.Lock()
	lease := l.last[node.Name]
	l.mu.Unlock()
	now := time.Now()
	if lease != nil && lease.Spec.RenewTime != nil {
		if since := now.Sub(lease.Spec.RenewTime.Time); since < interval {
			return interval - since, nil
		}
	}
	client := l.client.CoordinationV1().Leases(leaseNamespace)
	var err error
	if lease == nil {
		lease, err = client.Get(ctx, node.Name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		lease, err = client.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: leaseNamespace,
				// The garbage collector deletes the Lease with its node.
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(node.Name),
				LeaseDurationSeconds: ptr.To(int32(l.duration / time.Second)),
				RenewTime:            &metav1.MicroTime{Time: now},
			},
		}, metav1.CreateOptions{})
	case err == nil:
		renewed := lease.DeepCopy()
		renewed.Spec.RenewTime = &metav1.MicroTime{Time: now}
		renewed.Spec.HolderIdentity = ptr.To(node.Name)
		lease, err = client.Update(ctx, renewed, metav1.UpdateOptions{})
	}
	if err != nil {
		l.forget(node.Name) // read it again next time
		return 0, err
	}
	l.mu.Lock()
	l.last[node.Name] = lease
	l.mu.Unlock()
	return interval, nil
}

// addresses hands out made-up addresses: each node an InternalIP in
// 10.200.0.0/16, and its pods addresses in a /24 of 10.128.0.0/10 of their
// own (the embedded apiserver's services are in 10.0.0.0/16).
// No packet goes to them; they fill the fields a real kubelet fills.
type addresses struct {
	mu    sync.Mutex
	index map[string]uint32 // node name -> its number
	next  uint32
	pods  map[string]uint32 // node name -> last pod slot handed out
}

func newAddresses() *addresses {
	return &addresses{index: map[string]uint32{}, pods: map[string]uint32{}}
}

func (a *addresses) number(node string) uint32 {
	n, ok := a.index[node]
	if !ok {
		a.next++
		n = a.next
		a.index[node] = n
	}
	return n
}

func (a *addresses) node(node string) netip.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	return ipv4(10<<24 | 200<<16 | a.number(node)&0xffff)
}

func (a *addresses) pod(node string) netip.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.number(node) & 0x3fff
	slot := a.pods[node]%254 + 1
	a.pods[node] = slot
	return ipv4(10<<24 | 128<<16 | n<<8 | slot)
}

func (a *addresses) forget(node string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.index, node)
	delete(a.pods, node)
}

func ipv4(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
