package e2e

import (
	"path/filepath"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// The install manifests pass the API server's validation: `kubectl apply -k
// manifests/ --dry-run=server` as a plain Kubernetes user runs it, and the
// ClusterOperator, as the CVO applies it, where its API exists. A dry run
// creates no namespace, so the two namespaces are created first, as the first
// real apply would.
func TestManifestsPassServerSideDryRun(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env, operatorNamespace, metallbNamespace)
	t.Logf("kubectl apply -k manifests/ --dry-run=server:\n%s", kubectl(t, env, "apply", "-k", manifestsDir, "--dry-run=server"))
	kubectl(t, env, "apply", "-f", clusterOperatorsCRD)
	kubectl(t, env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io")
	kubectl(t, env, "apply", "--dry-run=server", "-f", filepath.Join(manifestsDir, "0000_70_metallb_06_clusteroperator.yaml"))
}
