package manifests

import "github.com/bmlb/cluster-network-operator/pkg/objects"

// On OpenShift the service CA (the service-ca operator) signs a certificate
// for each Service annotated objects.ServingCertSecretAnnotation, for the
// Service's DNS names, into the Secret the annotation names; OpenShift's platform
// Prometheus holds the CA's bundle at ServiceCAFile. There MetalLB's and
// frr-k8s's metrics endpoints serve that certificate and their ServiceMonitors
// verify it, as OpenShift's own components do. Elsewhere no CA signs for
// Services: the endpoints sign their own certificates, which the
// ServiceMonitors cannot verify (insecureSkipVerify).
const (
	ServiceCAFile = "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt"
	// metricsCertDir is where the pods mount their metrics certificate.
	metricsCertDir = "/etc/metrics-cert"
)

// metricsCertsData names, where the service CA signs, the Secrets of the
// metrics Services' certificates; all empty elsewhere.
type metricsCertsData struct {
	// Annotation, Dir and CAFile are objects.ServingCertSecretAnnotation,
	// metricsCertDir and ServiceCAFile.
	Annotation, Dir, CAFile     string
	Controller, Speaker, FRRK8s string
}

// metricsCerts are the metrics certificates' Secrets of the settings.
func metricsCerts(s Settings) metricsCertsData {
	if !s.OpenShift {
		return metricsCertsData{}
	}
	return metricsCertsData{Annotation: objects.ServingCertSecretAnnotation, Dir: metricsCertDir, CAFile: ServiceCAFile,
		Controller: "controller-metrics-cert", Speaker: "speaker-metrics-cert", FRRK8s: FRRK8sPrefix + "metrics-cert"}
}
