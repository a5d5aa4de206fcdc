package apply

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Objects are written in waves of those that need none of each other, the
// workloads and what they need first: an activation's ServiceAccounts,
// ConfigMaps and Secrets at once, then the workloads, then the rest.
// everyPod, after a NetworkPolicy's kind, makes its podSelector empty; scc,
// after a Role's, has it grant the use of an SCC, and after a RoleBinding's,
// binds that Role.
const (
	everyPod = ":every-pod"
	scc      = ":scc"
)

func TestWaves(t *testing.T) {
	for _, c := range []struct {
		name  string
		kinds []string // apiVersion/Kind, in the order given
		want  string   // the waves, by kind, "|" between waves
	}{
		{"nothing", nil, ""},
		{"one kind, one wave", []string{"v1/Secret", "v1/Secret"}, "Secret Secret"},
		{"an activation, in the templates' order",
			[]string{"v1/Namespace", "apiextensions.k8s.io/v1/CustomResourceDefinition", "apiextensions.k8s.io/v1/CustomResourceDefinition",
				"v1/ServiceAccount", "rbac.authorization.k8s.io/v1/Role", "rbac.authorization.k8s.io/v1/ClusterRole",
				"rbac.authorization.k8s.io/v1/RoleBinding", "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
				"v1/ConfigMap", "v1/Secret", "v1/Service", "apps/v1/Deployment", "apps/v1/DaemonSet",
				"admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration"},
			"Namespace|CustomResourceDefinition CustomResourceDefinition|ServiceAccount ConfigMap Secret|Deployment DaemonSet|" +
				"Role ClusterRole Service|RoleBinding ClusterRoleBinding|ValidatingWebhookConfiguration"},
		{"on OpenShift, a workload after the binding that lets it use its SCC (and every role, as a binding may need any), not after another binding",
			[]string{"v1/ServiceAccount", "rbac.authorization.k8s.io/v1/Role", "rbac.authorization.k8s.io/v1/Role" + scc,
				"rbac.authorization.k8s.io/v1/RoleBinding", "rbac.authorization.k8s.io/v1/RoleBinding" + scc, "apps/v1/DaemonSet"},
			"ServiceAccount Role Role|RoleBinding|DaemonSet|RoleBinding"},
		{"frr-k8s's RBAC, then MetalLB's: each binding after its role only",
			[]string{"rbac.authorization.k8s.io/v1/Role", "rbac.authorization.k8s.io/v1/RoleBinding",
				"rbac.authorization.k8s.io/v1/Role", "rbac.authorization.k8s.io/v1/RoleBinding"},
			"Role Role|RoleBinding RoleBinding"},
		{"a binding waits for a ClusterRole", []string{"rbac.authorization.k8s.io/v1/ClusterRole", "rbac.authorization.k8s.io/v1/RoleBinding"},
			"ClusterRole|RoleBinding"},
		{"a workload waits for its ServiceAccount", []string{"v1/ServiceAccount", "apps/v1/DaemonSet"}, "ServiceAccount|DaemonSet"},
		{"a workload before a Service it does not need", []string{"v1/Service", "apps/v1/Deployment"}, "Deployment|Service"},
		{"a kind not known stands alone", []string{"v1/Secret", "example.com/v1/Widget", "v1/Secret"}, "Secret|Widget|Secret"},
		{"a default deny after the allow-lists before it", []string{"networking.k8s.io/v1/NetworkPolicy",
			"networking.k8s.io/v1/NetworkPolicy", "networking.k8s.io/v1/NetworkPolicy" + everyPod, "v1/Service"},
			"NetworkPolicy NetworkPolicy Service|NetworkPolicy"},
		{"a default deny first waits for nothing", []string{"networking.k8s.io/v1/NetworkPolicy" + everyPod,
			"networking.k8s.io/v1/NetworkPolicy"}, "NetworkPolicy NetworkPolicy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			for _, k := range c.kinds {
				objs = append(objs, objectOfKind(k))
			}
			var got []string
			for _, w := range waves(objs) {
				var kinds []string
				for _, o := range w {
					kinds = append(kinds, o.GetKind())
				}
				got = append(got, strings.Join(kinds, " "))
			}
			if g := strings.Join(got, "|"); g != c.want {
				t.Errorf("waves:\n got %s\nwant %s", g, c.want)
			}
			if n := slices.Concat(waves(objs)...); len(n) != len(objs) {
				t.Errorf("%d objects in the waves, want %d", len(n), len(objs))
			}
		})
	}
}

// objectOfKind makes an object of apiVersion/Kind, with the everyPod suffix
// on a NetworkPolicy's kind for an empty podSelector.
func objectOfKind(k string) *unstructured.Unstructured {
	k, all := strings.CutSuffix(k, everyPod)
	k, grant := strings.CutSuffix(k, scc)
	i := strings.LastIndex(k, "/")
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(k[:i])
	o.SetKind(k[i+1:])
	switch {
	case grant && o.GetKind() == "Role":
		o.SetName("speaker-scc")
		o.Object["rules"] = []any{map[string]any{"apiGroups": []any{"security.openshift.io"},
			"resources": []any{"securitycontextconstraints"}, "verbs": []any{"use"}}}
	case grant && o.GetKind() == "RoleBinding":
		o.Object["roleRef"] = map[string]any{"kind": "Role", "name": "speaker-scc"}
	case o.GetKind() == "RoleBinding":
		o.Object["roleRef"] = map[string]any{"kind": "Role", "name": "pod-lister"}
	}
	if o.GetKind() == "NetworkPolicy" {
		selector := map[string]any{}
		if !all {
			selector["matchLabels"] = map[string]any{"component": "controller"}
		}
		_ = unstructured.SetNestedMap(o.Object, selector, "spec", "podSelector")
	}
	return o
}
