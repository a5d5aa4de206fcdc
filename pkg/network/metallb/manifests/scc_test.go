package manifests

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Where pods are admitted by SCCs, every rendered pod template names the SCC
// its workload is granted, and a Role of MetalLB's namespace lets that pod's
// service account, and only it, use that SCC; elsewhere no pod names one and
// no role grants one. Every scenario, so every kind of pod the module renders.
func TestEveryPodNamesTheSCCItIsGranted(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			objs := sc.render(t)
			granted := sccGrantsOf(t, objs)
			for _, o := range objs {
				spec, ok := podSpecOf(t, o)
				if !ok {
					continue
				}
				annotations, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "annotations")
				required, named := annotations[RequiredSCCAnnotation]
				switch {
				case !sc.openshift && named:
					t.Errorf("%s %s names SCC %v off OpenShift", o.GetKind(), o.GetName(), required)
				case sc.openshift && !named:
					t.Errorf("%s %s names no SCC (%s)", o.GetKind(), o.GetName(), RequiredSCCAnnotation)
				case named && !slices.Contains(granted[spec.ServiceAccountName], required):
					t.Errorf("%s %s requires SCC %v, which its account %s is not granted (grants: %v)", o.GetKind(), o.GetName(), required, spec.ServiceAccountName, granted)
				}
			}
			if !sc.openshift && len(granted) > 0 {
				t.Errorf("SCCs granted off OpenShift: %v", granted)
			}
		})
	}
}

// podSpecOf returns the pod template's spec of a Deployment or DaemonSet.
func podSpecOf(t *testing.T, o *unstructured.Unstructured) (corev1.PodSpec, bool) {
	t.Helper()
	if o.GetKind() != "Deployment" && o.GetKind() != "DaemonSet" {
		return corev1.PodSpec{}, false
	}
	var spec corev1.PodSpec
	fields, _, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fields, &spec); err != nil {
		t.Fatal(err)
	}
	return spec, true
}

// sccGrantsOf returns, by service account, the SCCs the rendered Roles and
// RoleBindings let it use.
func sccGrantsOf(t *testing.T, objs []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	roles := map[string][]string{}
	for _, o := range objs {
		if o.GetKind() != "Role" {
			continue
		}
		var role rbacv1.Role
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			if slices.Contains(r.Resources, "securitycontextconstraints") && slices.Contains(r.Verbs, "use") {
				roles[role.Name] = append(roles[role.Name], r.ResourceNames...)
			}
		}
	}
	granted := map[string][]string{}
	for _, o := range objs {
		var b rbacv1.RoleBinding
		if o.GetKind() != "RoleBinding" || runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b) != nil || len(roles[b.RoleRef.Name]) == 0 {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != o.GetNamespace() {
				t.Errorf("RoleBinding %s binds %s, not a service account of its namespace", b.Name, fmt.Sprint(s))
			}
			granted[s.Name] = append(granted[s.Name], roles[b.RoleRef.Name]...)
		}
	}
	return granted
}
