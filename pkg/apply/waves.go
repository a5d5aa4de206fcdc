package apply

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// Kinds whose creation depends on no other object but their namespace, or,
// for those that follow, on the kinds named.
var (
	serviceAccount     = schema.GroupKind{Kind: "ServiceAccount"}
	configMap          = schema.GroupKind{Kind: "ConfigMap"}
	secret             = schema.GroupKind{Kind: "Secret"}
	service            = schema.GroupKind{Kind: "Service"}
	networkPolicy      = objects.NetworkPolicy.GroupKind()
	role               = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}
	clusterRole        = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}
	roleBinding        = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}
	clusterRoleBinding = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}
	deployment         = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	daemonSet          = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
)

// needs names, for the kinds known, what an object of the kind may need to
// exist when it is written: a binding, the role it grants (the API server
// checks a binder that may not bind against the role's rules); a workload,
// what its pods use (without its ServiceAccount the controller's pod
// creations fail and back off). A kind known and not needing a kind may be
// written beside objects of it.
var needs = map[schema.GroupKind][]schema.GroupKind{
	serviceAccount:     nil,
	configMap:          nil,
	secret:             nil,
	service:            nil,
	networkPolicy:      nil,
	role:               nil,
	clusterRole:        nil,
	roleBinding:        {role, clusterRole},
	clusterRoleBinding: {clusterRole},
	deployment:         {serviceAccount, configMap, secret},
	daemonSet:          {serviceAccount, configMap, secret},
}

// mayNeed tells whether an object of kind later may need an object of kind
// earlier written before it: objects of one kind never do; a kind not known
// (a Namespace, a CRD, a webhook configuration...) needs, or is needed by,
// every other.
func mayNeed(later, earlier schema.GroupKind) bool {
	if later == earlier {
		return false
	}
	laterNeeds, laterKnown := needs[later]
	_, earlierKnown := needs[earlier]
	if !laterKnown || !earlierKnown {
		return true
	}
	return slices.Contains(laterNeeds, earlier)
}

// mayNeedObject is mayNeed for two objects: besides their kinds, a default
// deny (objects.IsDefaultDeny) needs the other NetworkPolicies written before
// it, the allow-lists; and a workload needs the bindings that let its
// service account use an SCC (sccGrants), without which OpenShift's SCC
// admission refuses its pods.
func mayNeedObject(later, earlier *unstructured.Unstructured, sccGrants map[*unstructured.Unstructured]bool) bool {
	lk, ek := later.GroupVersionKind().GroupKind(), earlier.GroupVersionKind().GroupKind()
	if lk == networkPolicy && ek == networkPolicy {
		return objects.IsDefaultDeny(later) && !objects.IsDefaultDeny(earlier)
	}
	if isWorkload(later) && sccGrants[earlier] {
		return true
	}
	return mayNeed(lk, ek)
}

func isWorkload(o *unstructured.Unstructured) bool {
	gk := o.GroupVersionKind().GroupKind()
	return gk == deployment || gk == daemonSet
}

// waves orders objs into waves whose objects may be written at once: each
// object goes in the first wave after those of the earlier objects it may
// need. An object of a kind not known so comes after every earlier one of
// another kind, and every later one after it. The workloads and what they
// need come first, in waves of their own, so that nothing they do not need
// (Services, NetworkPolicies, roles and their bindings, monitoring, webhook
// configuration) stands in front of them: a Deployment or a DaemonSet waits
// for its ServiceAccount, ConfigMaps and Secrets alone, as an activation
// must. Within a wave, objs' order is kept.
func waves(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	sccGrants := sccGrantsOf(objs)
	needed := neededByWorkloads(objs, sccGrants)
	var first, rest []*unstructured.Unstructured
	for i, o := range objs {
		if needed[i] {
			first = append(first, o)
		} else {
			rest = append(rest, o)
		}
	}
	return append(levels(first, sccGrants), levels(rest, sccGrants)...)
}

// neededByWorkloads marks the workloads of objs and every earlier object
// one of them may need, directly or through another.
func neededByWorkloads(objs []*unstructured.Unstructured, sccGrants map[*unstructured.Unstructured]bool) []bool {
	needed := make([]bool, len(objs))
	for i := len(objs) - 1; i >= 0; i-- {
		needed[i] = isWorkload(objs[i])
		for j := i + 1; j < len(objs) && !needed[i]; j++ {
			needed[i] = needed[j] && mayNeedObject(objs[j], objs[i], sccGrants)
		}
	}
	return needed
}

// levels cuts objs into waves, each object in the first wave after those of
// the earlier objects it may need.
func levels(objs []*unstructured.Unstructured, sccGrants map[*unstructured.Unstructured]bool) [][]*unstructured.Unstructured {
	var out [][]*unstructured.Unstructured
	level := make([]int, len(objs))
	for i, o := range objs {
		for j := range i {
			if mayNeedObject(o, objs[j], sccGrants) {
				level[i] = max(level[i], level[j]+1)
			}
		}
		for len(out) <= level[i] {
			out = append(out, nil)
		}
		out[level[i]] = append(out[level[i]], o)
	}
	return out
}

// sccGrantsOf returns the RoleBindings of objs that bind a Role of objs
// granting the use of SecurityContextConstraints.
func sccGrantsOf(objs []*unstructured.Unstructured) map[*unstructured.Unstructured]bool {
	sccRoles := map[string]bool{}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == role && grantsSCCUse(o) {
			sccRoles[o.GetNamespace()+"/"+o.GetName()] = true
		}
	}
	grants := map[*unstructured.Unstructured]bool{}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != roleBinding {
			continue
		}
		kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
		if kind == role.Kind && sccRoles[o.GetNamespace()+"/"+name] {
			grants[o] = true
		}
	}
	return grants
}

// grantsSCCUse tells whether a Role's rules grant `use` of
// SecurityContextConstraints.
func grantsSCCUse(r *unstructured.Unstructured) bool {
	rules, _, _ := unstructured.NestedSlice(r.Object, "rules")
	for _, rule := range rules {
		rule, _ := rule.(map[string]any)
		resources, _, _ := unstructured.NestedStringSlice(rule, "resources")
		verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
		if slices.Contains(resources, "securitycontextconstraints") && slices.Contains(verbs, "use") {
			return true
		}
	}
	return false
}
