package main

import (
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

const (
	// metallbGrants names the ClusterRole and the Role that hold exactly what
	// MetalLB's roles grant, so that the operator may create and bind them.
	metallbGrants = "cluster-network-operator-metallb-grants"
	operatorSA    = "cluster-network-operator"
)

// restrictedKinds are the kinds whose patch, update and delete the operator
// may do only on the names it renders: changing another one could widen what
// someone, the operator included, may do. (Roles and RoleBindings are those in
// MetalLB's namespace, where the operator's own grants are too.)
var restrictedKinds = map[string]string{
	"rbac.authorization.k8s.io/clusterroles":                       "ClusterRole",
	"rbac.authorization.k8s.io/clusterrolebindings":                "ClusterRoleBinding",
	"rbac.authorization.k8s.io/roles":                              "Role",
	"rbac.authorization.k8s.io/rolebindings":                       "RoleBinding",
	"admissionregistration.k8s.io/validatingwebhookconfigurations": "ValidatingWebhookConfiguration",
	"apiextensions.k8s.io/customresourcedefinitions":               "CustomResourceDefinition",
	"/namespaces": "Namespace",
}

// operatorRBAC is what the manifests bind to the operator's service account:
// its rules everywhere, and in each namespace; grants are the rules of the
// metallbGrants roles, cluster-wide ("") and by namespace.
type operatorRBAC struct {
	cluster     []rbacv1.PolicyRule
	inNamespace map[string][]rbacv1.PolicyRule
	grants      map[string][]rbacv1.PolicyRule
}

// assertRBACCannotBeWidened checks that the operator cannot widen its own
// permissions (TestInstallManifestsAgreeWithTheCode runs it, so `make verify`
// does): no role of the manifests has escalate, bind or impersonate, or a
// wildcard but the wildcard verbs MetalLB's own roles have; patch, update and
// delete on the restricted kinds are granted only on names the operator
// renders, and patch on every one of them; and the metallbGrants roles grant
// exactly what MetalLB's rendered roles grant, no less (else the API server
// refuses the operator MetalLB's roles) and no more, judged as the API
// server's escalation check judges it.
func assertRBACCannotBeWidened(t *testing.T, objs []*unstructured.Unstructured) {
	rendered := renderMetalLB(t)
	rbac := boundToOperator(t, objs)
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "Role" {
			var role rbacv1.ClusterRole
			fromUnstructured(t, o, &role)
			assertNoWideningRules(t, o.GetKind()+" "+o.GetName(), role.Rules)
		}
	}
	all := slices.Clone(rbac.cluster)
	for _, rules := range rbac.inNamespace {
		all = append(all, rules...)
	}
	assertRestrictedNames(t, all, rendered)

	var clusterRoles []rbacv1.PolicyRule
	namespaced := map[string][]rbacv1.PolicyRule{}
	for _, o := range rendered {
		var role rbacv1.ClusterRole
		switch o.GetKind() {
		case "ClusterRole":
			fromUnstructured(t, o, &role)
			clusterRoles = append(clusterRoles, role.Rules...)
		case "Role":
			fromUnstructured(t, o, &role)
			namespaced[o.GetNamespace()] = append(namespaced[o.GetNamespace()], role.Rules...)
		default:
			continue
		}
		// What the API server checks when the operator writes or binds the role.
		held := slices.Concat(rbac.cluster, rbac.inNamespace[o.GetNamespace()])
		if missing := uncovered(held, role.Rules); len(missing) > 0 {
			t.Errorf("MetalLB's %s %s grants what the operator does not hold, so it could not create or bind it:\n  %s",
				o.GetKind(), o.GetName(), strings.Join(missing, "\n  "))
		}
	}
	assertSameGrants(t, "ClusterRole "+metallbGrants, rbac.grants[""], "MetalLB's ClusterRoles", clusterRoles)
	for ns, rules := range namespaced {
		assertSameGrants(t, "Role "+metallbGrants+" in "+ns, rbac.grants[ns], "MetalLB's Roles in "+ns, rules)
	}
}

