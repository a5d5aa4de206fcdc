package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// ToolsPathEnv names the variable holding the colon-separated folders of the test
// binaries, as printed by `hack/tools.sh path`. When it is unset the package asks
// hack/tools.sh of the enclosing repository.
const ToolsPathEnv = "TESTENV_TOOLS_PATH"

var toolsPath = sync.OnceValues(func() ([]string, error) {
	if p := os.Getenv(ToolsPathEnv); p != "" {
		return filepath.SplitList(p), nil
	}
	script, err := findToolsScript()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(script, "path").Output()
	if err != nil {
		return nil, fmt.Errorf("%s path: %v", script, err)
	}
	return filepath.SplitList(strings.TrimSpace(string(out))), nil
})

// Binary returns the path of a test binary by name, as hack/tools.sh builds it:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl,
// kube-proxy, kwok, helm and the others it builds; or of a file it places
// beside them (prometheus-operator's CRDs).
func Binary(name string) (string, error) {
	dirs, err := toolsPath()
	if err != nil {
		return "", err
	}
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not built in %s: run `make tools`", name, strings.Join(dirs, ":"))
}

// findToolsScript walks up from the working directory, which `go test` sets to
// the package's folder, to the repository's hack/tools.sh.
func findToolsScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		script := filepath.Join(dir, "hack", "tools.sh")
		if _, err := os.Stat(script); err == nil {
			return script, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("neither $%s is set nor hack/tools.sh found above the working directory", ToolsPathEnv)
		}
		dir = parent
	}
}

// ClosedPortKubeconfig writes into dir a kubeconfig naming a local port
// nothing listens on: a client of it waits for, or fails to reach, an API
// server that is not there, having read nothing.
func ClosedPortKubeconfig(dir string) (string, error) {
	addr, err := ReserveAddr("127.0.0.1")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: closed, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
users: [{name: nobody, user: {token: none}}]
contexts: [{name: closed, context: {cluster: closed, user: nobody}}]
current-context: closed
`, addr)
	return path, os.WriteFile(path, []byte(data), 0o600)
}
