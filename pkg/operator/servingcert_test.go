package operator

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/crypto"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The metrics endpoint serves its own self-signed certificate until the
// directory holds one, then that one, and a renewed one once it is written.
func TestMetricsCertificateFollowsItsDirectory(t *testing.T) {
	const name = "metrics.cluster-network-operator.svc"
	caConfig, err := crypto.MakeSelfSignedCAConfigForDuration("test-service-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ca := &crypto.CA{Config: caConfig, SerialGenerator: &crypto.RandomSerialGenerator{}}
	roots := x509.NewCertPool()
	roots.AddCert(caConfig.Certs[0])
	dir := t.TempDir()
	d, err := newDirCertificate(dir)
	if err != nil {
		t.Fatal(err)
	}
	served := func() *x509.Certificate {
		t.Helper()
		cert, err := d.get(&tls.ClientHelloInfo{ServerName: name})
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf
	}
	if _, err := served().Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err == nil {
		t.Fatal("with no certificate in the directory, the served one verifies against the CA")
	}
	first := writeServingCert(t, ca, dir, name, time.Now().Add(-time.Minute))
	if got := served(); !got.Equal(first) {
		t.Errorf("serves %s (serial %s), want the directory's (serial %s)", got.Subject.CommonName, got.SerialNumber, first.SerialNumber)
	}
	if _, err := served().Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
		t.Errorf("the directory's certificate does not verify: %v", err)
	}
	renewed := writeServingCert(t, ca, dir, name, time.Now())
	if got := served(); !got.Equal(renewed) {
		t.Errorf("serves serial %s after the renewal, want %s", got.SerialNumber, renewed.SerialNumber)
	}
}

// writeServingCert writes a certificate of the CA for name, and its key, into
// dir, modified at modTime.
func writeServingCert(t *testing.T, ca *crypto.CA, dir, name string, modTime time.Time) *x509.Certificate {
	t.Helper()
	cert, err := ca.MakeServerCert(sets.New(name), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := cert.GetPEMBytes()
	if err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, modTime, modTime); err != nil {
			t.Fatal(err)
		}
	}
	return cert.Certs[0]
}
