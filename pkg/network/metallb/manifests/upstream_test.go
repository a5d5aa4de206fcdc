package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/render"
)

// upstream are MetalLB's own manifests at the pinned release, one for each BGP
// backend the module offers, and the scenario rendered against each; copied
// verbatim by `make update-bindata` and held to it by `make verify`.
var upstream = []struct{ manifest, scenario string }{
	{"metallb-native.yaml", "defaults"},
	{"metallb-frr-k8s.yaml", "frr-k8s"},
}

// Our objects are MetalLB's own, object for object and field for field, apart
// from the deliberate differences below, each explained where the template
// makes it. When the pinned MetalLB changes, this test lists what drifted.
func TestRenderedObjectsMatchUpstream(t *testing.T) {
	for _, u := range upstream {
		t.Run(u.scenario, func(t *testing.T) {
			i := slices.IndexFunc(scenarios, func(sc scenario) bool { return sc.name == u.scenario })
			matchUpstream(t, byKindName(t, readUpstream(t, u.manifest)), byKindName(t, scenarios[i].render(t)))
		})
	}
}

func matchUpstream(t *testing.T, upstream, ours map[string]*unstructured.Unstructured) {
	for key, up := range upstream {
		if up.GetKind() == "CustomResourceDefinition" {
			// Copied verbatim from config/crd/bases (hack/update-bindata.sh), which
			// lack the manifest's conversion: the module sets it as the manifest does.
			want, _, _ := unstructured.NestedMap(up.Object, "spec", "conversion")
			got, _, _ := unstructured.NestedMap(ours[key].Object, "spec", "conversion")
			if want != nil && !cmp.Equal(want, got) {
				t.Errorf("%s converts as %v, upstream's manifest as %v", key, got, want)
			}
			continue
		}
		our, ok := ours[key]
		if !ok && !omitted[key] {
			t.Errorf("upstream's %s is not rendered", key)
		}
		if !ok {
			continue
		}
		up, our = withoutKustomizeOwnership(up.DeepCopy()), our.DeepCopy()
		removeOwnership(our)
		withoutTLSArgs(t, key, our)
		if explain, ok := deliberate[key]; ok {
			explain(t, up, our)
			continue
		}
		if diff := cmp.Diff(up.Object, our.Object); diff != "" {
			t.Errorf("%s drifted from upstream (-upstream +ours):\n%s", key, diff)
		}
	}
	for key := range ours {
		if _, ok := upstream[key]; !ok && !additions[key] {
			t.Errorf("%s is rendered but is neither upstream's nor a listed addition", key)
		}
	}
}

