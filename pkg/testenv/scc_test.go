package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// refusedBySCC is how OpenShift's SCC admission refuses a pod.
const refusedBySCC = "unable to validate against any security context constraint"

// With SCCAdmission the control plane admits pods as OpenShift does, with
// OpenShift's own plugin: a namespace gets its UID range; an account that may
// use only what every account may has its pod admitted under restricted-v2
// (a UID from the range, every capability dropped) and its host-network pod
// refused; a service account granted an SCC's use through its
// system:openshift:scc ClusterRole gets the pod admitted under that SCC, and
// a pod that requires another SCC is refused; and kube-controller-manager
// creates a Deployment's pods as its own service account, which holds no SCC.
func TestSCCAdmissionIsOpenShifts(t *testing.T) {
	e := New(t, Options{SCCAdmission: true, ControllerManager: true})
	admin := kubernetes.NewForConfigOrDie(e.Config)
	ctx := t.Context()
	const ns = "scc"
	mustCreate(t, func() error {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	uidRange := waitUIDRange(t, admin, ns)
	for _, sa := range []string{"plain", "granted"} {
		mustCreate(t, func() error {
			_, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
			return err
		})
	}
	e.GrantSCC(t, ns, "granted", "hostnetwork-v2")
	alice := podCreator(t, e, admin, ns)

	for _, tc := range []struct {
		name, account, requires string
		hostNetwork             bool
		scc, refused            string // the SCC that admits it, or what the refusal says
	}{
		{name: "a plain pod", account: "plain", scc: "restricted-v2"},
		{name: "host network, no grant", account: "plain", hostNetwork: true, refused: "Host network is not allowed to be used"},
		{name: "host network, hostnetwork-v2 granted", account: "granted", hostNetwork: true, scc: "hostnetwork-v2"},
		{name: "requires privileged, hostnetwork-v2 granted", account: "granted", hostNetwork: true, requires: "privileged", refused: refusedBySCC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(tc.account, tc.hostNetwork, tc.requires)
			got, err := alice.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("admitted (%v, SCC %q), want refused saying %q", err, annotation(got), tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if annotation(got) != tc.scc {
				t.Errorf("admitted under SCC %q, want %q", annotation(got), tc.scc)
			}
			assertRestricted(t, got, tc.scc, uidRange)
		})
	}
	t.Run("kube-controller-manager's pods", func(t *testing.T) { assertControllerPodsRefused(t, admin, ns) })
}

// testPod is a pod of a service account, asking for the host's network and
// requiring an SCC as told.
func testPod(account string, hostNetwork bool, requires string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "scc-"}, Spec: corev1.PodSpec{
		ServiceAccountName: account, HostNetwork: hostNetwork,
		Containers: []corev1.Container{{Name: "c", Image: "example.com/c"}},
	}}
	if requires != "" {
		pod.Annotations = map[string]string{"openshift.io/required-scc": requires}
	}
	return pod
}

func annotation(p *corev1.Pod) string {
	if p == nil {
		return ""
	}
	return p.Annotations[SCCAnnotation]
}

// assertRestricted checks what restricted-v2 gives a pod it admits: a UID
// from the namespace's range, no capability, no privilege escalation.
func assertRestricted(t *testing.T, p *corev1.Pod, scc, uidRange string) {
	t.Helper()
	if scc != "restricted-v2" {
		return
	}
	c := p.Spec.Containers[0].SecurityContext
	var first, size int64
	if _, err := fmt.Sscanf(uidRange, "%d/%d", &first, &size); err != nil {
		t.Fatalf("UID range %q: %v", uidRange, err)
	}
	if c == nil || c.RunAsUser == nil || c.Capabilities == nil || len(c.Capabilities.Drop) != 1 || c.Capabilities.Drop[0] != "ALL" ||
		c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation {
		t.Fatalf("restricted-v2 gave the container %+v", c)
	}
	if uid := *c.RunAsUser; uid < first || uid >= first+size {
		t.Errorf("runAsUser %d is not from the namespace's range %s", *c.RunAsUser, uidRange)
	}
}

// assertControllerPodsRefused has a Deployment of host-network pods created:
// the ReplicaSet controller, as its own service account, and the pods'
// account may both use only restricted-v2, which refuses them.
func assertControllerPodsRefused(t *testing.T, admin kubernetes.Interface, ns string) {
	labels := map[string]string{"app": "hostnet"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "hostnet"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: testPod("plain", true, "").Spec},
	}}
	mustCreate(t, func() error {
		_, err := admin.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{})
		return err
	})
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := admin.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == appsv1.DeploymentReplicaFailure {
				last = c.Message
			}
		}
		return strings.Contains(last, refusedBySCC), nil
	})
	if err != nil {
		t.Fatalf("the Deployment's pods were not refused by SCC admission: ReplicaFailure %q: %v", last, err)
	}
}

// waitUIDRange waits until the namespace has the UID range OpenShift gives
// every namespace, and returns it.
func waitUIDRange(t *testing.T, admin kubernetes.Interface, ns string) string {
	t.Helper()
	var uidRange string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		uidRange = got.Annotations["openshift.io/sa.scc.uid-range"]
		return uidRange != "", err
	})
	if err != nil {
		t.Fatalf("namespace %s got no UID range: %v", ns, err)
	}
	return uidRange
}

// podCreator returns a client of a user who may create pods in ns, and holds
// no SCC of its own but those every authenticated account holds.
func podCreator(t *testing.T, e *Env, admin kubernetes.Interface, ns string) kubernetes.Interface {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-creator"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-creator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	mustCreate(t, func() error {
		_, err := admin.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := admin.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{})
		return err
	})
	// The API server's authorizer sees the binding a moment later, from its
	// informers: asked the same way until it does.
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Resource: "pods"}}}
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed, err
	})
	if err != nil {
		t.Fatalf("alice may not create pods in %s within 10s of her RoleBinding: %v", ns, err)
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"system:authenticated"}}
	return kubernetes.NewForConfigOrDie(cfg)
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}
