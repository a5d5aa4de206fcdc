package e2e

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// On OpenShift, whose network operator runs frr-k8s once its Network object
// lists FRR (here deployed as that operator does: upstream frr-k8s in
// openshift-frr-k8s, privileged), the frr-k8s backend deploys no frr-k8s of
// its own: the real speakers tell the platform's FRR what to announce, and the
// real router learns the Service's address from every node. Every pod is
// admitted by OpenShift's own SCC admission.
func TestBGPThroughOpenShiftsFRRK8s(t *testing.T) {
	if !world.Enter(t, world.Long) {
		return
	}
	c := newBGPCluster(t, false, func(o *testenv.Options) { o.SCCAdmission = true })
	kubectl(t, c.Env, "apply", "-f", manifestsDir+"/0000_70_metallb_03_scc.yaml")
	enableOpenShiftsFRR(t, c.Env)
	kubectl(t, c.Env, "apply", "--server-side", "-f", writeTemp(t, openShiftsFRRK8s(t)))
	newBGPServingOn(t, c, "", "frr-k8s")
	if own := kubectl(t, c.Env, "get", "daemonsets,deployments", "-n", metallbNamespace, "-o", "name"); strings.Contains(own, manifests.FRRK8sPrefix) {
		t.Errorf("frr-k8s runs in %s beside the platform's:\n%s", metallbNamespace, own)
	}
	pods, err := c.Client.CoreV1().Pods(manifests.OpenShiftFRRK8sNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	problems, seen := testenv.CheckAdmittedUnder(pods.Items, map[string]string{manifests.FRRK8sName: manifests.FRRK8sSCC,
		manifests.FRRK8sStatusCleaner: manifests.FRRK8sStatusCleanerSCC})
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("the platform's frr-k8s, by workload: %v; the router's next hops go through every node", seen)
}

// enableOpenShiftsFRR creates OpenShift's network operator API, its Network
// object listing FRR, and the namespace that operator runs frr-k8s in.
func enableOpenShiftsFRR(t *testing.T, env *testenv.Env) {
	t.Helper()
	kubectl(t, env, "apply", "-f", writeTemp(t, string(testenv.NetworkCRD)))
	kubectl(t, env, "wait", "--for=condition=Established", "crd/networks.operator.openshift.io")
	kubectl(t, env, "apply", "-f", writeTemp(t, "apiVersion: operator.openshift.io/v1\nkind: Network\nmetadata:\n  name: cluster\n"+
		"spec:\n  additionalRoutingCapabilities:\n    providers: [FRR]\n"))
	createNamespaces(t, env, manifests.OpenShiftFRRK8sNamespace)
}

// openShiftsFRRK8s is frr-k8s as OpenShift's network operator deploys it:
// upstream frr-k8s in openshift-frr-k8s, its accounts let use privileged (and
// hostnetwork-v2), with its CRDs; here from the operator's own templates
// rendered for that namespace, none of it labelled as the operator's.
func openShiftsFRRK8s(t *testing.T) string {
	t.Helper()
	images, err := manifests.ImagesFromEnv(func(string) string { return "" }, "4.22.0")
	if err != nil {
		t.Fatal(err)
	}
	env := manifests.Environment{Namespace: manifests.OpenShiftFRRK8sNamespace, Images: images, Webhooks: true, SCCAdmission: true}
	s, err := manifests.SettingsFor(env, &v1beta1.MetalLB{Spec: v1beta1.MetalLBSpec{BGPBackend: v1beta1.BGPBackendFRRK8s}})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifests.Render(s, "")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, o := range objs {
		if !isFRRK8s(o) {
			continue
		}
		labels := o.GetLabels()
		delete(labels, manifests.ManagedByLabel)
		delete(labels, manifests.PartOfLabel)
		o.SetLabels(labels)
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return strings.Join(docs, "---\n")
}

// isFRRK8s tells frr-k8s's objects among the rendered ones: its namespace's,
// its CRDs, and those named after it.
func isFRRK8s(o *unstructured.Unstructured) bool {
	return (o.GetKind() == "Namespace" && o.GetName() == manifests.OpenShiftFRRK8sNamespace) ||
		strings.HasSuffix(o.GetName(), ".frrk8s.metallb.io") || strings.HasPrefix(o.GetName(), manifests.FRRK8sPrefix)
}
