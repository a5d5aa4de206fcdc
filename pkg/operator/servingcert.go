package operator

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"sync"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// dirCertificate serves the certificate in a directory once its files exist,
// read again whenever they change, and its own self-signed one until then. On
// OpenShift the service CA writes the metrics Service's certificate into a
// Secret the manifests mount there, optional so that the operator starts
// anywhere: the pod may start before the Secret exists, and the kubelet fills
// the mount in, and renews it, while the operator runs.
type dirCertificate struct {
	dir        string
	selfSigned *tls.Certificate

	mu      sync.Mutex
	loaded  *tls.Certificate
	modTime time.Time
}

func newDirCertificate(dir string) (*dirCertificate, error) {
	cert, key, err := certutil.GenerateSelfSignedCertKey("localhost", nil, nil)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, err
	}
	return &dirCertificate{dir: dir, selfSigned: &pair}, nil
}

// get is a tls.Config's GetCertificate: the directory's certificate when its
// files exist and hold a key pair, else the last one loaded, else the
// self-signed one.
func (d *dirCertificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	certFile, keyFile := filepath.Join(d.dir, "tls.crt"), filepath.Join(d.dir, "tls.key")
	d.mu.Lock()
	defer d.mu.Unlock()
	info, err := os.Stat(certFile) // follows the kubelet's symlinks to the Secret's current files
	if err == nil && (d.loaded == nil || !info.ModTime().Equal(d.modTime)) {
		if pair, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
			d.loaded, d.modTime = &pair, info.ModTime()
		}
	}
	if d.loaded != nil {
		return d.loaded, nil
	}
	return d.selfSigned, nil
}
