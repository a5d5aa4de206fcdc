package noderunner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// volumeFile is one file of a volume: its path inside the volume, content, mode.
type volumeFile struct {
	path string
	data []byte
	mode os.FileMode
}

// volumeContents reads what a volume holds now, as a kubelet would project it:
// Secrets, ConfigMaps, service-account tokens and downward API items. Only
// emptyDir besides these is supported; anything else is an error that names it.
func volumeContents(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, hostIP string, v corev1.Volume) ([]volumeFile, error) {
	switch {
	case v.Secret != nil:
		return secretFiles(ctx, c, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, mode(v.Secret.DefaultMode))
	case v.ConfigMap != nil:
		return configMapFiles(ctx, c, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, mode(v.ConfigMap.DefaultMode))
	case v.Projected != nil:
		return projectedFiles(ctx, c, pod, hostIP, v.Projected)
	case v.EmptyDir != nil:
		return nil, nil
	}
	return nil, fmt.Errorf("volume %s: only secret, configMap, projected and emptyDir volumes are supported by the node runner", v.Name)
}

func projectedFiles(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, hostIP string, p *corev1.ProjectedVolumeSource) ([]volumeFile, error) {
	var files []volumeFile
	for _, src := range p.Sources {
		var more []volumeFile
		var err error
		switch {
		case src.Secret != nil:
			more, err = secretFiles(ctx, c, pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode(p.DefaultMode))
		case src.ConfigMap != nil:
			more, err = configMapFiles(ctx, c, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode(p.DefaultMode))
		case src.ServiceAccountToken != nil:
			var token string
			token, err = podToken(ctx, c, pod, src.ServiceAccountToken)
			more = []volumeFile{{path: src.ServiceAccountToken.Path, data: []byte(token), mode: mode(p.DefaultMode)}}
		case src.DownwardAPI != nil:
			for _, item := range src.DownwardAPI.Items {
				if item.FieldRef == nil {
					return nil, fmt.Errorf("downward API item %s: only fieldRef is supported", item.Path)
				}
				var value string
				if value, err = fieldValue(pod, hostIP, item.FieldRef.FieldPath); err != nil {
					return nil, err
				}
				more = append(more, volumeFile{path: item.Path, data: []byte(value), mode: mode(p.DefaultMode)})
			}
		default:
			err = fmt.Errorf("unsupported projected source %+v", src)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	return files, nil
}

func secretFiles(ctx context.Context, c kubernetes.Interface, ns, name string, items []corev1.KeyToPath, optional *bool, m os.FileMode) ([]volumeFile, error) {
	s, err := c.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return keyFiles(s.Data, items, optional, m, "references non-existent secret key: %s")
}

func configMapFiles(ctx context.Context, c kubernetes.Interface, ns, name string, items []corev1.KeyToPath, optional *bool, m os.FileMode) ([]volumeFile, error) {
	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("configmap %s: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles(data, items, optional, m, "configmap references non-existent config key: %s")
}

// keyFiles makes a file per key, or per listed item when items are given. A
// listed key that is missing fails the mount, with the kubelet's words
// (missing, its format), unless the volume is optional.
func keyFiles(data map[string][]byte, items []corev1.KeyToPath, optional *bool, m os.FileMode, missing string) ([]volumeFile, error) {
	var files []volumeFile
	if len(items) == 0 {
		for k, v := range data {
			files = append(files, volumeFile{path: k, data: v, mode: m})
		}
		return files, nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok && !ptrOr(optional, false) {
			return nil, fmt.Errorf(missing, item.Key)
		}
		if ok {
			files = append(files, volumeFile{path: item.Path, data: v, mode: modeOr(item.Mode, m)})
		}
	}
	return files, nil
}

// podToken asks for a token of the pod's service account, bound to the pod.
func podToken(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (string, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: p.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	res, err := c.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for service account %s: %v", sa, err)
	}
	return res.Status.Token, nil
}

// writeVolume brings dir to hold exactly files (sub-folders, which are mount
// points of other volumes, are left). Each file is replaced atomically, so a
// program reading it never sees half of it.
func writeVolume(dir string, files []volumeFile) error {
	keep := map[string]bool{}
	for _, f := range files {
		target := filepath.Join(dir, f.path)
		keep[target] = true
		if old, err := os.ReadFile(target); err == nil && bytes.Equal(old, f.data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(target), ".tmp-"+filepath.Base(target))
		if err := os.WriteFile(tmp, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(tmp, f.mode); err != nil { // WriteFile's mode passes the umask
			return err
		}
		if err := os.Rename(tmp, target); err != nil {
			return err
		}
	}
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || keep[p] || strings.HasPrefix(d.Name(), ".tmp-") {
			return err
		}
		return os.Remove(p)
	})
}

func mode(m *int32) os.FileMode { return modeOr(m, 0o644) }

func modeOr(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m)
}
