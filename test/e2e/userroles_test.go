package e2e

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// access is a request a user bound to a standard role makes in MetalLB's
// namespace, and whether the role allows it.
type access struct {
	role, verb, group, resource string
	allowed                     bool
}

var standardRoleAccess = []access{
	{"view", "list", "metallb.io", "ipaddresspools", true},
	{"view", "get", "metallb.io", "metallbs", true},
	{"view", "watch", "metallb.io", "servicel2statuses", true},
	{"view", "list", "metallb.io", "configurationstates", true},
	{"view", "list", "frrk8s.metallb.io", "frrconfigurations", true},
	{"view", "get", "frrk8s.metallb.io", "bgpsessionstates", true},
	{"view", "create", "metallb.io", "ipaddresspools", false},
	{"view", "delete", "metallb.io", "bgppeers", false},
	{"edit", "create", "metallb.io", "ipaddresspools", true},
	{"edit", "patch", "metallb.io", "metallbs", true},
	{"edit", "delete", "metallb.io", "l2advertisements", true},
	{"edit", "create", "frrk8s.metallb.io", "frrconfigurations", true},
	{"edit", "list", "metallb.io", "servicebgpstatuses", true},
	{"edit", "update", "metallb.io", "configurationstates", false},
	{"edit", "delete", "metallb.io", "servicel2statuses", false},
	{"edit", "patch", "frrk8s.metallb.io", "frrnodestates", false},
	{"admin", "update", "metallb.io", "bgppeers", true},
	{"admin", "deletecollection", "metallb.io", "communities", true},
	{"admin", "create", "metallb.io", "servicebgpstatuses", false},
}

// Installed from manifests/, MetalLB's kinds are in Kubernetes' standard
// roles, as kube-controller-manager aggregates them: a user bound to view in
// MetalLB's namespace reads MetalLB's configuration and reports and writes
// nothing; one bound to edit or admin also writes the configuration; none
// writes what MetalLB and frr-k8s report. The API server's authorizer answers
// each (a SubjectAccessReview).
func TestStandardRolesCoverMetalLB(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{ControllerManager: true})
	kubectl(t, env, "apply", "-k", manifestsDir)
	client := kubernetes.NewForConfigOrDie(env.Config)
	for _, role := range []string{"view", "edit", "admin"} {
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "user-" + role, Namespace: metallbNamespace},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "user-" + role}}}
		if _, err := client.RbacV1().RoleBindings(metallbNamespace).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	allowed := func(ctx context.Context, a access) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "user-" + a.role,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: metallbNamespace, Verb: a.verb, Group: a.group, Resource: a.resource}}}
		got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Allowed, nil
	}
	// The aggregation controller fills the standard roles a moment after the
	// ClusterRoles are created: wait for the last of them to count.
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := allowed(ctx, standardRoleAccess[len(standardRoleAccess)-2])
		return ok, err
	})
	if err != nil {
		t.Fatalf("the standard roles never took in MetalLB's kinds: %v", err)
	}
	for _, a := range standardRoleAccess {
		got, err := allowed(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		if got != a.allowed {
			t.Errorf("a user bound to %s: %s %s.%s allowed %v, want %v", a.role, a.verb, a.resource, a.group, got, a.allowed)
		}
	}
}
