package cluster

import (
	"fmt"
	"strings"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
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

// nextTag is the image tag of the stories' next release, which runs the
// operand's binaries.
const nextTag = release.MetalLB + "-1"

// kubeProxyImage is kube-proxy's image, as testdata/kube-proxy.yaml names it.
const kubeProxyImage = "registry.k8s.io/kube-proxy:v1.37.2"

// registry is the test nodes' registry: every image that the operator's
// environment names for the operand's release, the stories' next release
// and the previous release (Release; the previous is also the hand install's),
// kube-proxy's, and the stories' own (extra). Any other reference fails to
// pull, as an image no registry has: a wrong registry, organisation or tag in
// what the operator renders shows on the node. An image's binaries are found
// when it is pulled, so that a node that pulls no frr-k8s needs none built.
func registry(extra map[string]noderunner.Image) (map[string]func() (noderunner.Image, error), error) {
	images := map[string]func() (noderunner.Image, error){
		kubeProxyImage: func() (noderunner.Image, error) {
			return withFiles(noderunner.Image{System: true}, map[string]string{"/kube-proxy": "kube-proxy"})
		},
	}
	for ref, im := range extra {
		images[ref] = func() (noderunner.Image, error) { return im, nil }
	}
	for _, tag := range []string{release.MetalLB, nextTag, release.PreviousMetalLB} {
		named, err := manifests.ImagesFromEnv(envOf(Release("", tag)), "none")
		if err != nil {
			return nil, err
		}
		suffix := ""
		if tag == release.PreviousMetalLB {
			suffix = "-" + tag
		}
		images[named.Controller] = binaryImage("/controller", "metallb-controller"+suffix)
		images[named.Speaker] = binaryImage("/speaker", "metallb-speaker"+suffix)
		images[named.FRRK8s] = frrK8sImage
		images[named.FRR] = func() (noderunner.Image, error) { return frrImage, nil }
	}
	return images, nil
}

// pullFrom pulls from a registry.
func pullFrom(images map[string]func() (noderunner.Image, error)) func(string) (noderunner.Image, error) {
	return func(ref string) (noderunner.Image, error) {
		image, ok := images[ref]
		if !ok {
			return noderunner.Image{}, fmt.Errorf("failed to resolve reference %q: %s: not found", ref, ref)
		}
		return image()
	}
}

// envOf reads an environment's variables.
func envOf(env []string) func(string) string {
	return func(key string) string {
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == key {
				return v
			}
		}
		return ""
	}
}

// binaryImage is an image of one binary, its entry point, as MetalLB's are.
func binaryImage(path, binary string) func() (noderunner.Image, error) {
	return func() (noderunner.Image, error) {
		return withFiles(noderunner.Image{Entrypoint: []string{path}}, map[string]string{path: binary})
	}
}

// withFiles gives an image the test binaries it holds: path in the container
// → the binary's name.
func withFiles(im noderunner.Image, binaries map[string]string) (noderunner.Image, error) {
	im.Files = map[string]string{}
	for path, name := range binaries {
		var err error
		if im.Files[path], err = testenv.Binary(name); err != nil {
			return noderunner.Image{}, err
		}
	}
	return im, nil
}

// frrK8sImage is frr-k8s's image: its programs as its Dockerfile places them,
// with the node's shell to copy them.
func frrK8sImage() (noderunner.Image, error) {
	return withFiles(noderunner.Image{System: true}, map[string]string{"/frr-k8s": "frr-k8s", "/statuscleaner": "frr-k8s-statuscleaner",
		"/frr-metrics": "frr-metrics", "/frr-status": "frr-status", "/frr-reloader.sh": "frr-reloader.sh"})
}

// frrImage is FRR's, Debian's frr package: the image starts FRR's daemons with
// tini and its docker-start script, which the package lacks; Debian's scripts
// start them instead, and frrinit.sh stops them on SIGTERM, so that bgpd
// closes its sessions as a pod's FRR does when deleted.
//
// The daemons are started before watchfrr (one that fails to, watchfrr starts
// as before), which then finds them up and forks no job to start them. FRR's
// watchfrr (8.4 here, and still in 10.x) reaps one child each time it handles
// SIGCHLD, and signals that arrive together are handled once: when a start job
// ended with the `vtysh -w` that a `write` asks watchfrr for, that write's end
// could be missed and the `write` never answered. frr-reload.py ends each
// reload with a `write`, and a reloader stuck there holds every later reload
// behind its lock (docs/benchmarks.md, "Feedback", run 23).
var frrImage = noderunner.Image{System: true, Commands: map[string][]string{
	"/bin/sh -c /sbin/tini -- /usr/lib/frr/docker-start": {"/bin/sh", "-c",
		"/usr/lib/frr/watchfrr.sh start all; /usr/lib/frr/frrinit.sh start || exit 1; " +
			"trap '/usr/lib/frr/frrinit.sh stop; exit 0' TERM; sleep infinity & wait $!"},
}}
