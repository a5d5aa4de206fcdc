package plan

import (
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

// The ClusterOperator's relatedObjects are what `oc adm inspect` (and so
// must-gather) collects: the namespace, every object the module renders, and
// every object of each namespaced kind of MetalLB's and frr-k8s's in the
// namespace (a reference without a name). A platform where MetalLB is not
// deployed still names the namespace and the MetalLB objects.
func TestRelatedObjects(t *testing.T) {
	metallbKinds := []string{"metallb.io/bfdprofiles", "metallb.io/bgpadvertisements", "metallb.io/bgppeers",
		"metallb.io/communities", "metallb.io/configurationstates", "metallb.io/ipaddresspools", "metallb.io/l2advertisements",
		"metallb.io/servicebgpstatuses", "metallb.io/servicel2statuses", "metallb.io/metallbs"}
	frrK8sKinds := []string{"frrk8s.metallb.io/bgpsessionstates", "frrk8s.metallb.io/frrconfigurations"}
	cases := []struct {
		name     string
		cluster  func(*testing.T, Options) *Snapshot
		rendered int      // objects the plan renders, each of which must be named
		every    []string // "group/resource" with no name, in metallb-system
		scoped   []string // "group/resource" with no name, cluster-scoped
		absent   []string // "group/resource" that must not be named at all
	}{
		{name: "nothing configured", cluster: empty, rendered: len(foundation), every: metallbKinds, absent: []string{"apps/daemonsets"}},
		{name: "activated", cluster: with(empty, pool), rendered: len(foundation) + len(workloadParts), every: metallbKinds,
			absent: []string{"frrk8s.metallb.io/frrconfigurations"}},
		{name: "frr-k8s", cluster: with(running("A"), withSpec(frrK8sSpec)),
			rendered: len(foundation) + len(frrK8sCRDs) + len(workloadParts) + len(frrK8sParts) + 2, // frr-k8s's DaemonSet and webhook
			every:    append(slices.Clone(metallbKinds), frrK8sKinds...), scoped: []string{"frrk8s.metallb.io/frrnodestates"}},
		{name: "platform not allowed", cluster: with(running("A"), awsNodes), every: []string{"metallb.io/metallbs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := planOptions()
			p := Make(c.cluster(t, opts), opts, now)
			refs := p.Report(nil).ClusterOperator.RelatedObjects
			if !slices.Contains(refs, configv1.ObjectReference{Resource: "namespaces", Name: "metallb-system"}) {
				t.Errorf("the namespace is not named: %v", refs)
			}
			if len(p.rendered) != c.rendered {
				t.Errorf("%d objects rendered, want %d", len(p.rendered), c.rendered)
			}
			checkRenderedNamed(t, p, refs)
			for _, gr := range c.every {
				group, resource, _ := strings.Cut(gr, "/")
				if !slices.Contains(refs, configv1.ObjectReference{Group: group, Resource: resource, Namespace: "metallb-system"}) {
					t.Errorf("not every %s in metallb-system is named: %v", gr, refs)
				}
			}
			for _, gr := range c.scoped {
				group, resource, _ := strings.Cut(gr, "/")
				if !slices.Contains(refs, configv1.ObjectReference{Group: group, Resource: resource}) {
					t.Errorf("not every %s is named: %v", gr, refs)
				}
			}
			for _, gr := range c.absent {
				if slices.ContainsFunc(refs, func(r configv1.ObjectReference) bool { return r.Group+"/"+r.Resource == gr }) {
					t.Errorf("%s is named, and not rendered", gr)
				}
			}
			if n := len(slices.Compact(slices.Clone(refs))); n != len(refs) {
				t.Errorf("a reference is named twice: %v", refs)
			}
		})
	}
}

// resources are the resources of the kinds the module renders.
var resources = map[string]string{"Namespace": "namespaces", "CustomResourceDefinition": "customresourcedefinitions",
	"ServiceAccount": "serviceaccounts", "Role": "roles", "ClusterRole": "clusterroles", "RoleBinding": "rolebindings",
	"ClusterRoleBinding": "clusterrolebindings", "ConfigMap": "configmaps", "Secret": "secrets", "Service": "services",
	"NetworkPolicy": "networkpolicies", "Deployment": "deployments", "DaemonSet": "daemonsets",
	"ValidatingWebhookConfiguration": "validatingwebhookconfigurations"}

// checkRenderedNamed fails on a rendered object the references do not name.
func checkRenderedNamed(t *testing.T, p *Plan, refs []configv1.ObjectReference) {
	t.Helper()
	for _, o := range p.rendered {
		if !slices.ContainsFunc(refs, func(r configv1.ObjectReference) bool {
			return r.Name == o.GetName() && r.Namespace == o.GetNamespace() && r.Group == o.GroupVersionKind().Group &&
				r.Resource == resources[o.GetKind()]
		}) {
			t.Errorf("%s %s/%s is rendered and not named", o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}
}
