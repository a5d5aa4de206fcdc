package tlsprofile

import (
	"crypto/tls"
	"net/http"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/cert"
)

// A server's profile follows Set between two handshakes, with no restart:
// before any, every handshake is refused; with Modern, TLS 1.2 is refused
// and TLS 1.3 accepted; with Intermediate, both.
func TestServingFollowsTheProfile(t *testing.T) {
	var serving Serving
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("localhost", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	// As controller-runtime's metrics server does: the options, then the
	// certificate, on one configuration that the listener keeps.
	base := &tls.Config{}
	serving.Configure(base)
	base.Certificates = []tls.Certificate{pair}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", base)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	handshake := func(version uint16) error {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true, MinVersion: version, MaxVersion: version})
		if err == nil {
			c.Close()
		}
		return err
	}
	set := func(kind configv1.TLSProfileType) {
		p, err := Of(&configv1.TLSSecurityProfile{Type: kind}, field.NewPath("profile"))
		if err != nil {
			t.Fatal(err)
		}
		serving.Set(p)
	}
	if err := handshake(tls.VersionTLS13); err == nil {
		t.Error("a handshake before any profile was set was accepted")
	}
	for _, c := range []struct {
		profile      configv1.TLSProfileType
		tls12, tls13 bool
	}{
		{configv1.TLSProfileModernType, false, true},
		{configv1.TLSProfileIntermediateType, true, true},
		{configv1.TLSProfileModernType, false, true},
	} {
		set(c.profile)
		for version, want := range map[uint16]bool{tls.VersionTLS12: c.tls12, tls.VersionTLS13: c.tls13} {
			if err := handshake(version); (err == nil) != want {
				t.Errorf("%s: a handshake at %s: error %v, want accepted %t", c.profile, tls.VersionName(version), err, want)
			}
		}
	}
}