// renderMetalLB returns what the operator renders with MetalLB's webhooks, the
// frr-k8s BGP backend and OpenShift's monitoring and SCCs, which is every
// object it may render: the native backend's objects, frr-k8s's, the
// monitoring objects, the SCC grants.
func renderMetalLB(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	images, err := manifests.ImagesFromEnv(func(string) string { return "" }, "0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	frrK8s := &v1beta1.MetalLB{Spec: v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s}}
	// Everything it may render: the frr-k8s backend, and OpenShift's monitoring.
	env := manifests.Environment{Namespace: manifests.DefaultNamespace, Images: images, Webhooks: true, Monitoring: true, OpenShift: true,
		SCCAdmission: true}
	s, err := manifests.SettingsFor(env, frrK8s)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifests.Render(s, "")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// boundToOperator collects the rules of the roles that the manifests' bindings
// give the operator's service account.
func boundToOperator(t *testing.T, objs []*unstructured.Unstructured) operatorRBAC {
	t.Helper()
	roles := map[string][]rbacv1.PolicyRule{} // "Kind namespace/name"
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "Role" {
			var role rbacv1.ClusterRole
			fromUnstructured(t, o, &role)
			roles[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = role.Rules
		}
	}
	rbac := operatorRBAC{inNamespace: map[string][]rbacv1.PolicyRule{}, grants: map[string][]rbacv1.PolicyRule{}}
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding
		fromUnstructured(t, o, &b)
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == operatorSA && s.Namespace == operatorSA
		}) {
			continue
		}
		roleNamespace := o.GetNamespace()
		if b.RoleRef.Kind == "ClusterRole" {
			roleNamespace = ""
		}
		rules, ok := roles[b.RoleRef.Kind+" "+roleNamespace+"/"+b.RoleRef.Name]
		if !ok {
			t.Fatalf("%s %s binds %s %s, which the manifests lack", o.GetKind(), o.GetName(), b.RoleRef.Kind, b.RoleRef.Name)
		}
		if o.GetKind() == "ClusterRoleBinding" {
			rbac.cluster = append(rbac.cluster, rules...)
		} else {
			rbac.inNamespace[o.GetNamespace()] = append(rbac.inNamespace[o.GetNamespace()], rules...)
		}
		if b.RoleRef.Name == metallbGrants {
			rbac.grants[o.GetNamespace()] = append(rbac.grants[o.GetNamespace()], rules...)
		}
	}
	return rbac
}

// assertNoWideningRules fails on the verbs that let a user grant itself more
// (escalate, bind, impersonate) and on wildcards; the metallbGrants roles may
// have the wildcard verbs MetalLB's roles have (assertSameGrants holds them to
// those), on named resources.
func assertNoWideningRules(t *testing.T, role string, rules []rbacv1.PolicyRule) {
	t.Helper()
	for _, r := range rules {
		for _, verb := range []string{"escalate", "bind", "impersonate"} {
			if slices.Contains(r.Verbs, verb) {
				t.Errorf("%s grants %s: %+v", role, verb, r)
			}
		}
		for _, list := range [][]string{r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
			if slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, "*") }) {
				t.Errorf("%s has a wildcard: %+v", role, r)
			}
		}
		if slices.Contains(r.Verbs, "*") && !strings.HasSuffix(role, " "+metallbGrants) {
			t.Errorf("%s has a wildcard verb: %+v", role, r)
		}
	}
}

// assertRestrictedNames checks that every rule that grants patch, update or
// delete on a restricted kind names the objects, only ones the operator
// renders, and that patch is granted on every one it renders.
func assertRestrictedNames(t *testing.T, rules []rbacv1.PolicyRule, rendered []*unstructured.Unstructured) {
	t.Helper()
	renderedNames := map[string][]string{}
	for _, o := range rendered {
		renderedNames[o.GetKind()] = append(renderedNames[o.GetKind()], o.GetName())
	}
	for resource, kind := range restrictedKinds {
		group, plural, _ := strings.Cut(resource, "/")
		if len(renderedNames[kind]) == 0 {
			t.Errorf("the operator renders no %s: restrictedKinds is out of date", kind)
		}
		named := map[string]map[string]bool{} // verb -> names
		for _, r := range rules {
			if !slices.Contains(r.APIGroups, group) || !slices.Contains(r.Resources, plural) {
				continue
			}
			for _, verb := range r.Verbs {
				if verb != "patch" && verb != "update" && verb != "delete" && verb != "*" {
					continue
				}
				if len(r.ResourceNames) == 0 {
					t.Errorf("%s %s is granted on every name: %+v", verb, resource, r)
				}
				for _, name := range r.ResourceNames {
					if !slices.Contains(renderedNames[kind], name) {
						t.Errorf("%s %s is granted on %q, which the operator does not render", verb, resource, name)
					}
					if named[verb] == nil {
						named[verb] = map[string]bool{}
					}
					named[verb][name] = true
				}
			}
		}
		for _, name := range renderedNames[kind] {
			if !named["patch"][name] {
				t.Errorf("patch %s is not granted on %q, which the operator renders and applies", resource, name)
			}
		}
	}
}

