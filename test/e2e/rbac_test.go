package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// request is what the audit log tells of one request.
type request = testenv.Request

// readAudit returns the resource requests a user made (testenv.ReadAudit),
// and fails when there is none.
func readAudit(t *testing.T, file, user string) []request {
	t.Helper()
	out, err := testenv.ReadAudit(file, user)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("the audit log has no request of %s", user)
	}
	return out
}

// grant is one rule the manifests give the operator: a ClusterRole's
// everywhere, a Role's in its namespace. forMetalLB marks the rules held only
// so that the operator may create and bind MetalLB's roles.
type grant struct {
	role       string
	namespace  string // "" for a ClusterRole
	rule       rbacv1.PolicyRule
	forMetalLB bool
}

// metallbGrants names the ClusterRole and the Role of the manifests that hold
// exactly what MetalLB's roles grant (pkg/operator's tests hold them to that).
const metallbGrants = "cluster-network-operator-metallb-grants"

// rbacObject is what the manifests' roles and bindings say.
type rbacObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name, Namespace string
	} `json:"metadata"`
	Rules    []rbacv1.PolicyRule `json:"rules"`
	RoleRef  rbacv1.RoleRef      `json:"roleRef"`
	Subjects []rbacv1.Subject    `json:"subjects"`
}

// readGrants reads the rules of the ClusterRoles and Roles that the manifests
// bind to the operator's service account.
func readGrants(t *testing.T, dir string) []grant {
	t.Helper()
	roles := map[string]rbacObject{}
	var bindings []rbacObject
	for _, o := range readRBACObjects(t, dir) {
		switch o.Kind {
		case "ClusterRole", "Role":
			roles[o.Kind+" "+o.Metadata.Namespace+"/"+o.Metadata.Name] = o
		case "ClusterRoleBinding", "RoleBinding":
			bindings = append(bindings, o)
		}
	}
	var grants []grant
	for _, b := range bindings {
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && "system:serviceaccount:"+s.Namespace+":"+s.Name == operatorAccount
		}) {
			continue
		}
		roleNamespace := b.Metadata.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			roleNamespace = ""
		}
		role, ok := roles[b.RoleRef.Kind+" "+roleNamespace+"/"+b.RoleRef.Name]
		if !ok {
			t.Fatalf("%s %s binds %s %s, which the manifests lack", b.Kind, b.Metadata.Name, b.RoleRef.Kind, b.RoleRef.Name)
		}
		for _, r := range role.Rules {
			grants = append(grants, grant{role: role.Kind + " " + role.Metadata.Name, namespace: b.Metadata.Namespace, rule: r,
				forMetalLB: role.Metadata.Name == metallbGrants})
		}
	}
	if len(grants) == 0 {
		t.Fatalf("no ClusterRole or Role rules bound to %s in %s", operatorAccount, dir)
	}
	return grants
}

func readRBACObjects(t *testing.T, dir string) []rbacObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []rbacObject
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		decoder := yaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var o rbacObject
			if err := decoder.Decode(&o); err != nil {
				break
			}
			objs = append(objs, o)
		}
		f.Close()
	}
	return objs
}

// allows tells whether the grant covers a request.
func (g grant) allows(r request, verb string) bool {
	if g.namespace != "" && g.namespace != r.Namespace {
		return false
	}
	if len(g.rule.ResourceNames) > 0 && !slices.Contains(g.rule.ResourceNames, r.Name) {
		return false
	}
	return slices.Contains(g.rule.APIGroups, r.Group) && slices.Contains(g.rule.Resources, r.Resource) && slices.Contains(g.rule.Verbs, verb)
}

// checkGrants fails on wildcards, on requests refused or not granted, and on
// permissions granted and never used. The rules held for MetalLB's roles
// (forMetalLB) are out of both counts: the API server needs them when the
// operator writes or binds MetalLB's roles, which no request of the audit log
// shows, and a request they alone allow would break when MetalLB's next release
// grants less; pkg/operator's TestInstallManifestsAgreeWithTheCode holds them to
// MetalLB's roles instead. The operator holds no escalate or bind. Patching
// events is what client-go's event recorder does when an Event repeats within
// minutes, which a story does only by chance: creating events counts as its use.
func checkGrants(t *testing.T, grants []grant, used []request) {
	t.Helper()
	grants = slices.DeleteFunc(slices.Clone(grants), func(g grant) bool { return g.forMetalLB })
	for _, g := range grants {
		for _, list := range [][]string{g.rule.APIGroups, g.rule.Resources, g.rule.Verbs} {
			if slices.Contains(list, "*") {
				t.Errorf("%s grants a wildcard: %+v", g.role, g.rule)
			}
		}
	}
	notGranted := map[string]bool{}
	for _, r := range used {
		if r.Code == 403 || !slices.ContainsFunc(grants, func(g grant) bool { return g.allows(r, r.Verb) }) {
			notGranted[fmt.Sprintf("%s (%d)", r, r.Code)] = true
		}
	}
	var unused []string
	for _, g := range grants {
		for _, group := range g.rule.APIGroups {
			for _, resource := range g.rule.Resources {
				for _, verb := range g.rule.Verbs {
					if !usedFor(g, group, resource, verb, used) {
						unused = append(unused, fmt.Sprintf("%s: %s %s", g.role, verb, request{Group: group, Resource: resource}.GroupResource()))
					}
				}
			}
		}
	}
	if len(notGranted) > 0 {
		t.Errorf("requests the RBAC does not grant (or that were refused):\n  %s", strings.Join(sorted(notGranted), "\n  "))
	}
	if len(unused) > 0 {
		t.Errorf("permissions granted and never used:\n  %s", strings.Join(unused, "\n  "))
	}
	if !t.Failed() {
		t.Logf("%d requests of the operator, all granted; every permission of the %d rules used", len(used), len(grants))
	}
}

func usedFor(g grant, group, resource, verb string, used []request) bool {
	one := grant{role: g.role, namespace: g.namespace, rule: rbacv1.PolicyRule{
		APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}, ResourceNames: g.rule.ResourceNames}}
	if group == "events.k8s.io" && resource == "events" && verb == "patch" {
		verb = "create"
		one.rule.Verbs = []string{verb}
	}
	return slices.ContainsFunc(used, func(r request) bool { return one.allows(r, r.Verb) && r.Code != 403 })
}

func sorted(set map[string]bool) []string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
