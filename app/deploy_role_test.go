package app_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// TestDeployRoleCoversKubeScheduler: deploy/minisched.yaml's ClusterRole
// grants what upstream's own role for kube-scheduler, system:kube-scheduler
// (bootstrappolicy, with v1.37.2's default gates), grants, but for what
// minisched does not do, each named with its reason. So a plugin that works
// under kube-scheduler is not refused under minisched on a real cluster
// (DRA's PreBind writes resourceclaims/binding; an extended resource's claim
// is created and deleted by the scheduler). TestDeployManifests holds the
// other side: nothing minisched never does.
func TestDeployRoleCoversKubeScheduler(t *testing.T) {
	notNeeded := map[string]string{
		"coordination.k8s.io/leases":                "the leader Lease is minisched's own, named after --scheduler-name, in the Role minisched-leader-election",
		"coordination.k8s.io/leasecandidates":       "coordinated leader election is kube-scheduler's, not a second scheduler's",
		"authentication.k8s.io/tokenreviews":        "kube-scheduler's delegated authentication of its /metrics; minisched has its own token",
		"authorization.k8s.io/subjectaccessreviews": "likewise, its delegated authorization",
		"pods/finalizers":                           "upstream grants it with DRA, but the one claim its scheduler creates (an extended resource's) does not block its owner's deletion, so OwnerReferencesPermissionEnforcement asks for no finalizers right",
	}
	var ours []rbacv1.PolicyRule
	for _, obj := range manifests(t) {
		if r, ok := obj.(*rbacv1.ClusterRole); ok && r.Name == "minisched" {
			ours = r.Rules
		}
	}
	if ours == nil {
		t.Fatal("deploy/minisched.yaml has no ClusterRole minisched")
	}
	var upstream []rbacv1.PolicyRule
	for _, r := range bootstrappolicy.ClusterRoles() {
		if r.Name == "system:kube-scheduler" {
			upstream = r.Rules
		}
	}
	if upstream == nil {
		t.Fatal("bootstrappolicy has no system:kube-scheduler")
	}
	_, uncovered := rbacvalidation.Covers(ours, upstream)
	var missing []string
	for _, r := range uncovered {
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				key := strings.TrimPrefix(group+"/"+res, "/")
				if _, ok := notNeeded[key]; !ok {
					missing = append(missing, fmt.Sprintf("%s %v", key, r.Verbs))
				}
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("deploy/minisched.yaml's ClusterRole lacks what kube-scheduler's role grants:\n  %s", strings.Join(slices.Compact(missing), "\n  "))
	}
}
