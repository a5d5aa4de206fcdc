package noderunner

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probe runs an HTTP probe as a kubelet does, from inside the pod's network
// namespace (the kubelet of a host-network pod is on the same network).
func probe(p *podRun, c *container, pr *corev1.Probe) error {
	get := pr.HTTPGet
	if get == nil {
		return fmt.Errorf("only HTTP probes are supported by the node runner")
	}
	host := get.Host
	if host == "" {
		host = p.host.IP.String()
	}
	port, err := probePort(c.spec, get)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(get.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	timeout := time.Duration(max(pr.TimeoutSeconds, 1)) * time.Second
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, // as a kubelet's HTTPS probes
		DialContext: func(ctx context.Context, network, addr string) (conn net.Conn, err error) {
			dialErr := inNetns(p.host.Netns, func() error {
				conn, err = (&net.Dialer{Timeout: timeout}).DialContext(ctx, network, addr)
				return err
			})
			return conn, dialErr
		},
	}}
	resp, err := client.Get(scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + get.Path)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

func probePort(ctr corev1.Container, get *corev1.HTTPGetAction) (int, error) {
	if get.Port.StrVal == "" {
		return get.Port.IntValue(), nil
	}
	for _, p := range ctr.Ports {
		if p.Name == get.Port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("probe port %s is not a port of the container", get.Port.StrVal)
}