// MetalLB's frr-k8s manifest carries frr-k8s's own objects, moved to MetalLB's
// namespace: the frr-k8s objects the module renders are therefore frr-k8s's
// own manifest at the release MetalLB names, apart from the deliberate
// differences TestRenderedObjectsMatchUpstream checks.
func TestMetalLBsFRRK8sIsFRRK8sOwn(t *testing.T) {
	metallbs := byKindName(t, readUpstream(t, "metallb-frr-k8s.yaml"))
	data, err := os.ReadFile(filepath.Join("testdata", "upstream", "frr-k8s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.ReplaceAll(string(data), "namespace: frr-k8s-system", "namespace: "+DefaultNamespace)
	for key, own := range byKindName(t, decodeManifest(t, "frr-k8s.yaml", []byte(moved))) {
		if own.GetKind() == "Namespace" {
			continue
		}
		if diff := cmp.Diff(own.Object, metallbs[key].Object); diff != "" {
			t.Errorf("%s: MetalLB's frr-k8s manifest differs from frr-k8s's own (-frr-k8s +MetalLB):\n%s", key, diff)
		}
	}
}

// withoutKustomizeOwnership removes the Ownership labels frr-k8s's manifest
// gives its objects, which the operator's replace.
func withoutKustomizeOwnership(o *unstructured.Unstructured) *unstructured.Unstructured {
	labels := o.GetLabels()
	if labels[ManagedByLabel] == "kustomize" {
		delete(labels, ManagedByLabel)
		delete(labels, PartOfLabel)
		setOrRemove(o, "labels", labels)
	}
	return o
}

// omitted are upstream's objects rendered only where they serve: frr-k8s's
// metrics Service, for the ServiceMonitors and OpenShift's service CA
// (render.go, MetricsServices).
var omitted = map[string]bool{"Service/frr-k8s-metrics-service": true}

// additions are objects upstream's native manifest does not have.
var additions = map[string]bool{
	"CustomResourceDefinition/metallbs.metallb.io": true, // this operator's own API
	"Secret/memberlist":                            true, // upstream's controller creates it, owned by its Deployment
	"ConfigMap/metallb-memberlist-config":          true, // optional upstream: the speakers' memberlist timing
	"NetworkPolicy/default-deny":                   true, // upstream's chart has them, off by default
	"NetworkPolicy/controller":                     true,
}

// withoutPodDefaults checks that a workload's pods have the operator's
// priority class and requests, and removes them, which upstream leaves unset.
func withoutPodDefaults(t *testing.T, our *unstructured.Unstructured, d podDefaults) {
	t.Helper()
	pod := []string{"spec", "template", "spec"}
	if class, _, _ := unstructured.NestedString(our.Object, append(pod, "priorityClassName")...); class != d.priorityClassName {
		t.Errorf("%s priorityClassName is %q, want %q", our.GetName(), class, d.priorityClassName)
	}
	unstructured.RemoveNestedField(our.Object, append(pod, "priorityClassName")...)
	containers, _, _ := unstructured.NestedSlice(our.Object, append(pod, "containers")...)
	c := containers[0].(map[string]any)
	requests, _, _ := unstructured.NestedStringMap(c, "resources", "requests")
	for name, q := range d.requests {
		if requests[string(name)] != q.String() {
			t.Errorf("%s requests %s %q, want %q", our.GetName(), name, requests[string(name)], q.String())
		}
	}
	delete(c, "resources")
	_ = unstructured.SetNestedSlice(our.Object, containers, append(pod, "containers")...)
}

// tlsServers are the containers, by object, that serve TLS (metrics,
// webhooks): the operator gives each the cluster's TLS profile, which
// upstream's manifests leave to the binaries' default (TLS 1.3 only).
var tlsServers = map[string][]string{
	"Deployment/controller":            {"controller"},
	"DaemonSet/speaker":                {"speaker"},
	"DaemonSet/frr-k8s-daemon":         {"controller", "frr-metrics"},
	"Deployment/frr-k8s-statuscleaner": {"frr-k8s-statuscleaner"},
}

// withoutTLSArgs checks and removes the --tls-* flags of the object's TLS
// servers; no other container may have them.
func withoutTLSArgs(t *testing.T, key string, our *unstructured.Unstructured) {
	t.Helper()
	path := []string{"spec", "template", "spec", "containers"}
	containers, found, _ := unstructured.NestedSlice(our.Object, path...)
	if !found {
		return
	}
	for _, c := range containers {
		c := c.(map[string]any)
		args, _, _ := unstructured.NestedStringSlice(c, "args")
		kept := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "--tls-") })
		if serves := slices.Contains(tlsServers[key], c["name"].(string)); serves != slices.ContainsFunc(args, func(a string) bool {
			return strings.HasPrefix(a, "--tls-min-version=")
		}) {
			t.Errorf("%s container %s has --tls-min-version %t, want %t", key, c["name"], !serves, serves)
		}
		if len(kept) != len(args) {
			_ = unstructured.SetNestedStringSlice(c, kept, "args")
		}
	}
	_ = unstructured.SetNestedSlice(our.Object, containers, path...)
}

