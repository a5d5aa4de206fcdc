package testenv

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServeWithFaults serves, on loopback, the API server of a kubeconfig to a
// client of another process (the operator's binary), with f's faults in its
// requests, and returns the kubeconfig of that client (ServeThrough).
func ServeWithFaults(t testing.TB, kubeconfig string, f *Faults) string {
	t.Helper()
	return ServeThrough(t, kubeconfig, f.Wrap)
}

// ServeThrough serves, on loopback, the API server of a kubeconfig to a
// client of another process, its requests made through wrap's round
// tripper, and returns the kubeconfig of that client: plain HTTP and no
// credentials, the proxy making every request as the kubeconfig's user. A
// request that failed (a lost connection injected, or the API server lost)
// loses the client's connection. It stops with the test.
func ServeThrough(t testing.TB, kubeconfig string, wrap func(http.RoundTripper) http.RoundTripper) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport:     wrap(rt),
		FlushInterval: -1, // a watch's events as they come
		ErrorHandler:  dropConnection,
	}
	server := httptest.NewServer(proxy)
	t.Cleanup(server.Close)

	file := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := WriteKubeconfig(file, &clientcmdapi.Cluster{Server: server.URL}, &clientcmdapi.AuthInfo{}); err != nil {
		t.Fatal(err)
	}
	return file
}

// dropConnection closes the client's connection when a request to the API
// server failed (a lost connection injected, or the API server's lost): the
// client sees its connection lost, as it would without the proxy, rather
// than the proxy's 502.
func dropConnection(w http.ResponseWriter, _ *http.Request, _ error) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	_ = conn.Close()
}
