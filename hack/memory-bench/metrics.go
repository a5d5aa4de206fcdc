package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
)

// metricsReaderName names the ServiceAccount that reads the operator's
// metrics, and its ClusterRole and binding.
const metricsReaderName = "cno-bench-metrics-reader"

// metricsToken creates a ServiceAccount allowed to get /metrics, as a
// Prometheus scraping the operator has, and returns a token of it from the
// TokenRequest API.
func metricsToken(ctx context.Context, b *binarybench.Bench) (string, error) {
	ns := binarybench.OperatorNamespace
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: metricsReaderName, Namespace: ns}}
	if _, err := b.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: metricsReaderName},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	if _, err := b.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: metricsReaderName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: metricsReaderName}},
	}
	if _, err := b.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	tr, err := b.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, metricsReaderName, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for %s/%s: %v", ns, metricsReaderName, err)
	}
	return tr.Status.Token, nil
}

// metricsClient reads the metrics over http, or over https without verifying
// the certificate: the operator serves a self-signed one unless given its own.
func metricsClient() *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a local, self-signed endpoint
	return &http.Client{Transport: transport, Timeout: 10 * time.Second}
}

// metricsReader reads the operator's metrics endpoint.
type metricsReader struct {
	url, token string
	client     *http.Client
}

// read returns every sample of the endpoint, the samples of one metric name
// (with any labels) summed.
func (m *metricsReader) read() (map[string]float64, error) {
	req, err := http.NewRequest(http.MethodGet, m.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+m.token)
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", m.url, resp.Status)
	}
	return parseMetrics(bufio.NewScanner(resp.Body))
}

// parseMetrics reads Prometheus's text format as client_golang writes it:
// `name{labels} value`, no timestamps, comments and blank lines skipped. Each
// name's values are summed, and also by controller, as
// `name{controller="x"}`, for the series that have that label.
func parseMetrics(s *bufio.Scanner) (map[string]float64, error) {
	sums := map[string]float64{}
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}') // label values may hold spaces, not after the last brace
			if j < i {
				return nil, fmt.Errorf("malformed metrics line %q", line)
			}
			name, rest = line[:i], line[j+1:]
		} else if i := strings.IndexAny(line, " \t"); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %v", line, err)
		}
		sums[name] += v
		if c := controllerLabel(line); c != "" {
			sums[name+`{controller="`+c+`"}`] += v
		}
	}
	return sums, s.Err()
}

// unreadableFor is how long the metrics may fail to be read, while the
// operator starts serving them, before the URL counts as wrong.
const unreadableFor = 30 * time.Second

// waitSettled waits until the operator's reconcile count has not changed for
// settle: the endpoint has no watch, so it is read every second. It prints
// what the operator allocated while settled, those reads included: the
// garbage a settled operator makes between collections.
func waitSettled(ctx context.Context, m *metricsReader, settle time.Duration) error {
	start := time.Now()
	last, since := -1.0, time.Now()
	var allocated, allocatedSince float64
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		metrics, err := m.read()
		if err != nil && last < 0 && time.Since(start) > unreadableFor {
			return false, fmt.Errorf("reading the metrics (-metrics-url): %v", err)
		}
		if err != nil {
			lastErr = err
			return false, nil
		}
		n, ok := metrics["controller_runtime_reconcile_total"]
		if !ok {
			return false, fmt.Errorf("%s has no controller_runtime_reconcile_total", m.url)
		}
		allocated = metrics["go_memstats_alloc_bytes_total"]
		if n != last {
			last, since, allocatedSince = n, time.Now(), allocated
		}
		return time.Since(since) >= settle, nil
	})
	if err != nil && lastErr != nil && ctx.Err() != nil {
		return fmt.Errorf("the operator did not settle: %v (the last read failed: %v)", err, lastErr)
	}
	if err != nil {
		return fmt.Errorf("the operator did not settle: %v", err)
	}
	fmt.Printf("settled after %s: %.0f reconciles, none for %s, in which it allocated %s (%.0f KiB/s)\n", time.Since(start).Round(time.Millisecond), last, settle,
		binarybench.MiB(int64(allocated-allocatedSince)), (allocated-allocatedSince)/1024/time.Since(since).Seconds())
	return nil
}

// controllerLabel is the value of a series' controller label, or "".
func controllerLabel(line string) string {
	_, rest, ok := strings.Cut(line, `controller="`)
	if !ok {
		return ""
	}
	value, _, _ := strings.Cut(rest, `"`)
	return value
}
