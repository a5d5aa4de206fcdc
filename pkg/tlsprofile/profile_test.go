package tlsprofile

import (
	"crypto/tls"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var intermediateSuites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256," +
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384," +
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"

func custom(minVersion configv1.TLSProtocolVersion, ciphers ...string) *configv1.TLSSecurityProfile {
	return &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
		TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: minVersion, Ciphers: ciphers}}}
}

// A profile becomes the flags MetalLB's and frr-k8s's binaries take: OpenSSL's
// names become IANA's, TLS 1.3's suites (which no Go server configures) and
// those Go lacks are left out, and a wrong Custom profile names its field.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		name    string
		profile *configv1.TLSSecurityProfile
		args    string // Args, space-separated
		err     string
	}{
		{"unset is Intermediate", nil, "--tls-min-version=VersionTLS12 --tls-cipher-suites=" + intermediateSuites, ""},
		{"no type is Intermediate", &configv1.TLSSecurityProfile{}, "--tls-min-version=VersionTLS12 --tls-cipher-suites=" + intermediateSuites, ""},
		{"Intermediate", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileIntermediateType},
			"--tls-min-version=VersionTLS12 --tls-cipher-suites=" + intermediateSuites, ""},
		{"Modern: TLS 1.3, no suites", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType}, "--tls-min-version=VersionTLS13", ""},
		{"Old: TLS 1.0, without the suites Go lacks (the CBC SHA-384s)", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType},
			"--tls-min-version=VersionTLS10 --tls-cipher-suites=" + intermediateSuites +
				",TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA," +
				"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA," +
				"TLS_RSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_AES_256_GCM_SHA384,TLS_RSA_WITH_AES_128_CBC_SHA256," +
				"TLS_RSA_WITH_AES_128_CBC_SHA,TLS_RSA_WITH_AES_256_CBC_SHA,TLS_RSA_WITH_3DES_EDE_CBC_SHA", ""},
		{"Custom", custom(configv1.VersionTLS12, "ECDHE-RSA-AES256-GCM-SHA384", "TLS_AES_128_GCM_SHA256"),
			"--tls-min-version=VersionTLS12 --tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", ""},
		{"Custom TLS 1.3 drops its suites", custom(configv1.VersionTLS13, "TLS_AES_128_GCM_SHA256"), "--tls-min-version=VersionTLS13", ""},
		{"Custom without custom", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType}, "",
			"spec.tlsSecurityProfile.custom: Required value"},
		{"Custom with an unknown version", custom("VersionTLS14", "ECDHE-RSA-AES256-GCM-SHA384"), "",
			`spec.tlsSecurityProfile.custom.minTLSVersion: Unsupported value: "VersionTLS14"`},
		{"Custom whose ciphers Go lacks", custom(configv1.VersionTLS12, "DHE-RSA-AES128-GCM-SHA256", "TLS_AES_128_GCM_SHA256"), "",
			"spec.tlsSecurityProfile.custom.ciphers: Invalid value"},
		{"an unknown type", &configv1.TLSSecurityProfile{Type: "Strict"}, "", `spec.tlsSecurityProfile.type: Unsupported value: "Strict"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Of(c.profile, field.NewPath("spec", "tlsSecurityProfile"))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Args(), " "); got != c.args {
				t.Errorf("args:\n got %s\nwant %s", got, c.args)
			}
			var cfg tls.Config
			p.Apply(&cfg)
			if len(cfg.CipherSuites) != len(p.CipherSuites) || cfg.MinVersion < tls.VersionTLS10 {
				t.Errorf("applied: min %x, %d suites; want %s, %d", cfg.MinVersion, len(cfg.CipherSuites), p.MinVersion, len(p.CipherSuites))
			}
		})
	}
}
