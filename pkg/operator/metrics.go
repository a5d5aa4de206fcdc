package operator

import (
	"crypto/tls"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bmlb/cluster-network-operator/pkg/tlsprofile"
)

// metricsOptions serve the operator's metrics as MetalLB serves its own: over
// HTTPS (with the certificate of o.MetricsCertDir once there is one there,
// else a self-signed one), and only to a bearer token whose user may get the
// non-resource URL /metrics, which the API server decides (see metricsAuth).
// A request without a token is answered 401, one whose user may not read the
// metrics 403. The manifests' ClusterRole cluster-network-operator-metrics-reader
// is what to bind a scraper to.
// The TLS profile is serving's, set by a module (TLSGoverning). On a loopback
// address they are plain HTTP unless --metrics-secure says (metricsOverHTTPS).
func metricsOptions(o Options, serving *tlsprofile.Serving) (metricsserver.Options, error) {
	if !o.metricsOverHTTPS() {
		// Plain HTTP on loopback (validateMetricsSecure).
		return metricsserver.Options{BindAddress: o.MetricsAddress, HandlerOpts: uncompressed}, nil
	}
	tlsOpts := []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }, serving.Configure}
	if o.MetricsCertDir != "" {
		cert, err := newDirCertificate(o.MetricsCertDir)
		if err != nil {
			return metricsserver.Options{}, err
		}
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.GetCertificate = cert.get })
	}
	return metricsserver.Options{
		BindAddress:    o.MetricsAddress,
		SecureServing:  true,
		FilterProvider: metricsAuth,
		// HTTP/1.1 only, as kubebuilder's projects do: HTTP/2's rapid stream
		// resets (CVE-2023-44487) would let anyone who reaches the port, token
		// or not, keep the operator busy.
		TLSOpts:     tlsOpts,
		HandlerOpts: uncompressed,
	}, nil
}

// uncompressed: each concurrent scrape asked for gzip took a deflate writer
// of some 800 KiB, kept in a pool between scrapes, more than a tenth of the
// operator's live heap, for a page of some 100 KiB that crosses the pod
// network once every scrape interval.
var uncompressed = []func(*promhttp.HandlerOpts){func(h *promhttp.HandlerOpts) { h.DisableCompression = true }}
