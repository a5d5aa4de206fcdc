package noderunner

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// containerEnv resolves a container's environment as a kubelet does, with the
// in-cluster address of the API server. Only what MetalLB's manifests use is
// supported; anything else is an error that names it.
func containerEnv(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, hostIP, apiServer string, ctr corev1.Container) ([]string, error) {
	u, err := url.Parse(apiServer)
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, err
	}
	// Where a kubelet would give the kubernetes Service's address, the API
	// server's own: no kube-proxy makes Service addresses reachable here.
	env := []string{"KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port, "HOME=/"}
	if len(ctr.EnvFrom) > 0 {
		return nil, fmt.Errorf("container %s: envFrom is not supported by the node runner", ctr.Name)
	}
	for _, e := range ctr.Env {
		value, set, err := envValue(ctx, c, pod, hostIP, e)
		if err != nil {
			return nil, err
		}
		if set {
			env = append(env, e.Name+"="+value)
		}
	}
	return env, nil
}

// envValue is a variable's value as the kubelet resolves it; a key or
// object that is missing is an error with the kubelet's words unless the
// reference is optional, and then the variable is not set.
func envValue(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, hostIP string, e corev1.EnvVar) (string, bool, error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return e.Value, true, nil
	case from.FieldRef != nil:
		v, err := fieldValue(pod, hostIP, from.FieldRef.FieldPath)
		return v, true, err
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := c.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", false, optionalMissing(err, ref.Optional)
		}
		v, ok := s.Data[ref.Key]
		return string(v), ok, missingKey(ok, ref.Optional, "couldn't find key %v in Secret %v/%v", ref.Key, pod.Namespace, ref.Name)
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := c.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", false, optionalMissing(err, ref.Optional)
		}
		v, ok := cm.Data[ref.Key]
		return v, ok, missingKey(ok, ref.Optional, "couldn't find key %v in ConfigMap %v/%v", ref.Key, pod.Namespace, ref.Name)
	}
	return "", false, fmt.Errorf("env %s: only fieldRef, secretKeyRef and configMapKeyRef are supported by the node runner", e.Name)
}

// optionalMissing is err, unless it says the object is missing and the
// reference is optional.
func optionalMissing(err error, optional *bool) error {
	if apierrors.IsNotFound(err) && ptrOr(optional, false) {
		return nil
	}
	return err
}

// missingKey is the kubelet's error for a key that is not there, unless the
// reference is optional.
func missingKey(found bool, optional *bool, format string, args ...any) error {
	if found || ptrOr(optional, false) {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// fieldValue is a downward API field of the pod; the pod's address is its
// node's for host-network pods, its own otherwise (hostIP is the node's).
func fieldValue(pod *corev1.Pod, hostIP, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	case "status.podIP", "status.podIPs":
		return pod.Status.PodIP, nil
	}
	if key, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(key, "']")], nil
	}
	if key, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(key, "']")], nil
	}
	return "", fmt.Errorf("field %s is not supported by the node runner", path)
}

// expandAll expands $(VAR) references to the container's environment in its
// command and arguments, as a kubelet does: $$ is a literal $, and a reference
// to a variable not set is left as it is.
func expandAll(words, env []string) []string {
	vars := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		vars[k] = v
	}
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = expand(w, vars)
	}
	return out
}

func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
				name := s[i+2 : i+2+end]
				if v, ok := vars[name]; ok {
					b.WriteString(v)
					i += 2 + end
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