// assertSameGrants checks that two sets of rules grant the same permissions.
func assertSameGrants(t *testing.T, what string, rules []rbacv1.PolicyRule, want string, wantRules []rbacv1.PolicyRule) {
	t.Helper()
	if len(rules) == 0 {
		t.Errorf("the operator is not bound to %s", what)
	}
	if missing := uncovered(rules, wantRules); len(missing) > 0 {
		t.Errorf("%s lacks what %s grant:\n  %s", what, want, strings.Join(missing, "\n  "))
	}
	if extra := uncovered(wantRules, rules); len(extra) > 0 {
		t.Errorf("%s grants more than %s:\n  %s", what, want, strings.Join(extra, "\n  "))
	}
}

// uncovered returns the permissions of rules that owner does not grant, as
// the API server's escalation check finds them: each rule broken down into
// one verb of one resource (or URL) of one group, with one name, each needing
// an owner rule that holds all of it. A "*" is held only by a "*", and a
// permission without names only by a rule without names.
func uncovered(owner, rules []rbacv1.PolicyRule) []string {
	var missing []string
	for _, sub := range breakdown(rules) {
		if !slices.ContainsFunc(owner, func(o rbacv1.PolicyRule) bool { return covers(o, sub) }) {
			missing = append(missing, describe(sub))
		}
	}
	sort.Strings(missing)
	return slices.Compact(missing)
}

func breakdown(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		for _, verb := range r.Verbs {
			for _, url := range r.NonResourceURLs {
				out = append(out, rbacv1.PolicyRule{Verbs: []string{verb}, NonResourceURLs: []string{url}})
			}
			for _, group := range r.APIGroups {
				for _, resource := range r.Resources {
					one := rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{group}, Resources: []string{resource}}
					if len(r.ResourceNames) == 0 {
						out = append(out, one)
					}
					for _, name := range r.ResourceNames {
						one.ResourceNames = []string{name}
						out = append(out, one)
					}
				}
			}
		}
	}
	return out
}

// covers tells whether owner holds sub, a rule of one verb, group, resource
// and name (or one URL).
func covers(owner, sub rbacv1.PolicyRule) bool {
	holds := func(list []string, v []string) bool {
		return slices.Contains(list, "*") || len(v) == 0 || slices.Contains(list, v[0])
	}
	if len(sub.NonResourceURLs) > 0 {
		return holds(owner.Verbs, sub.Verbs) && holds(owner.NonResourceURLs, sub.NonResourceURLs)
	}
	names := len(owner.ResourceNames) == 0 || (len(sub.ResourceNames) == 1 && slices.Contains(owner.ResourceNames, sub.ResourceNames[0]))
	return names && holds(owner.Verbs, sub.Verbs) && holds(owner.APIGroups, sub.APIGroups) && holds(owner.Resources, sub.Resources)
}

// describe says what a rule of one verb grants: "patch clusterroles.rbac.authorization.k8s.io named admin".
func describe(r rbacv1.PolicyRule) string {
	if len(r.NonResourceURLs) > 0 {
		return r.Verbs[0] + " " + r.NonResourceURLs[0]
	}
	what := r.Verbs[0] + " " + r.Resources[0]
	if r.APIGroups[0] != "" {
		what += "." + r.APIGroups[0]
	}
	if len(r.ResourceNames) > 0 {
		what += " named " + r.ResourceNames[0]
	}
	return what
}
