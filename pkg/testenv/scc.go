package testenv

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SCCAnnotation is the annotation OpenShift's SCC admission writes on a pod:
// the name of the SCC that admitted it.
const SCCAnnotation = "openshift.io/scc"

// sccCRD is OpenShift's SecurityContextConstraints API, and defaultSCCs the
// SCCs, their ClusterRoles and bindings every OpenShift cluster has
// (scc/README.md says from where).
var (
	//go:embed crds/securitycontextconstraints.security.openshift.io.yaml
	sccCRD []byte
	//go:embed scc/*.yaml
	defaultSCCs embed.FS
)

// GrantSCC lets a service account use an SCC as OpenShift's documentation
// says to: a RoleBinding in its namespace to the SCC's system:openshift:scc
// ClusterRole.
func (e *Env) GrantSCC(t testing.TB, namespace, account, scc string) {
	t.Helper()
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: account + "-scc-" + scc},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:openshift:scc:" + scc},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: namespace}}}
	if err := e.Client(t, nil).Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// startSCCAdmission makes the control plane admit pods as OpenShift does: the
// SCC API and the default SCCs, then OpenShift's SCC admission plugin
// (hack/tools/scc-admission) as a webhook every pod's creation and update
// goes through, failing closed. It returns once a pod is admitted with the
// SCC that admitted it named on it.
func (e *Env) startSCCAdmission(ctx context.Context) error {
	c, err := client.New(e.Config, client.Options{})
	if err != nil {
		return err
	}
	if err := createYAML(ctx, c, sccCRD); err != nil {
		return err
	}
	if err := e.waitServed(ctx, "/apis/security.openshift.io/v1/securitycontextconstraints"); err != nil {
		return err
	}
	files, err := defaultSCCs.ReadDir("scc")
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := defaultSCCs.ReadFile("scc/" + f.Name())
		if err != nil {
			return err
		}
		if err := createYAML(ctx, c, data); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	webhook, url, caBundle, err := e.runSCCWebhook()
	if err != nil {
		return err
	}
	if err := c.Create(ctx, sccWebhook(url, caBundle)); err != nil {
		return err
	}
	if err := e.waitSCCAdmits(ctx, c); err != nil {
		return webhook.failure(err)
	}
	return nil
}

// runSCCWebhook starts the webhook with a serving certificate of its own, and
// returns it, its URL and the CA bundle that trusts it.
func (e *Env) runSCCWebhook() (*process, string, []byte, error) {
	bin, err := Binary("scc-admission")
	if err != nil {
		return nil, "", nil, err
	}
	kubeconfig, err := e.clientKubeconfig("system:openshift:scc-admission")
	if err != nil {
		return nil, "", nil, err
	}
	// The certificate and the CA that signed it, which the bundle trusts.
	cert, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return nil, "", nil, err
	}
	certFile, keyFile := filepath.Join(e.Dir, "scc-admission.crt"), filepath.Join(e.Dir, "scc-admission.key")
	if err := errors.Join(os.WriteFile(certFile, cert, 0o600), os.WriteFile(keyFile, key, 0o600)); err != nil {
		return nil, "", nil, err
	}
	u, err := reserveURL()
	if err != nil {
		return nil, "", nil, err
	}
	p, err := startProcess(e.Dir, "scc-admission", bin, "--kubeconfig="+kubeconfig, "--listen="+u.Host,
		"--tls-cert="+certFile, "--tls-key="+keyFile)
	if err != nil {
		return nil, "", nil, err
	}
	e.procs = append(e.procs, p)
	return p, "https://" + u.Host + "/pods", cert, p.waitFor(startTimeout, p.upFor(time.Second))
}

// sccWebhook sends every pod's creation and update to OpenShift's SCC
// admission; a pod it cannot ask about is refused, as OpenShift would.
func sccWebhook(url string, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "security.openshift.io-scc-admission"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "scc-admission.security.openshift.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}},
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// waitSCCAdmits waits until a dry-run pod comes back admitted by an SCC: the
// API server calls the webhook, whose SCC cache is complete, and the
// namespace has its UID range. The pod has a service account of its own:
// kube-controller-manager, which makes the namespace's default one, may not
// run yet.
func (e *Env) waitSCCAdmits(ctx context.Context, c client.Client) error {
	const probe = "scc-probe"
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: probe}}
	if err := c.Create(ctx, account); err != nil {
		return err
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, GenerateName: probe + "-"},
			Spec: corev1.PodSpec{ServiceAccountName: probe, Containers: []corev1.Container{{Name: "probe", Image: "example.com/probe"}}}}
		last = c.Create(ctx, pod, client.DryRunAll)
		return last == nil && pod.Annotations[SCCAnnotation] != "", nil
	})
	if err != nil {
		return fmt.Errorf("OpenShift's SCC admission admits no pod: %v (last: %v)", err, last)
	}
	return nil
}

// waitServed waits until the API server serves a path (a CRD's resource).
func (e *Env) waitServed(ctx context.Context, path string) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, startTimeout, true, func(context.Context) (bool, error) {
		return e.exists(path) == nil, nil
	})
}

// createYAML creates every object of a YAML stream.
func createYAML(ctx context.Context, c client.Client, data []byte) error {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := decoder.Decode(&o.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if len(o.Object) == 0 {
			continue
		}
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
}

// CheckAdmittedUnder checks pods against the SCC each workload's pods must be
// admitted under (want: a DaemonSet's or Deployment's name → SCC): every pod
// belongs to a workload of want and names its SCC, and every workload of want
// has pods. It returns what is wrong, and how many pods each workload has.
func CheckAdmittedUnder(pods []corev1.Pod, want map[string]string) (problems []string, seen map[string]int) {
	seen = map[string]int{}
	for _, p := range pods {
		workload := workloadOf(&p)
		seen[workload]++
		if got := p.Annotations[SCCAnnotation]; got != want[workload] {
			problems = append(problems, fmt.Sprintf("pod %s/%s of %s admitted under SCC %q, want %q", p.Namespace, p.Name, workload, got, want[workload]))
		}
	}
	for workload := range want {
		if seen[workload] == 0 {
			problems = append(problems, "no pod of "+workload)
		}
	}
	return problems, seen
}

// workloadOf is the name of the DaemonSet or Deployment a pod belongs to, from
// its generated name (a Deployment's pods' names add the ReplicaSet's hash).
func workloadOf(p *corev1.Pod) string {
	name := strings.TrimSuffix(p.GenerateName, "-")
	if len(p.OwnerReferences) > 0 && p.OwnerReferences[0].Kind == "ReplicaSet" {
		name = name[:max(strings.LastIndex(name, "-"), 0)]
	}
	return name
}
