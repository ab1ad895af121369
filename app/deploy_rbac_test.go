package app_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"minisched/app"
	"minisched/k8sapiserver"
)

// serviceAccount is the identity deploy/minisched.yaml runs minisched as.
const serviceAccount = "system:serviceaccount:minisched:minisched"

// TestDeployRBAC applies deploy/minisched.yaml to a control plane that
// authorizes with RBAC (its Deployment, Service and example Pod as a
// server-side dry run: no kubelet runs here), then runs minisched attached
// as the manifests' ServiceAccount: it must lead and bind its pods, record
// the Scheduled Event, and be refused what attach mode never does.
func TestDeployRBAC(t *testing.T) {
	ctx := context.Background()
	app.QuietKlog(0)
	cp, err := k8sapiserver.Start(ctx, k8sapiserver.Config{RBAC: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range manifests(t) {
		if err := apply(ctx, admin, obj); err != nil {
			t.Fatalf("applying %T: %v", obj, err)
		}
	}
	as := impersonate(t, cp.RESTConfig(), serviceAccount)
	waitUntil(t, 30*time.Second, "RBAC to let the ServiceAccount list pods", func() bool {
		_, err := as.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})

	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: v1.NodeStatus{
		Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}}}
	if _, err := admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inst := start(t, func(f *app.Flags) {
		f.Kubeconfig = writeImpersonating(t, cp.RESTConfig(), serviceAccount)
		f.LeaderElectNamespace = "minisched"
	})
	waitUntil(t, 60*time.Second, "minisched to lead as the ServiceAccount", func() bool { return inst.Scheduler.State().State == "running" })
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "for-minisched"},
		Spec: v1.PodSpec{SchedulerName: "minisched", Containers: []v1.Container{{Name: "c", Image: "pause:3.10"}}}}
	if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the pod bound by minisched as the ServiceAccount", func() bool {
		p, err := admin.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "node-1"
	})
	waitUntil(t, 30*time.Second, "the Scheduled Event, written as the ServiceAccount", func() bool {
		events, err := admin.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Reason == "Scheduled" && e.Regarding.Name == pod.Name {
				return true
			}
		}
		return false
	})

	// What attach mode never does, the role does not allow.
	tests := []struct {
		name string
		do   func() error
	}{
		{"create a pod", func() error {
			_, err := as.CoreV1().Pods("default").Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: pod.Spec}, metav1.CreateOptions{})
			return err
		}},
		{"create a node", func() error {
			_, err := as.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		}},
		{"delete a node", func() error { return as.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{}) }},
		{"read secrets", func() error { _, err := as.CoreV1().Secrets("minisched").List(ctx, metav1.ListOptions{}); return err }},
		{"take another lease", func() error {
			_, err := as.CoordinationV1().Leases("minisched").Get(ctx, "someone-else", metav1.GetOptions{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); !apierrors.IsForbidden(err) {
				t.Errorf("the ServiceAccount may %s: %v, want forbidden", tt.name, err)
			}
		})
	}
}

// manifests decodes deploy/minisched.yaml.
func manifests(t *testing.T) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile("../deploy/minisched.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("deploy/minisched.yaml: %v\n%s", err, doc)
		}
		out = append(out, obj)
	}
	return out
}

// apply creates obj: for real what the apiserver alone makes use of
// (namespace, RBAC, policy), as a dry run what would need a kubelet.
func apply(ctx context.Context, c kubernetes.Interface, obj runtime.Object) error {
	real, dry := metav1.CreateOptions{}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	var err error
	switch o := obj.(type) {
	case *v1.Namespace:
		_, err = c.CoreV1().Namespaces().Create(ctx, o, real)
	case *v1.ServiceAccount:
		_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, real)
	case *rbacv1.ClusterRole:
		_, err = c.RbacV1().ClusterRoles().Create(ctx, o, real)
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, real)
	case *rbacv1.Role:
		_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, real)
	case *rbacv1.RoleBinding:
		_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, real)
	case *networkingv1.NetworkPolicy:
		_, err = c.NetworkingV1().NetworkPolicies(o.Namespace).Create(ctx, o, real)
	case *appsv1.Deployment:
		_, err = c.AppsV1().Deployments(o.Namespace).Create(ctx, o, dry)
	case *v1.Service:
		_, err = c.CoreV1().Services(o.Namespace).Create(ctx, o, dry)
	case *v1.Pod:
		_, err = c.CoreV1().Pods(o.Namespace).Create(ctx, o, dry)
	default:
		err = fmt.Errorf("deploy/minisched.yaml holds a %T this test does not apply", obj)
	}
	return err
}