// deliberate compares the objects that differ on purpose: each function checks
// the difference, removes it from both sides, and then wants them equal.
var deliberate = map[string]func(t *testing.T, upstream, ours *unstructured.Unstructured){
	"DaemonSet/speaker": func(t *testing.T, up, our *unstructured.Unstructured) {
		wantRollingUpdate(t, our)
		grace := []string{"spec", "template", "spec", "terminationGracePeriodSeconds"}
		upGrace, _, _ := unstructured.NestedInt64(up.Object, grace...)
		ourGrace, _, _ := unstructured.NestedInt64(our.Object, grace...)
		if ourGrace <= upGrace {
			t.Errorf("speaker grace period is %ds; want longer than upstream's %ds so the speaker can leave memberlist", ourGrace, upGrace)
		}
		unstructured.RemoveNestedField(up.Object, grace...)
		unstructured.RemoveNestedField(our.Object, grace...)
		withoutPodDefaults(t, our, speakerDefaults)
		withoutMemberlistDigest(t, our)
		wantEqual(t, "DaemonSet/speaker", up, withoutReleaseVersion(t, our))
	},
	"Deployment/controller": func(t *testing.T, up, our *unstructured.Unstructured) {
		// The operator, not the controller, creates the memberlist Secret.
		env := []string{"spec", "template", "spec", "containers"}
		containers, _, _ := unstructured.NestedSlice(up.Object, env...)
		container := containers[0].(map[string]any)
		var kept []any
		for _, e := range container["env"].([]any) {
			if e.(map[string]any)["name"] != "METALLB_ML_SECRET_NAME" {
				kept = append(kept, e)
			}
		}
		if len(kept) != len(container["env"].([]any))-1 {
			t.Error("upstream's controller no longer has METALLB_ML_SECRET_NAME: revisit who creates the memberlist Secret")
		}
		container["env"] = kept
		_ = unstructured.SetNestedSlice(up.Object, containers, env...)
		if replicas, _, _ := unstructured.NestedInt64(our.Object, "spec", "replicas"); replicas != 1 {
			t.Errorf("controller replicas is %d, want 1 set explicitly", replicas)
		}
		unstructured.RemoveNestedField(our.Object, "spec", "replicas")
		withoutPodDefaults(t, our, controllerDefaults)
		wantEqual(t, "Deployment/controller", up, withoutReleaseVersion(t, our))
	},
	"ClusterRole/metallb-system:controller": withoutMetricsAuthRules,
	"ClusterRole/metallb-system:speaker":    withoutMetricsAuthRules,
	"Secret/metallb-webhook-cert":           createdOnly,
	"Secret/frr-k8s-webhook-server-cert":    createdOnly,
	"DaemonSet/frr-k8s-daemon": func(t *testing.T, up, our *unstructured.Unstructured) {
		wantRollingUpdate(t, our)
		if got, _, _ := unstructured.NestedInt64(our.Object, "spec", "minReadySeconds"); got != frrK8sMinReadySeconds {
			t.Errorf("frr-k8s minReadySeconds is %d, want %d", got, frrK8sMinReadySeconds)
		}
		unstructured.RemoveNestedField(our.Object, "spec", "minReadySeconds")
		withoutFRRProbeTimeouts(t, our)
		pod := []string{"spec", "template", "spec"}
		want := map[string]any{"nodeSelector": map[string]any{"kubernetes.io/os": "linux"}, "priorityClassName": speakerDefaults.priorityClassName}
		for field, value := range want {
			if got, _, _ := unstructured.NestedFieldNoCopy(our.Object, append(pod, field)...); !cmp.Equal(got, value) {
				t.Errorf("frr-k8s %s is %v, want the speakers' %v", field, got, value)
			}
			unstructured.RemoveNestedField(our.Object, append(pod, field)...)
		}
		wantEqual(t, "DaemonSet/frr-k8s-daemon", up, withoutReleaseVersion(t, our))
	},
	"Deployment/frr-k8s-statuscleaner": func(t *testing.T, up, our *unstructured.Unstructured) {
		wantEqual(t, "Deployment/frr-k8s-statuscleaner", up, withoutReleaseVersion(t, our))
	},
	"ValidatingWebhookConfiguration/metallb-webhook-configuration": func(t *testing.T, up, our *unstructured.Unstructured) {
		// An artefact of upstream's generator, not a field anyone sets.
		unstructured.RemoveNestedField(up.Object, "metadata", "creationTimestamp")
		wantEqual(t, "ValidatingWebhookConfiguration/metallb-webhook-configuration", up, our)
	},
}

// withoutFRRProbeTimeouts checks and removes the timeout of the frr
// container's liveness and startup probes, which wait longer than upstream's
// (the default 1 s) for FRR on a busy node.
func withoutFRRProbeTimeouts(t *testing.T, our *unstructured.Unstructured) {
	t.Helper()
	path := []string{"spec", "template", "spec", "containers"}
	containers, _, _ := unstructured.NestedSlice(our.Object, path...)
	for _, c := range containers {
		container := c.(map[string]any)
		if container["name"] != "frr" {
			continue
		}
		for _, probe := range []string{"livenessProbe", "startupProbe"} {
			if got, _, _ := unstructured.NestedInt64(container, probe, "timeoutSeconds"); got != 5 {
				t.Errorf("the frr container's %s waits %ds, want 5", probe, got)
			}
			unstructured.RemoveNestedField(container, probe, "timeoutSeconds")
		}
	}
	_ = unstructured.SetNestedSlice(our.Object, containers, path...)
}

