package metallb

import (
	"context"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// On kwok nodes with AWS provider IDs a pool deploys nothing, and says why and
// how to override; when the nodes are replaced by bare-metal ones MetalLB
// comes, without a restart. The --platform override deploys it regardless.
func TestCloudNodesDeployNothing(t *testing.T) {
	t.Parallel()
	aws := testenv.Nodes(2)
	for i := range aws {
		aws[i].ProviderID = "aws:///us-east-1a/i-000" + aws[i].Name
	}
	m := startModule(t, testenv.Options{Kwok: true, Nodes: aws}, testOptions())
	m.installCRDs(t) // as the operator did before the nodes changed, or a user did by hand
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.waitEvent(t, manifests.DefaultNamespace, "pool1", plan.ReasonPlatformNotSupported,
		"the platform is AWS (from node kwok-0's provider ID aws:///us-east-1a/i-000kwok-0), and the operator deploys MetalLB only on BareMetal, None. To deploy it anyway, start the operator with --platform=BareMetal")
	m.assertAbsent(t, "Deployment/controller", "DaemonSet/speaker")

	// The MetalLB object says so too.
	if err := m.client.Create(t.Context(), &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}
	c := m.waitDegraded(t, clusterObject, isTrue)
	if c.Reason != plan.ReasonPlatformNotSupported || !strings.Contains(c.Message, "--platform=BareMetal") {
		t.Errorf("Degraded %s %q does not say the platform is not supported and how to override", c.Reason, c.Message)
	}

	// Bare-metal nodes replace the cloud ones: MetalLB comes without a restart.
	if err := m.AddNodes(t.Context(), testenv.Node{Name: "metal-0", InternalIP: "192.0.2.20"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range aws {
		if err := m.client.Delete(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	m.waitSpeakerDaemonSet(t)
	m.waitDegraded(t, clusterObject, isFalse)
}

func TestPlatformOverride(t *testing.T) {
	t.Parallel()
	opts := testOptions()
	opts.Platform = "BareMetal"
	m := startModule(t, testenv.Options{Kwok: true, Nodes: []testenv.Node{{Name: "n0", InternalIP: "192.0.2.10", ProviderID: "aws:///us-east-1a/i-0"}}}, opts)
	m.waitCRDs(t)
	m.createPool(t, manifests.DefaultNamespace, "pool1")
	m.waitSpeakerDaemonSet(t)
}

// On OpenShift the Infrastructure object decides; a change of it is noticed
// without a restart.
func TestInfrastructurePlatform(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{})
	m := &moduleEnv{Env: env, client: env.Client(t, testScheme)}
	ctx := t.Context()
	infra := m.installInfrastructure(t, configv1.AWSPlatformType)
	if err := InstallAPI(ctx, m.client); err != nil {
		t.Fatal(err)
	}
	if err := m.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manifests.DefaultNamespace}}); err != nil {
		t.Fatal(err)
	}
	m.run(t, testOptions())
	if err := m.client.Create(ctx, &v1beta1.MetalLB{ObjectMeta: metav1.ObjectMeta{Namespace: manifests.DefaultNamespace, Name: manifests.ObjectName}}); err != nil {
		t.Fatal(err)
	}
	c := m.waitDegraded(t, clusterObject, isTrue)
	if c.Reason != plan.ReasonPlatformNotSupported || !strings.Contains(c.Message, "the platform is AWS (from Infrastructure cluster)") {
		t.Errorf("Degraded %s %q does not name the Infrastructure's platform", c.Reason, c.Message)
	}
	m.assertAbsent(t, "Deployment/controller")

	infra.Status.PlatformStatus.Type = configv1.BareMetalPlatformType
	if err := m.client.Status().Update(ctx, infra); err != nil {
		t.Fatal(err)
	}
	m.waitSpeakerDaemonSet(t)
	m.waitDegraded(t, clusterObject, isFalse)
}

// installInfrastructure creates OpenShift's Infrastructure API, as far as the
// module reads it, and Infrastructure/cluster on the platform.
func (m *moduleEnv) installInfrastructure(t *testing.T, platform configv1.PlatformType) *configv1.Infrastructure {
	t.Helper()
	ctx := t.Context()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "infrastructures.config.openshift.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "config.openshift.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Infrastructure", ListKind: "InfrastructureList", Plural: "infrastructures", Singular: "infrastructure"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
	u, err := toUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&apply.Applier{Client: m.client, FieldOwner: "test"}).Apply(ctx, []*unstructured.Unstructured{u}); err != nil {
		t.Fatal(err)
	}
	infra := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	if err := m.client.Create(ctx, infra); err != nil {
		t.Fatal(err)
	}
	infra.Status.PlatformStatus = &configv1.PlatformStatus{Type: platform}
	if err := m.client.Status().Update(ctx, infra); err != nil {
		t.Fatal(err)
	}
	return infra
}

// installCRDs applies MetalLB's CRDs, as the operator renders them.
func (m *moduleEnv) installCRDs(t *testing.T) {
	t.Helper()
	objs, err := manifests.Render(manifests.Settings{Environment: testOptions().Environment}, "")
	if err != nil {
		t.Fatal(err)
	}
	var crds []*unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind() == objects.CustomResourceDefinition {
			crds = append(crds, o)
		}
	}
	if _, err := (&apply.Applier{Client: m.client, FieldOwner: manifests.FieldOwner}).Apply(t.Context(), crds); err != nil {
		t.Fatal(err)
	}
}

func (m *moduleEnv) waitCRDs(t testing.TB) {
	t.Helper()
	waitFor(t, "MetalLB's CRDs", m.within(30*time.Second), func(ctx context.Context) (bool, error) {
		return m.crdCount(ctx) == 9, nil
	})
}

// waitSpeakerDaemonSet waits until the module has deployed MetalLB.
func (m *moduleEnv) waitSpeakerDaemonSet(t testing.TB) {
	t.Helper()
	waitFor(t, "the speaker DaemonSet", 30*time.Second, func(context.Context) (bool, error) {
		return m.get(t, objects.DaemonSet, manifests.DefaultNamespace, "speaker") != nil &&
			m.get(t, objects.Deployment, manifests.DefaultNamespace, "controller") != nil, nil
	})
}
