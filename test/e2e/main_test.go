package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// controller-runtime's clients and managers here log through the tests or
// not at all; without a root logger each prints a stack saying none was set.
func init() { crlog.SetLogger(logr.Discard()) }

// operatorBinary is the cluster-network-operator built for this run,
// backendBinary the HTTP server of the stories with real traffic, and
// pluginBinary kubectl-metallb, which kubectl finds on the PATH.
var operatorBinary, backendBinary, pluginBinary string

// backendImage is the backend's image, which the test nodes pull.
const backendImage = "registry.example.com/backend:1"

const testVersion = "v0.0.0-e2e"

// clusterOperatorsCRD is OpenShift's ClusterOperator API, which the stories
// that read the ClusterOperator install.
const clusterOperatorsCRD = "../../pkg/status/publish/testdata/clusteroperators-crd.yaml"

func TestMain(m *testing.M) {
	noderunner.Main() // when this run is a container of the node runner, it becomes it
	if code, done := noderunner.Isolate(); done {
		os.Exit(code) // the tests ran in a network namespace of their own
	}
	flag.Parse()
	if err := world.TakeTurns(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if dir := os.Getenv(binariesEnv); dir != "" { // a story's copy in its world (package world)
		setBinaries(dir)
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cno-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	setBinaries(dir)
	for _, err := range []error{buildOperator(operatorBinary), build(backendBinary, "./backend"), build(pluginBinary, "../../cmd/kubectl-metallb"),
		os.Setenv(binariesEnv, dir)} {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binariesEnv hands the stories' copies the binaries built for this run.
const binariesEnv = "E2E_BINARIES"

func setBinaries(dir string) {
	operatorBinary = filepath.Join(dir, "cluster-network-operator")
	backendBinary = filepath.Join(dir, "backend")
	pluginBinary = filepath.Join(dir, "kubectl-metallb")
}

// buildOperator builds the binary the way `make build` does, with a known version.
func buildOperator(out string) error {
	cmd := exec.Command("go", "build", "-mod=vendor",
		"-ldflags", "-X github.com/bmlb/cluster-network-operator/pkg/version.Version="+testVersion,
		"-o", out, "../../cmd/cluster-network-operator")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the operator: %v\n%s", err, b)
	}
	return nil
}

// build builds a program that runs in the node runner's containers, which
// have no C library: statically.
func build(out, pkg string) error {
	cmd := exec.Command("go", "build", "-mod=vendor", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return nil
}