// wantRollingUpdate checks and removes a DaemonSet's update strategy: rolling,
// one node at a time by default, and no surge.
func wantRollingUpdate(t *testing.T, our *unstructured.Unstructured) {
	t.Helper()
	strategy, _, _ := unstructured.NestedMap(our.Object, "spec", "updateStrategy")
	want := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": int64(1), "maxSurge": int64(0)}}
	if diff := cmp.Diff(want, strategy); diff != "" {
		t.Errorf("%s updateStrategy is not RollingUpdate with maxUnavailable 1 (-want +got):\n%s", our.GetName(), diff)
	}
	unstructured.RemoveNestedField(our.Object, "spec", "updateStrategy")
}

// createdOnly checks and removes the annotation that has a Secret created,
// then left to the component that writes the certificates into it.
func createdOnly(t *testing.T, up, our *unstructured.Unstructured) {
	if !objects.CreateOnly(our) {
		t.Errorf("%s is not create-only", our.GetName())
	}
	unstructured.RemoveNestedField(our.Object, "metadata", "annotations")
	wantEqual(t, "Secret/"+our.GetName(), up, our)
}

// withoutMemberlistDigest checks and removes the digest of the memberlist
// timing on the speakers' pod template.
func withoutMemberlistDigest(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	path := []string{"spec", "template", "metadata", "annotations"}
	annotations, _, _ := unstructured.NestedStringMap(o.Object, path...)
	if _, digest := memberlistFile(v1beta1.FailureDetectionDefault); annotations[MemberlistConfigAnnotation] != digest {
		t.Errorf("speaker pod template %s is %q, want %q", MemberlistConfigAnnotation, annotations[MemberlistConfigAnnotation], digest)
	}
	delete(annotations, MemberlistConfigAnnotation)
	_ = unstructured.SetNestedStringMap(o.Object, annotations, path...)
}

// withoutReleaseVersion checks and removes the release version annotation.
func withoutReleaseVersion(t *testing.T, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	annotations := o.GetAnnotations()
	if annotations[ReleaseVersionAnnotation] == "" {
		t.Errorf("%s/%s has no %s annotation", o.GetKind(), o.GetName(), ReleaseVersionAnnotation)
	}
	delete(annotations, ReleaseVersionAnnotation)
	setOrRemove(o, "annotations", annotations)
	return o
}

// withoutMetricsAuthRules checks and removes the rules that let the metrics
// endpoint authenticate and authorise its scrapers.
func withoutMetricsAuthRules(t *testing.T, up, our *unstructured.Unstructured) {
	rules, _, _ := unstructured.NestedSlice(our.Object, "rules")
	var kept []any
	found := 0
	for _, r := range rules {
		groups, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
		if len(groups) == 1 && (groups[0] == "authentication.k8s.io" || groups[0] == "authorization.k8s.io") {
			found++
			continue
		}
		kept = append(kept, r)
	}
	if found != 2 {
		t.Errorf("%s: want the tokenreviews and subjectaccessreviews rules, found %d", our.GetName(), found)
	}
	_ = unstructured.SetNestedSlice(our.Object, kept, "rules")
	wantEqual(t, "ClusterRole/"+our.GetName(), up, our)
}

func wantEqual(t *testing.T, key string, up, our *unstructured.Unstructured) {
	t.Helper()
	if diff := cmp.Diff(up.Object, our.Object); diff != "" {
		t.Errorf("%s drifted from upstream beyond its deliberate differences (-upstream +ours):\n%s", key, diff)
	}
}

func removeOwnership(o *unstructured.Unstructured) {
	labels := o.GetLabels()
	delete(labels, ManagedByLabel)
	delete(labels, PartOfLabel)
	setOrRemove(o, "labels", labels)
}

func setOrRemove(o *unstructured.Unstructured, field string, m map[string]string) {
	if len(m) == 0 {
		unstructured.RemoveNestedField(o.Object, "metadata", field)
		return
	}
	v := map[string]any{}
	for k, s := range m {
		v[k] = s
	}
	_ = unstructured.SetNestedMap(o.Object, v, "metadata", field)
}

// readUpstream decodes one of upstream's manifests.
func readUpstream(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "upstream", name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeManifest(t, name, data)
}

// decodeManifest decodes a manifest that holds no template actions.
func decodeManifest(t *testing.T, name string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	tmpl, err := render.Parse(fstest.MapFS{"m/" + name: {Data: data}}, "m")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := tmpl.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func byKindName(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		key := o.GetKind() + "/" + o.GetName()
		if _, dup := m[key]; dup {
			t.Fatalf("%s appears twice", key)
		}
		m[key] = o
	}
	return m
}
