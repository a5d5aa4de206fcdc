package cluster

import (
	"strings"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/noderunner"
)

// RunnerPods are the pods the node runner runs, in any namespace: MetalLB's,
// frr-k8s's (its DaemonSet's and its status cleaner's), kube-proxy's and the
// backends that serve HTTP; kwok keeps the others.
const RunnerPods = "app in (metallb, frr-k8s, frr-k8s-webhook-server, kube-proxy, backend)"

// Release is the environment the operator is started with for a release: its
// version and MetalLB's images, whose tag shows which release a pod runs; and
// frr-k8s's image, tagged like MetalLB's past the operand's release (its
// suffix "-1" gives frr-k8s's release with "-1"), so that an upgrade rolls it
// too.
func Release(version, tag string) []string {
	frrK8sTag := release.FRRK8s
	if suffix, ok := strings.CutPrefix(tag, release.MetalLB); ok {
		frrK8sTag += suffix
	}
	return []string{"RELEASE_VERSION=" + version,
		"METALLB_CONTROLLER_IMAGE=quay.io/metallb/controller:" + tag,
		"METALLB_SPEAKER_IMAGE=quay.io/metallb/speaker:" + tag,
		"FRRK8S_IMAGE=quay.io/metallb/frr-k8s:" + frrK8sTag}
}

// metallbBinaries maps MetalLB's images, as the node runner looks them up, to
// their binaries: the previous release's for its tag, the operand's for any
// other.
func metallbBinaries() (map[string]string, error) {
	previous := release.PreviousMetalLB
	return testBinaries(map[string]string{
		"controller":             "metallb-controller",
		"speaker":                "metallb-speaker",
		"controller:" + previous: "metallb-controller-" + previous,
		"speaker:" + previous:    "metallb-speaker-" + previous,
	})
}

// runnerImages are the images of several files the runner runs: frr-k8s's and
// FRR's, and kube-proxy's, which calls the node's iptables.
func runnerImages() (map[string]noderunner.Image, error) {
	images, err := frrK8sImages()
	if err != nil {
		return nil, err
	}
	kubeProxy, err := testenv.Binary("kube-proxy")
	if err != nil {
		return nil, err
	}
	images["kube-proxy"] = noderunner.Image{Files: map[string]string{"/kube-proxy": kubeProxy}, System: true}
	return images, nil
}

// frrK8sImages are frr-k8s's image, its programs as its Dockerfile places them
// with the node's shell to copy them, and FRR's, Debian's frr package: the
// image starts FRR's daemons with tini and its docker-start script, which the
// package lacks; Debian's scripts start them instead, and frrinit.sh stops
// them on SIGTERM, so that bgpd closes its sessions as a pod's FRR does when
// deleted.
//
// The daemons are started before watchfrr (one that fails to, watchfrr starts
// as before), which then finds them up and forks no job to start them. FRR's
// watchfrr (8.4 here, and still in 10.x) reaps one child each time it handles
// SIGCHLD, and signals that arrive together are handled once: when a start job
// ended with the `vtysh -w` that a `write` asks watchfrr for, that write's end
// could be missed and the `write` never answered. frr-reload.py ends each
// reload with a `write`, and a reloader stuck there holds every later reload
// behind its lock (docs/benchmarks.md, "Feedback", run 23).
func frrK8sImages() (map[string]noderunner.Image, error) {
	files, err := testBinaries(map[string]string{"/frr-k8s": "frr-k8s", "/statuscleaner": "frr-k8s-statuscleaner",
		"/frr-metrics": "frr-metrics", "/frr-status": "frr-status", "/frr-reloader.sh": "frr-reloader.sh"})
	if err != nil {
		return nil, err
	}
	return map[string]noderunner.Image{
		"frr-k8s": {Files: files, System: true},
		"frr": {System: true, Commands: map[string][]string{
			"/bin/sh -c /sbin/tini -- /usr/lib/frr/docker-start": {"/bin/sh", "-c",
				"/usr/lib/frr/watchfrr.sh start all; /usr/lib/frr/frrinit.sh start || exit 1; " +
					"trap '/usr/lib/frr/frrinit.sh stop; exit 0' TERM; sleep infinity & wait $!"},
		}},
	}, nil
}

// testBinaries maps each key to the path of the test binary it names.
func testBinaries(names map[string]string) (map[string]string, error) {
	paths := map[string]string{}
	for key, name := range names {
		var err error
		if paths[key], err = testenv.Binary(name); err != nil {
			return nil, err
		}
	}
	return paths, nil
}
