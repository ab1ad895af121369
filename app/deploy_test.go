package app_test

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"minisched/app"
)

// The compose file, the Dockerfile and the in-cluster manifests are checked
// the way they will be used: every flag they pass must be one minisched
// takes, the ports must stay on loopback by default, and the image must be
// built by the script CI runs. hack/compose-check.sh builds and runs the
// image for real; it needs a Docker engine and is too slow for every run.

func TestComposeFile(t *testing.T) {
	data, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Build struct {
				Context string            `json:"context"`
				Network string            `json:"network"`
				Args    map[string]string `json:"args"`
			} `json:"build"`
			Image       string            `json:"image"`
			Command     []string          `json:"command"`
			Environment map[string]string `json:"environment"`
			Restart     string            `json:"restart"`
			StopGrace   string            `json:"stop_grace_period"`
			Ports       []string          `json:"ports"`
			Volumes     []string          `json:"volumes"`
		} `json:"services"`
		Volumes map[string]any `json:"volumes"`
	}
	if err := yaml.UnmarshalStrict(data, &compose); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	svc, ok := compose.Services["minisched"]
	if !ok || svc.Build.Context != "." {
		t.Fatalf("no minisched service built from the Dockerfile: %+v", compose.Services)
	}
	// Where no registry answers, the base image is a build argument; the
	// module proxy comes from the caller, never from a file.
	if got := substituteDefaults(svc.Build.Args["GO_IMAGE"]); got == "" || substituteDefaults(svc.Build.Args["GOPROXY"]) != "" {
		t.Errorf("build args %v: want GO_IMAGE with a default and GOPROXY from the environment only", svc.Build.Args)
	}
	args := make([]string, len(svc.Command))
	for i, a := range svc.Command {
		args[i] = substituteDefaults(a)
	}
	f, err := app.ParseFlags(args)
	if err != nil {
		t.Fatalf("the compose command %v: %v", args, err)
	}
	if f.Token != "" {
		t.Errorf("the compose command carries the token: it belongs in the environment")
	}
	if got := substituteDefaults(svc.Environment["MINISCHED_PUBLISHED_ON"]); got != "127.0.0.1" || !strings.Contains(svc.Environment["MINISCHED_TOKEN"], "${MINISCHED_TOKEN") {
		t.Errorf("environment %v: want the token passed through and the loopback publish stated", svc.Environment)
	}
	if f.DataDir != "/data" || f.ScenariosDir != "/scenarios" {
		t.Errorf("compose runs with --data-dir %q --scenarios-dir %q, want the mounted /data and /scenarios", f.DataDir, f.ScenariosDir)
	}
	if len(svc.Ports) != 1 || substituteDefaults(svc.Ports[0]) != "127.0.0.1:8080:8080" {
		t.Errorf("ports %v: by default the dashboard must be published on the host's loopback", svc.Ports)
	}
	mounts := strings.Join(svc.Volumes, " ")
	if !strings.Contains(mounts, ":/data") || !strings.Contains(mounts, ":/scenarios") {
		t.Errorf("volumes %v: want /data and a folder of scenarios", svc.Volumes)
	}
}

var defaultRef = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`)

// substituteDefaults resolves ${VAR:-default} as compose does with VAR unset.
func substituteDefaults(s string) string { return defaultRef.ReplaceAllString(s, "$1") }

func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"hack/build.sh /out/minisched", "FROM ${GO_IMAGE}", "FROM scratch", "USER 65532"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	cmd := regexp.MustCompile(`(?m)^CMD \[(.*)\]`).FindStringSubmatch(text)
	if cmd == nil {
		t.Fatal("no CMD")
	}
	var args []string
	for _, a := range strings.Split(cmd[1], ",") {
		args = append(args, strings.Trim(strings.TrimSpace(a), `"`))
	}
	if _, err := app.ParseFlags(args); err != nil {
		t.Errorf("the image's CMD %v: %v", args, err)
	}
	build, err := os.ReadFile("../hack/build.sh")
	if err != nil || !bytes.Contains(build, []byte("CGO_ENABLED=0")) {
		t.Errorf("hack/build.sh must build a CGO-free static binary")
	}
	test, err := os.ReadFile("../hack/test.sh")
	if err != nil || !bytes.Contains(test, []byte("hack/build.sh")) {
		t.Errorf("hack/test.sh must build with hack/build.sh, as the image does")
	}
}

func TestDeployManifests(t *testing.T) {
	objects := manifests(t)
	var deployment *appsv1.Deployment
	var role *rbacv1.ClusterRole
	var leaseRole *rbacv1.Role
	var policy *networkingv1.NetworkPolicy
	for _, o := range objects {
		switch o := o.(type) {
		case *appsv1.Deployment:
			deployment = o
		case *rbacv1.ClusterRole:
			role = o
		case *rbacv1.Role:
			leaseRole = o
		case *networkingv1.NetworkPolicy:
			policy = o
		}
	}
	if deployment == nil || role == nil || leaseRole == nil || policy == nil {
		t.Fatalf("want a Deployment, a ClusterRole, a Role for the lease and a NetworkPolicy, got %d objects", len(objects))
	}
	c := deployment.Spec.Template.Spec.Containers[0]
	f, err := app.ParseFlags(c.Args)
	if err != nil {
		t.Fatalf("the Deployment's args %v: %v", c.Args, err)
	}
	if !f.InCluster || !f.LeaderElect || f.SchedulerName != "minisched" {
		t.Errorf("the Deployment runs %+v, want in-cluster with leader election as minisched", f)
	}
	if *deployment.Spec.Replicas < 2 {
		t.Errorf("one replica: leader election is not exercised")
	}
	for _, need := range [][2]string{{"pods/binding", "create"}, {"pods/status", "patch"}, {"nodes", "watch"}, {"pods", "watch"}, {"events", "create"}} {
		if !allows(role.Rules, need[0], need[1]) {
			t.Errorf("the ClusterRole does not allow %s on %s", need[1], need[0])
		}
	}
	// Least privilege: nothing minisched never calls, no writes to nodes.
	for _, unused := range [][2]string{{"tokenreviews", "create"}, {"subjectaccessreviews", "create"}, {"pods/finalizers", "update"}, {"nodes", "create"}, {"nodes", "delete"}, {"pods", "create"}} {
		if allows(role.Rules, unused[0], unused[1]) {
			t.Errorf("the ClusterRole allows %s on %s, which minisched never does", unused[1], unused[0])
		}
	}
	// The lease is the one leader election uses: named after the scheduler.
	var leaseNamed bool
	for _, r := range leaseRole.Rules {
		leaseNamed = leaseNamed || contains(r.Resources, "leases") && contains(r.ResourceNames, f.SchedulerName) && contains(r.Verbs, "update")
	}
	if !leaseNamed {
		t.Errorf("the lease Role %+v does not name the lease %q", leaseRole.Rules, f.SchedulerName)
	}
	// The token comes from a Secret; the dashboard is open to its namespace.
	var fromSecret bool
	for _, e := range c.Env {
		fromSecret = fromSecret || e.Name == "MINISCHED_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}
	if !fromSecret || f.Token != "" || f.AllowWrites {
		t.Errorf("the Deployment must take its token from a Secret and only read the cluster: env %v, flags %+v", c.Env, f)
	}
	if len(policy.Spec.Ingress) != 1 || len(policy.Spec.Ingress[0].From) != 1 || policy.Spec.Ingress[0].From[0].NamespaceSelector != nil {
		t.Errorf("the NetworkPolicy lets in %+v, want the pods of its own namespace only", policy.Spec.Ingress)
	}
}

func allows(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if contains(r.Resources, resource) && contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
