package app_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"minisched/app"
	"minisched/cluster"
	"minisched/k8sapiserver"
	"minisched/snapshot"
)

// readers are the identities the source cluster knows: each may get, list
// and watch, and nothing else; one may not read pods.
var readers = map[string][]rbacv1.PolicyRule{
	"reader": {{APIGroups: []string{"", "scheduling.k8s.io", "storage.k8s.io", "node.k8s.io", "resource.k8s.io"},
		Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
	"reader-without-watch": {{APIGroups: []string{"", "scheduling.k8s.io", "storage.k8s.io", "node.k8s.io", "resource.k8s.io"},
		Resources: []string{"*"}, Verbs: []string{"get", "list"}}},
	"reader-without-pods": {
		{APIGroups: []string{""}, Resources: []string{"namespaces", "nodes", "persistentvolumes", "persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"scheduling.k8s.io", "storage.k8s.io", "node.k8s.io", "resource.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
}

// sourceCluster starts a control plane that authorizes with RBAC, fills it
// and writes, for each reader, a kubeconfig that acts as that reader.
func sourceCluster(t *testing.T) (admin kubernetes.Interface, kubeconfigs map[string]string) {
	t.Helper()
	app.QuietKlog(0)
	ctx := context.Background()
	cp, err := k8sapiserver.Start(ctx, k8sapiserver.Config{RBAC: true})
	if err != nil {
		t.Fatalf("starting the source control plane: %v", err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	admin, err = kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("creating %s in the source: %v", what, err)
		}
	}
	_, err = admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{})
	must("namespace shop", err)
	_, err = admin.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}, metav1.CreateOptions{})
	must("PriorityClass high", err)
	for _, name := range []string{"node-1", "node-2"} {
		_, err := admin.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourcePods: resource.MustParse("110")},
				Capacity:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourcePods: resource.MustParse("110")},
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}, metav1.CreateOptions{})
		must(name, err)
	}
	pods := []struct{ namespace, name, node, app string }{
		{"default", "api-1", "node-1", "api"},
		{"shop", "web-1", "node-2", "web"},
		{"shop", "web-2", "", "web"},
		{"shop", "batch-1", "", "batch"},
	}
	for _, p := range pods {
		// No scheduler runs in the source: the pods without a node stay
		// pending there.
		// The Priority admission knows class high once its informer has it.
		err := cluster.WaitForClass(ctx, func() error {
			_, err := admin.CoreV1().Pods(p.namespace).Create(ctx, &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: p.namespace, Name: p.name, Labels: map[string]string{"app": p.app}},
				Spec: v1.PodSpec{NodeName: p.node, PriorityClassName: "high", Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}}}, metav1.CreateOptions{})
			return err
		})
		must("pod "+p.namespace+"/"+p.name, err)
	}

	kubeconfigs = map[string]string{}
	for user, rules := range readers {
		_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{})
		must("ClusterRole "+user, err)
		_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}, metav1.CreateOptions{})
		must("ClusterRoleBinding "+user, err)
		kubeconfigs[user] = writeImpersonating(t, cp.RESTConfig(), user)
	}
	// RBAC reads its roles from a watch: wait until the reader may list.
	as := impersonate(t, cp.RESTConfig(), "reader")
	waitUntil(t, 30*time.Second, "RBAC to let the reader list pods", func() bool {
		_, err := as.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})
	return admin, kubeconfigs
}

