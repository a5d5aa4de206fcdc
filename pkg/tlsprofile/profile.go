package tlsprofile

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/library-go/pkg/crypto"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Profile is what a TLS security profile asks of a server.
type Profile struct {
	// Type is the profile's type, for messages.
	Type configv1.TLSProfileType
	// MinVersion is the lowest TLS version, by Go's constant's name
	// (VersionTLS12), as --tls-min-version takes it.
	MinVersion string
	// CipherSuites are the IANA names of the suites allowed below TLS 1.3,
	// in the profile's order; empty when MinVersion is TLS 1.3, whose suites
	// no Go server lets configure.
	CipherSuites []string
}

// Default is the profile when none is set: OpenShift's, and Mozilla's,
// Intermediate.
const Default = configv1.TLSProfileIntermediateType

// Of returns the profile p asks for; nil asks for Default. An error names the
// field under path that is wrong.
func Of(p *configv1.TLSSecurityProfile, path *field.Path) (Profile, error) {
	kind := Default
	if p != nil && p.Type != "" {
		kind = p.Type
	}
	spec := configv1.TLSProfiles[kind]
	if kind == configv1.TLSProfileCustomType {
		if p.Custom == nil {
			return Profile{}, field.Required(path.Child("custom"), "a Custom profile lists its ciphers and minTLSVersion under custom")
		}
		spec = &p.Custom.TLSProfileSpec
	}
	if spec == nil {
		return Profile{}, field.NotSupported(path.Child("type"), kind, []configv1.TLSProfileType{configv1.TLSProfileOldType,
			configv1.TLSProfileIntermediateType, configv1.TLSProfileModernType, configv1.TLSProfileCustomType})
	}
	return fromSpec(kind, spec, path.Child("custom"))
}

// fromSpec checks a profile's spec; path is where a Custom one was written.
func fromSpec(kind configv1.TLSProfileType, spec *configv1.TLSProfileSpec, path *field.Path) (Profile, error) {
	minVersion := string(spec.MinTLSVersion)
	version, err := crypto.TLSVersion(minVersion)
	if err != nil {
		return Profile{}, field.NotSupported(path.Child("minTLSVersion"), minVersion, crypto.ValidTLSVersions())
	}
	out := Profile{Type: kind, MinVersion: minVersion}
	if version >= tls.VersionTLS13 {
		return out, nil
	}
	for _, name := range crypto.OpenSSLToIANACipherSuites(spec.Ciphers) {
		if id, err := crypto.CipherSuite(name); err == nil && !tls13Only[id] {
			out.CipherSuites = append(out.CipherSuites, name)
		}
	}
	if len(out.CipherSuites) == 0 {
		return Profile{}, field.Invalid(path.Child("ciphers"), spec.Ciphers,
			fmt.Sprintf("none of these is a cipher Go's TLS allows below TLS 1.3, which %s allows: name some in OpenSSL's spelling (ECDHE-RSA-AES128-GCM-SHA256)", minVersion))
	}
	return out, nil
}

// tls13Only are TLS 1.3's suites, which a server always offers to a TLS 1.3
// client and never below it.
var tls13Only = func() map[uint16]bool {
	only := map[uint16]bool{}
	for _, s := range slices.Concat(tls.CipherSuites(), tls.InsecureCipherSuites()) {
		only[s.ID] = !slices.ContainsFunc(s.SupportedVersions, func(v uint16) bool { return v < tls.VersionTLS13 })
	}
	return only
}()

// Equal tells whether two profiles ask the same.
func (p Profile) Equal(o Profile) bool {
	return p.Type == o.Type && p.MinVersion == o.MinVersion && slices.Equal(p.CipherSuites, o.CipherSuites)
}

// Args are the flags that give a Kubernetes-style binary (MetalLB's, frr-k8s's)
// the profile: --tls-min-version, and --tls-cipher-suites below TLS 1.3.
func (p Profile) Args() []string {
	args := []string{"--tls-min-version=" + p.MinVersion}
	if len(p.CipherSuites) > 0 {
		args = append(args, "--tls-cipher-suites="+strings.Join(p.CipherSuites, ","))
	}
	return args
}

// Apply sets c's lowest version and suites to the profile's.
func (p Profile) Apply(c *tls.Config) {
	c.MinVersion = crypto.TLSVersionOrDie(p.MinVersion) // checked by Of
	c.CipherSuites = nil
	for _, name := range p.CipherSuites {
		id, _ := crypto.CipherSuite(name) // checked by Of
		c.CipherSuites = append(c.CipherSuites, id)
	}
}
