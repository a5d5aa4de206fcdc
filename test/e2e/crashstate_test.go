package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// applyMetalLB creates the MetalLB object, once its CRD is served, with the
// story's maxUnavailable.
func (r *crashRun) applyMetalLB(t *testing.T) {
	applyOnceServedAfter(t, r.env, writeTemp(t, `apiVersion: metallb.io/v1beta1
kind: MetalLB
metadata:
  name: metallb
  namespace: metallb-system
spec:
  speakerConfig:
    maxUnavailable: `+strconv.Itoa(r.story.maxUnavailable)+`
`), func() {
		if r.promises != nil {
			r.promises.watchVersion(t)
		}
	})
}

// activatedBy has an operator of a release activate MetalLB and report its
// version, then stop.
func activatedBy(environ []string, version string) func(*crashRun, *testing.T) {
	return func(r *crashRun, t *testing.T) {
		op := startOperator(t, r.env, environ, crashFlags...)
		r.applyMetalLB(t)
		r.waitReached(t, version, imageOf(environ, "METALLB_SPEAKER_IMAGE"))
		if code := op.stop(t); code != 0 {
			t.Fatalf("the first operator exited with %d on SIGTERM", code)
		}
	}
}

func imageOf(environ []string, variable string) string {
	for _, e := range environ {
		if v, ok := strings.CutPrefix(e, variable+"="); ok {
			return v
		}
	}
	return ""
}

// handInstall installs upstream's manifest of the operand's release and the
// memberlist Secret as upstream's docs make it, and waits for its pods.
func (r *crashRun) handInstall(t *testing.T) {
	kubectl(t, r.env, "apply", "-f", upstreamManifest)
	kubectl(t, r.env, "create", "secret", "generic", "memberlist", "-n", metallbNamespace, "--from-literal=secretkey="+strings.Repeat("k", 128))
	if err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll/4, crashSettles, true, r.rolledOut); err != nil {
		t.Fatalf("the hand install's pods did not run: %v", err)
	}
}

func (r *crashRun) waitReached(t *testing.T, version, image string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll/4, crashSettles, true, func(ctx context.Context) (bool, error) {
		return r.reached(ctx, version, image)
	})
	if err != nil {
		t.Fatalf("MetalLB %s never ran and was reported: %v", version, err)
	}
}

// settled tells whether the story reached its end state.
func (r *crashRun) settled(ctx context.Context) (bool, error) {
	if r.story.version == "" {
		return r.deactivated(ctx)
	}
	return r.reached(ctx, r.story.version, r.story.speakerImage)
}

// reached tells whether the MetalLB object reports the version, Available
// and neither Progressing nor Degraded for its generation, with every
// workload rolled out and the speakers running image.
func (r *crashRun) reached(ctx context.Context, version, image string) (bool, error) {
	m, err := r.dyn.Resource(metallbs).Namespace(metallbNamespace).Get(ctx, "metallb", metav1.GetOptions{})
	if err != nil {
		return false, nil
	}
	generation, _, _ := unstructured.NestedInt64(m.Object, "status", "observedGeneration")
	if generation != m.GetGeneration() || reportedVersion(m) != version ||
		conditionOf(m, "Available") != "True" || conditionOf(m, "Progressing") != "False" || conditionOf(m, "Degraded") != "False" {
		return false, nil
	}
	speaker, err := r.client.AppsV1().DaemonSets(metallbNamespace).Get(ctx, "speaker", metav1.GetOptions{})
	if err != nil || speaker.Spec.Template.Spec.Containers[0].Image != image {
		return false, nil
	}
	return r.rolledOut(ctx)
}

func conditionOf(u *unstructured.Unstructured, conditionType string) string {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == conditionType {
			s, _ := c["status"].(string)
			return s
		}
	}
	return ""
}

