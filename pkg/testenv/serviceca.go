package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/crypto"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// The service CA's annotations (OpenShift's service-ca operator) beyond
// objects.ServingCertSecretAnnotation: on a Service the CA that signed its
// certificate, on the Secret the Service it is for.
const (
	servingCertSignedByAnnotation = "service.beta.openshift.io/serving-cert-signed-by"
	serviceNameAnnotation         = "service.beta.openshift.io/originating-service-name"
	serviceUIDAnnotation          = "service.beta.openshift.io/originating-service-uid"
)

// StartServiceCA runs, until the test ends, a signer that applies the rule of
// OpenShift's service CA: for a Service annotated with a serving-cert Secret
// name, a Secret of that name (kubernetes.io/tls, owned by the Service)
// holding a certificate signed by the CA for the Service's DNS names (with a
// wildcard for its pods' names when headless) and its key; the Service is then
// annotated with the CA that signed it. It is the rule, not the operator's
// code (its module is not served here), with library-go's crypto, as the
// operator's. It returns the file of the CA's bundle, as OpenShift's platform
// Prometheus holds it.
func (e *Env) StartServiceCA(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("openshift-service-serving-signer@%d", time.Now().Unix())
	config, err := crypto.MakeSelfSignedCAConfigForDuration(name, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ca := &crypto.CA{Config: config, SerialGenerator: &crypto.RandomSerialGenerator{}}
	bundle, err := crypto.EncodeCertificates(config.Certs...)
	if err != nil {
		t.Fatal(err)
	}
	bundleFile := filepath.Join(e.Dir, "service-ca.crt")
	if err := os.WriteFile(bundleFile, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	clients := kubernetes.NewForConfigOrDie(e.Config)
	factory := informers.NewSharedInformerFactory(clients, 0)
	services := factory.Core().V1().Services().Informer()
	sign := func(obj any) {
		if svc, ok := obj.(*corev1.Service); ok && svc.Annotations[objects.ServingCertSecretAnnotation] != "" {
			// Retried as the service CA's queue retries: a write may meet a conflict.
			err := retry.OnError(retry.DefaultBackoff, func(error) bool { return t.Context().Err() == nil }, func() error {
				return signFor(t.Context(), clients, ca, svc)
			})
			if err != nil && t.Context().Err() == nil {
				t.Errorf("the service CA could not sign for Service %s/%s: %v", svc.Namespace, svc.Name, err)
			}
		}
	}
	if _, err := services.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: sign, UpdateFunc: func(_, obj any) { sign(obj) }}); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	return bundleFile
}

// signFor writes the Service's certificate Secret, where there is none, and
// marks the Service signed.
func signFor(ctx context.Context, clients kubernetes.Interface, ca *crypto.CA, svc *corev1.Service) error {
	name := svc.Annotations[objects.ServingCertSecretAnnotation]
	if _, err := clients.CoreV1().Secrets(svc.Namespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return err
	}
	host := svc.Name + "." + svc.Namespace + ".svc"
	hosts := sets.New(host, host+".cluster.local")
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		hosts.Insert("*."+host, "*."+host+".cluster.local")
	}
	cert, err := ca.MakeServerCert(hosts, time.Hour)
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := cert.GetPEMBytes()
	if err != nil {
		return err
	}
	secret := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: name,
			Annotations:     map[string]string{serviceNameAnnotation: svc.Name, serviceUIDAnnotation: string(svc.UID)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}}}}
	if _, err := clients.CoreV1().Secrets(svc.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	signer := ca.Config.Certs[0].Subject.CommonName
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, servingCertSignedByAnnotation, signer)
	_, err = clients.CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
