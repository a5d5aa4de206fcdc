package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

var (
	clusterRoleKind        = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	clusterRoleBindingKind = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}
	roleKind               = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}
	roleBindingKind        = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}
	crdKind                = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	webhookConfigKind      = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
	namespaceKind          = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	sccKind                = schema.GroupVersionKind{Group: "security.openshift.io", Version: "v1", Kind: "SecurityContextConstraints"}
)

// foreignObjects are objects of the kinds the operator writes that it does not
// render, created by the admin: what the operator must not change.
const foreignObjects = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: example-no-rules
rules: []
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: example-webhook-configuration
webhooks: []
`

// attempt is one request the operator's service account makes.
type attempt struct {
	what string
	do   func(context.Context, client.Client) error
}

// Installed from manifests/, the operator's service account (by impersonation)
// can do what the operator does: create MetalLB's roles and bind them, without
// escalate or bind, and label what it renders. It cannot widen its own
// permissions: not by adding a rule to a MetalLB role it writes, not by binding
// cluster-admin to itself, and not by changing a ClusterRole, a
// ClusterRoleBinding, a CRD, a webhook configuration or a Namespace it does not
// render (the example ClusterRole has no rules, so only resourceNames keep the
// operator from it), nor hand what it holds to everyone through its own
// RoleBinding. On OpenShift (its SCC API and default SCCs here) it lets
// MetalLB's accounts use their SCCs, and can neither create or change an SCC
// nor let any account use another SCC.
func TestOperatorCannotWidenItsOwnPermissions(t *testing.T) {
	world.SideBySide(t, world.Beside)
	if testing.Short() {
		t.Skip("needs a control plane: not run with -short")
	}
	env := testenv.New(t, testenv.Options{SCCAdmission: true})
	kubectl(t, env, "apply", "-k", manifestsDir)
	kubectl(t, env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_03_scc.yaml"))
	kubectl(t, env, "apply", "-f", writeTemp(t, foreignObjects))
	operator, err := client.New(impersonateOperator(env.Config), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, o := range renderedToApply(t) {
		err := operator.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("cluster-network-operator"), client.ForceOwnership)
		if err != nil {
			t.Fatalf("as the operator, applying MetalLB's %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	t.Log("as the operator: applied MetalLB's Roles, ClusterRoles, their bindings, CRDs and webhook configuration")
	for _, a := range allowedAttempts() {
		if err := a.do(ctx, operator); err != nil {
			t.Errorf("as the operator, %s: %v; want it allowed", a.what, err)
		}
	}
	for _, a := range widening() {
		switch err := a.do(ctx, operator); {
		case apierrors.IsForbidden(err):
			t.Logf("as the operator, %s: Forbidden: %v", a.what, err)
		default:
			t.Errorf("as the operator, %s: %v; want Forbidden", a.what, err)
		}
	}
}

// impersonateOperator is the admin's configuration acting as the operator's
// service account, with the groups the API server gives a service account.
func impersonateOperator(admin *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: operatorAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNamespace, "system:authenticated"},
	}
	return cfg
}

// renderedToApply are the objects MetalLB's default render has of the kinds
// whose writes RBAC limits here: its RBAC, CRDs and webhook configuration.
func renderedToApply(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return rendered(t, v1beta1.BGPBackendNative, "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
		"CustomResourceDefinition", "ValidatingWebhookConfiguration")
}

// rendered are the objects of those kinds that the operator renders with
// the defaults and a BGP backend, where pods are admitted by SCCs (which adds
// their grants).
func rendered(t *testing.T, backend v1beta1.BGPBackend, kinds ...string) []*unstructured.Unstructured {
	t.Helper()
	images, err := manifests.ImagesFromEnv(func(string) string { return "" }, "4.22.0")
	if err != nil {
		t.Fatal(err)
	}
	obj := &v1beta1.MetalLB{Spec: v1beta1.MetalLBSpec{BGPBackend: backend}}
	env := manifests.Environment{Namespace: metallbNamespace, Images: images, Webhooks: true, SCCAdmission: true}
	s, err := manifests.SettingsFor(env, obj)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifests.Render(s, "")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return !slices.Contains(kinds, o.GetKind()) })
}

// allowedAttempts are the counterparts of the widening attempts: the same
// kinds of writes on what the operator renders, which leave its permissions as
// they are.
func allowedAttempts() []attempt {
	return []attempt{
		labelPatch(clusterRoleKind, "", "metallb-system:controller"),
		labelPatch(clusterRoleBindingKind, "", "metallb-system:speaker"),
		labelPatch(roleKind, metallbNamespace, "pod-lister"),
		labelPatch(roleBindingKind, metallbNamespace, "speaker-scc"),
		labelPatch(crdKind, "", "ipaddresspools.metallb.io"),
		labelPatch(webhookConfigKind, "", "metallb-webhook-configuration"),
		labelPatch(namespaceKind, "", metallbNamespace),
	}
}

// widening are the attempts that would give the operator more than it has.
func widening() []attempt {
	everythingOnSecrets := `[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["*"]}}]`
	execInPods := `[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["pods/exec"],"verbs":["create"]}}]`
	addSelf := `[{"op":"add","path":"/subjects/-","value":{"kind":"ServiceAccount","name":"cluster-network-operator","namespace":"` + operatorNamespace + `"}}]`
	addEveryone := `[{"op":"add","path":"/subjects/-","value":{"kind":"Group","name":"system:authenticated","apiGroup":"rbac.authorization.k8s.io"}}]`
	return []attempt{
		jsonPatch("adding all verbs on secrets to ClusterRole metallb-system:controller", clusterRoleKind, "", "metallb-system:controller", everythingOnSecrets),
		jsonPatch("adding pods/exec to Role pod-lister in "+metallbNamespace, roleKind, metallbNamespace, "pod-lister", execInPods),
		{what: "creating a ClusterRoleBinding of cluster-admin to itself", do: bindClusterAdminToSelf},
		jsonPatch("adding itself to ClusterRoleBinding cluster-admin", clusterRoleBindingKind, "", "cluster-admin", addSelf),
		// Not the operator's own permissions, but what it holds handed to everyone.
		jsonPatch("adding every user to RoleBinding cluster-network-operator-metallb-grants in "+metallbNamespace,
			roleBindingKind, metallbNamespace, "cluster-network-operator-metallb-grants", addEveryone),
		labelPatch(clusterRoleKind, "", "admin"),
		labelPatch(clusterRoleKind, "", "example-no-rules"),
		{what: "deleting ClusterRole example-no-rules", do: func(ctx context.Context, c client.Client) error {
			return c.Delete(ctx, object(clusterRoleKind, "", "example-no-rules"))
		}},
		labelPatch(crdKind, "", "widgets.example.com"),
		labelPatch(webhookConfigKind, "", "example-webhook-configuration"),
		labelPatch(namespaceKind, "", "default"),
		{what: "creating an SCC that lets every user run privileged pods", do: createPrivilegedSCC},
		labelPatch(sccKind, "", "restricted-v2"),
		labelPatch(sccKind, "", manifests.SpeakerSCC),
		{what: "creating a Role that lets the speaker use SCC anyuid", do: func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: metallbNamespace, Name: "speaker-anyuid"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{"security.openshift.io"}, Resources: []string{"securitycontextconstraints"},
					ResourceNames: []string{"anyuid"}, Verbs: []string{"use"}}}})
		}},
		{what: "binding system:openshift:scc:hostaccess to the speaker", do: func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: metallbNamespace, Name: "speaker-hostaccess"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:openshift:scc:hostaccess"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: manifests.SpeakerName, Namespace: metallbNamespace}}})
		}},
	}
}

// createPrivilegedSCC creates an SCC that every authenticated user may use
// (its groups field grants it without RBAC) and that admits privileged pods.
func createPrivilegedSCC(ctx context.Context, c client.Client) error {
	scc := object(sccKind, "", "everyone-privileged")
	scc.Object["allowPrivilegedContainer"] = true
	scc.Object["groups"] = []any{"system:authenticated"}
	for _, strategy := range []string{"runAsUser", "seLinuxContext", "fsGroup", "supplementalGroups"} {
		scc.Object[strategy] = map[string]any{"type": "RunAsAny"}
	}
	return c.Create(ctx, scc)
}

func bindClusterAdminToSelf(ctx context.Context, c client.Client) error {
	return c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-network-operator-cluster-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "cluster-network-operator", Namespace: operatorNamespace}},
	})
}

// labelPatch adds a label, which changes no permission.
func labelPatch(gvk schema.GroupVersionKind, namespace, name string) attempt {
	what := "labelling " + gvk.Kind + " " + name
	return attempt{what: what, do: func(ctx context.Context, c client.Client) error {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"example.com/touched":"true"}}}`))
		return c.Patch(ctx, object(gvk, namespace, name), patch)
	}}
}

func jsonPatch(what string, gvk schema.GroupVersionKind, namespace, name, patch string) attempt {
	return attempt{what: what, do: func(ctx context.Context, c client.Client) error {
		return c.Patch(ctx, object(gvk, namespace, name), client.RawPatch(types.JSONPatchType, []byte(patch)))
	}}
}

func object(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(namespace)
	o.SetName(name)
	return o
}
