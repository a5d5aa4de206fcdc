package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// request is what the audit log tells of one request: enough to match RBAC.
type request struct {
	Verb, Group, Resource, Namespace, Name string
	Code                                   int
}

func (r request) String() string {
	where := "cluster-wide"
	if r.Namespace != "" {
		where = "in " + r.Namespace
	}
	return fmt.Sprintf("%s %s %s", r.Verb, groupResource(r.Group, r.Resource), where)
}

func groupResource(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// readAudit returns the resource requests a user made, as RBAC authorizes
// them: a watch that starts with the initial events (client-go's informers
// list that way) is also the list it replaces, and a server-side apply that
// created its object is also a create.
func readAudit(t *testing.T, file, user string) []request {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []request
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var e struct {
			Verb string `json:"verb"`
			User struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				Resource, Subresource, APIGroup, Namespace, Name string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			RequestURI string `json:"requestURI"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.User.Username != user || e.ObjectRef == nil {
			continue // another user, or discovery, which every user may do
		}
		resource := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			resource += "/" + e.ObjectRef.Subresource
		}
		r := request{Verb: e.Verb, Group: e.ObjectRef.APIGroup, Resource: resource,
			Namespace: e.ObjectRef.Namespace, Name: e.ObjectRef.Name, Code: e.ResponseStatus.Code}
		out = append(out, r)
		switch {
		case r.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true"):
			r.Verb = "list"
			out = append(out, r)
		case r.Verb == "patch" && r.Code == 201:
			r.Verb = "create"
			out = append(out, r)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("the audit log has no request of %s", user)
	}
	return out
}

// grant is one rule of the manifests' roles: a ClusterRole's everywhere, a
// Role's in its namespace.
type grant struct {
	role      string
	namespace string // "" for a ClusterRole
	rule      rbacv1.PolicyRule
}

// readGrants reads the rules of the ClusterRoles and Roles in the manifests.
func readGrants(t *testing.T, dir string) []grant {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var grants []grant
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		decoder := yaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var role struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name, Namespace string
				} `json:"metadata"`
				Rules []rbacv1.PolicyRule `json:"rules"`
			}
			if err := decoder.Decode(&role); err != nil {
				break
			}
			if role.Kind != "ClusterRole" && role.Kind != "Role" {
				continue
			}
			for _, r := range role.Rules {
				grants = append(grants, grant{role: role.Kind + " " + role.Metadata.Name, namespace: role.Metadata.Namespace, rule: r})
			}
		}
		f.Close()
	}
	if len(grants) == 0 {
		t.Fatalf("no ClusterRole or Role rules in %s", dir)
	}
	return grants
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
// permissions granted and never used. escalate and bind are no requests of
// their own: the API server checks them when a role is written (escalate) or
// a binding to it (bind; MetalLB's bindings are named after their roles), so
// those writes count as their use. Patching events is what client-go's event
// recorder does when an Event repeats within minutes, which a story does only
// by chance: creating events counts as its use.
func checkGrants(t *testing.T, grants []grant, used []request) {
	t.Helper()
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
						unused = append(unused, fmt.Sprintf("%s: %s %s", g.role, verb, groupResource(group, resource)))
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
	for _, r := range used {
		switch {
		case verb == "escalate" && r.Group == group && r.Resource == resource && isWrite(r.Verb):
			if one.allows(r, "escalate") {
				return true
			}
		case verb == "bind" && r.Group == group && r.Resource == strings.TrimSuffix(resource, "s")+"bindings" && isWrite(r.Verb):
			bound := r
			bound.Resource = resource
			if one.allows(bound, "bind") {
				return true
			}
		case one.allows(r, r.Verb) && r.Code != 403:
			return true
		}
	}
	return false
}

func isWrite(verb string) bool { return verb == "create" || verb == "update" || verb == "patch" }

func sorted(set map[string]bool) []string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
