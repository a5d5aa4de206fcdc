package testenv

import (
	"context"
	"crypto/x509"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// The service CA signs, for a Service that asks, a certificate that verifies
// against its bundle for the Service's DNS name (and, headless, its pods'),
// into a Secret the Service owns, and marks the Service; a Service that does
// not ask gets nothing.
func TestServiceCASignsAsOpenShifts(t *testing.T) {
	e := New(t, Options{})
	bundle := e.StartServiceCA(t)
	admin := kubernetes.NewForConfigOrDie(e.Config)
	roots := x509.NewCertPool()
	pem, err := os.ReadFile(bundle)
	if err != nil || !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("the CA's bundle %s: %v", bundle, err)
	}
	for _, tc := range []struct {
		name, clusterIP, secret string
		verifies                []string
	}{
		{"metrics", "", "metrics-cert", []string{"metrics.default.svc", "metrics.default.svc.cluster.local"}},
		{"headless", corev1.ClusterIPNone, "headless-cert", []string{"headless.default.svc", "node-0.headless.default.svc"}},
		{"plain", "", "", nil},
	} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: tc.clusterIP, Ports: []corev1.ServicePort{{Port: 443}}}}
		if tc.secret != "" {
			svc.Annotations = map[string]string{objects.ServingCertSecretAnnotation: tc.secret}
		}
		created, err := admin.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.secret == "" {
			continue
		}
		secret := waitSecret(t, admin, tc.secret)
		if owners := secret.OwnerReferences; len(owners) != 1 || owners[0].UID != created.UID || secret.Type != corev1.SecretTypeTLS {
			t.Errorf("Secret %s: type %s, owners %v; want kubernetes.io/tls owned by Service %s", tc.secret, secret.Type, owners, tc.name)
		}
		certs, err := certutil.ParseCertsPEM(secret.Data[corev1.TLSCertKey])
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range append(tc.verifies, "other.default.svc") {
			_, err := certs[0].Verify(x509.VerifyOptions{DNSName: name, Roots: roots})
			if verified := err == nil; verified != slices.Contains(tc.verifies, name) {
				t.Errorf("Service %s's certificate for %s: %v", tc.name, name, err)
			}
		}
		waitSigned(t, admin, tc.name)
	}
	if secrets, _ := admin.CoreV1().Secrets("default").List(t.Context(), metav1.ListOptions{}); len(secrets.Items) != 2 {
		t.Errorf("%d Secrets in default, want the 2 asked for", len(secrets.Items))
	}
}

func waitSecret(t *testing.T, admin kubernetes.Interface, name string) *corev1.Secret {
	t.Helper()
	var secret *corev1.Secret
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		secret, err = admin.CoreV1().Secrets("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("no Secret %s", name)
	}
	return secret
}

func waitSigned(t *testing.T, admin kubernetes.Interface, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		svc, err := admin.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil && svc.Annotations[servingCertSignedByAnnotation] != "", nil
	})
	if err != nil {
		t.Fatalf("Service %s is not marked signed", name)
	}
}
