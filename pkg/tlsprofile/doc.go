// Package tlsprofile turns an OpenShift TLS security profile (Old,
// Intermediate, Modern or Custom, the type of apiservers.config.openshift.io's
// spec.tlsSecurityProfile) into what a Go server and a Kubernetes-style
// binary's --tls-* flags take, with library-go's names of versions and
// ciphers; and holds the profile of the operator's own servers, which may
// change while they run.
package tlsprofile