// rolledOut tells whether every DaemonSet of MetalLB's namespace runs an
// updated, available pod on every node and every Deployment its replicas.
func (r *crashRun) rolledOut(ctx context.Context) (bool, error) {
	daemonSets, err := r.client.AppsV1().DaemonSets(metallbNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, nil
	}
	deployments, err := r.client.AppsV1().Deployments(metallbNamespace).List(ctx, metav1.ListOptions{})
	if err != nil || len(daemonSets.Items) == 0 || len(deployments.Items) == 0 {
		return false, nil
	}
	for _, ds := range daemonSets.Items {
		s := ds.Status
		if s.ObservedGeneration != ds.Generation || s.DesiredNumberScheduled != int32(r.story.nodes) ||
			s.UpdatedNumberScheduled != s.DesiredNumberScheduled || s.NumberAvailable != s.DesiredNumberScheduled {
			return false, nil
		}
	}
	for _, d := range deployments.Items {
		if !deploymentRolledOut(&d) {
			return false, nil
		}
	}
	return true, nil
}

func deploymentRolledOut(d *appsv1.Deployment) bool {
	s, want := d.Status, int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return s.ObservedGeneration == d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
}

// deactivated tells whether MetalLB's namespace has no workload and no pod
// left, and the operator nothing of its own but what it never deletes.
func (r *crashRun) deactivated(ctx context.Context) (bool, error) {
	if gone, err := r.workloadsGone(ctx); !gone || err != nil {
		return gone, err
	}
	out, err := kubectlErr(r.env, "get", installationKinds, "-A", "-o", "name", "-l", manifests.ManagedByLabel+"="+manifests.ManagedBy)
	if err != nil {
		return false, nil
	}
	for _, name := range strings.Fields(out) {
		if !strings.HasPrefix(name, "customresourcedefinition.apiextensions.k8s.io/") && name != "secret/memberlist" {
			return false, nil
		}
	}
	return true, nil
}

// workloadsGone tells whether MetalLB's namespace has no workload and no
// pod left.
func (r *crashRun) workloadsGone(ctx context.Context) (bool, error) {
	daemonSets, err := r.client.AppsV1().DaemonSets(metallbNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, nil
	}
	deployments, err := r.client.AppsV1().Deployments(metallbNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, nil
	}
	pods, err := r.client.CoreV1().Pods(metallbNamespace).List(ctx, metav1.ListOptions{})
	return err == nil && len(daemonSets.Items)+len(deployments.Items)+len(pods.Items) == 0, nil
}

// endState lists what a story leaves, to compare runs: the objects of
// MetalLB's namespace and the cluster's of MetalLB and frr-k8s by kind and
// name, the workloads' images, the namespace's annotations and the version
// reported. Not the memberlist key, random in each run.
func (r *crashRun) endState(t *testing.T) []string {
	t.Helper()
	var state []string
	for _, kind := range strings.Split(installationKinds, ",") {
		out := kubectl(t, r.env, "get", kind, "-n", metallbNamespace, "--ignore-not-found", "-o",
			`jsonpath={range .items[*]}{.metadata.name}{" "}{.spec.template.spec.containers[*].image}{"\n"}{end}`)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if line = strings.TrimSpace(line); line != "" && kept(kind, line) {
				state = append(state, kind+"/"+line)
			}
		}
	}
	ns, err := r.client.CoreV1().Namespaces().Get(t.Context(), metallbNamespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range ns.Annotations {
		state = append(state, fmt.Sprintf("namespace annotation %s=%s", k, v))
	}
	m, err := r.dyn.Resource(metallbs).Namespace(metallbNamespace).Get(t.Context(), "metallb", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		state = append(state, "no MetalLB object")
	case err != nil:
		t.Fatal(err)
	default:
		state = append(state, "version "+reportedVersion(m))
	}
	slices.Sort(state)
	return state
}

// kept tells whether an object listed belongs to the end state compared:
// cluster-scoped objects of MetalLB and frr-k8s only (the namespaced kinds
// are listed in MetalLB's namespace alone), and none of what the API server
// makes in every namespace.
func kept(kind, line string) bool {
	name, _, _ := strings.Cut(line, " ")
	switch kind {
	case "customresourcedefinitions", "validatingwebhookconfigurations", "clusterroles", "clusterrolebindings":
		return strings.Contains(name, "metallb") || strings.Contains(name, "frr")
	case "serviceaccounts":
		return name != "default"
	case "configmaps":
		return name != "kube-root-ca.crt"
	}
	return true
}