func impersonate(t *testing.T, cfg *rest.Config, user string) kubernetes.Interface {
	t.Helper()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// writeImpersonating writes a kubeconfig whose requests act as user (the
// control plane's own identity may impersonate).
func writeImpersonating(t *testing.T, cfg *rest.Config, user string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["source"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, TLSServerName: cfg.ServerName}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Impersonate: user}
	kc.Contexts["source"] = &clientcmdapi.Context{Cluster: "source", AuthInfo: user}
	kc.CurrentContext = "source"
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// versions are the resourceVersions of the source's objects, by kind and
// name: any write to one would change it.
func versions(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		out["node "+n.Name] = n.ResourceVersion
	}
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		out["pod "+p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	namespaces, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces.Items {
		out["namespace "+ns.Name] = ns.ResourceVersion
	}
	classes, err := c.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range classes.Items {
		out["PriorityClass "+pc.Name] = pc.ResourceVersion
	}
	return out
}

// TestImportFromReadsOnly copies a real control plane, one that
// authorizes with RBAC, as an identity that may only get, list and watch:
// the copy holds what the filters pick, an identity that may not list
// pods is told so, and the source is never written.
func TestImportFromReadsOnly(t *testing.T) {
	admin, kubeconfigs := sourceCluster(t)
	before := versions(t, admin)
	tests := []struct {
		name       string
		user       string
		namespaces string
		selector   string
		pods       string
		wantPods   []string // namespace/name@node, pending pods @
		wantError  string
	}{
		{name: "everything", user: "reader",
			wantPods: []string{"default/api-1@node-1", "shop/batch-1@", "shop/web-1@node-2", "shop/web-2@"}},
		{name: "one namespace", user: "reader", namespaces: "shop",
			wantPods: []string{"shop/batch-1@", "shop/web-1@node-2", "shop/web-2@"}},
		{name: "bound pods", user: "reader", pods: "bound",
			wantPods: []string{"default/api-1@node-1", "shop/web-1@node-2"}},
		{name: "pending pods of a label", user: "reader", pods: "pending", selector: "app=web",
			wantPods: []string{"shop/web-2@"}},
		{name: "an identity that may not list pods", user: "reader-without-pods",
			wantError: "needs list on pods"},
		{name: "an identity that may not list pods of a namespace", user: "reader-without-pods", namespaces: "shop",
			wantError: "needs list on pods in namespace shop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := app.DefaultFlags()
			f.Addr = "127.0.0.1:0"
			// Pending pods stay pending in the copy, to compare with the
			// source; the scheduler would otherwise place them.
			f.Paused = true
			f.ImportFrom, f.ImportNamespaces, f.ImportSelector = kubeconfigs[tt.user], tt.namespaces, tt.selector
			if tt.pods != "" {
				f.ImportPods = tt.pods
			}
			inst, err := app.Start(context.Background(), f, quiet())
			if tt.wantError != "" {
				if err == nil {
					_ = inst.Close()
					t.Fatalf("the import went through, want an error with %q", tt.wantError)
				}
				if !strings.Contains(err.Error(), tt.wantError) {
					t.Errorf("error %q, want one with %q", err, tt.wantError)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatalf("starting minisched: %v", err)
			}
			defer func() { _ = inst.Close() }()
			pods, err := inst.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pods.Items {
				got = append(got, p.Namespace+"/"+p.Name+"@"+p.Spec.NodeName)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.wantPods) {
				t.Errorf("the copy holds pods %v, want %v", got, tt.wantPods)
			}
			nodes, err := inst.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
			if err != nil || len(nodes.Items) != 2 {
				t.Errorf("the copy holds nodes %v (%v), want node-1 and node-2", nodes, err)
			}
		})
	}
	if after := versions(t, admin); !maps.Equal(before, after) {
		t.Errorf("the source changed during the imports:\nbefore %v\nafter  %v", before, after)
	}

	t.Run("the reader may not write", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigs["reader"])
		if err != nil {
			t.Fatal(err)
		}
		reader, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = reader.CoreV1().Nodes().Delete(context.Background(), "node-1", metav1.DeleteOptions{})
		if err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("the reader deleted a node: %v", err)
		}
	})
	t.Run("the import's client sends no write, whoever it is", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigs["reader"])
		if err != nil {
			t.Fatal(err)
		}
		cfg.Impersonate = rest.ImpersonationConfig{} // the control plane's own identity: it may do anything
		client, err := kubernetes.NewForConfig(snapshot.ReadOnly(cfg))
		if err != nil {
			t.Fatal(err)
		}
		err = client.CoreV1().Nodes().Delete(context.Background(), "node-1", metav1.DeleteOptions{})
		if err == nil || !strings.Contains(err.Error(), "only reads") {
			t.Errorf("a read-only client sent a delete: %v", err)
		}
		if _, err := client.CoreV1().Nodes().Get(context.Background(), "node-1", metav1.GetOptions{}); err != nil {
			t.Errorf("the node went, or a read-only client cannot read: %v", err)
		}
	})
}
