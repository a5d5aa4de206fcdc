package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// MetalLB of the previous release installed by hand, as upstream's docs say
// (`kubectl apply -f metallb-native.yaml`; its controller creates the
// memberlist Secret), with no operator: the node runner runs that release's
// binaries for its image tags, and a Service's address is answered. The
// takeover and upgrade stories start from this cluster.
func TestHandInstalledPreviousReleaseAnswers(t *testing.T) {
	if !world.Enter(t, world.Beside) {
		return
	}
	c := newMetallbCluster(t)
	c.handInstall(t, release.PreviousMetalLB)
	c.waitMetallb(t, release.PreviousMetalLB, 3*time.Minute)
	c.configure(t)
	ip := c.exposeService(t)
	t.Logf("%s answered by %s", ip, c.answerer(t, ip, 30*time.Second))
}

// handInstall applies upstream's native manifest of a release, copied into
// testdata by `make update-bindata`.
func (c *metallbCluster) handInstall(t *testing.T, version string) {
	t.Helper()
	manifest := filepath.Join("testdata", "metallb-native-"+version+".yaml")
	if out, err := kubectlErr(c.Env, "apply", "-f", manifest); err != nil {
		t.Fatalf("kubectl apply -f %s: %v\n%s", manifest, err, out)
	}
}
