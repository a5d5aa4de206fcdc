package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/cluster"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// metallbChart is upstream's Helm chart of the operand's release, copied by
// `make update-bindata`.
const metallbChart = "testdata/metallb-chart-" + release.MetalLB

// A takeover asked for, of an installation it cannot safely take: each case
// is installed as users do, the operator (with the manifests' RBAC) reports
// it, the namespace is annotated, and the operator says what stops the
// takeover, in the Degraded condition and an Event of the case's reason, and
// changes nothing: every object keeps its resourceVersion, and the audit log
// shows the operator wrote nothing but Events and the ClusterOperator's
// status.
func TestTakeoverRefusedOnOddInput(t *testing.T) {
	world.SideBySide(t, world.Long)
	for _, tc := range []struct {
		name    string
		install func(t *testing.T, env *testenv.Env)
		reason  string
		want    []string // in the condition's message and the Event's note
		then    func(t *testing.T, env *testenv.Env)
	}{
		{"MetalLB in another namespace", installInNamespace("metallb-elsewhere"), "MetalLBInAnotherNamespace",
			[]string{"DaemonSet metallb-elsewhere/speaker runs MetalLB's speaker outside metallb-system", "kubectl delete -n metallb-elsewhere daemonset/speaker"}, nil},
		{"a Helm release", helmInstall, "HelmRelease",
			[]string{"Helm's release metallb manages 13 of the objects", "kubectl delete secret -n metallb-system -l owner=helm,name=metallb; kubectl label -n metallb-system crd/bfdprofiles.metallb.io"},
			letHelmGo},
		{"two speaker DaemonSets", installWithSecondSpeaker, "AnotherMetalLBWorkload",
			[]string{"DaemonSet metallb-system/speaker-edge runs MetalLB's speaker under another name than speaker", "kubectl delete -n metallb-system daemonset/speaker-edge"}, nil},
		{"a memberlist Secret without secretkey", installWithMemberlistKey("key"), "MemberlistKeyMissing",
			[]string{"Secret metallb-system/memberlist has no key secretkey (its keys: key)", "jsonpath='{.data.key}'"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := takeoverCluster(t)
			tc.install(t, env)
			op := startOperator(t, env, cluster.Release("4.22.0", release.MetalLB), "--kubeconfig="+serviceAccountKubeconfig(t, env), "--platform=BareMetal")
			op.waitReady(t)
			waitClusterOperatorCondition(t, env, "Degraded", "True ForeignObjects")
			before := resourceVersions(t, env)
			asked := time.Now()
			kubectl(t, env, "annotate", "namespace", "metallb-system", "networkoperator.openshift.io/adopt-metallb=true")

			message := waitClusterOperatorCondition(t, env, "Degraded", "True TakeoverBlocked")
			note := strings.Join(waitEventNotes(t, env, tc.reason), "\n")
			for _, want := range tc.want {
				if !strings.Contains(message, want) || !strings.Contains(note, want) {
					t.Errorf("the condition and the %s Event do not both say %q:\n condition: %s\n Event: %s", tc.reason, want, message, note)
				}
			}
			if after := resourceVersions(t, env); !slices.Equal(after, before) {
				t.Errorf("objects changed:\n before %q\n after  %q", before, after)
			}
			assertWroteOnlyStatus(t, env, asked)
			if tc.then != nil {
				tc.then(t, env)
			}
		})
	}
}

// takeoverCluster is a control plane with the operator's manifests and the
// ClusterOperator applied, and an audit log.
func takeoverCluster(t *testing.T) *testenv.Env {
	env := testenv.New(t, testenv.Options{Audit: true})
	kubectl(t, env, "apply", "-f", clusterOperatorsCRD)
	kubectl(t, env, "wait", "--for=condition=Established", "crd/clusteroperators.config.openshift.io")
	kubectl(t, env, "apply", "-k", manifestsDir)
	kubectl(t, env, "apply", "-f", filepath.Join(manifestsDir, "0000_70_metallb_06_clusteroperator.yaml"))
	return env
}

// installInNamespace installs upstream's manifest in another namespace, as
// kustomize's namespace field does, with the memberlist Secret as upstream's
// docs create it.
func installInNamespace(namespace string) func(*testing.T, *testenv.Env) {
	return func(t *testing.T, env *testenv.Env) {
		dir := t.TempDir()
		manifest, err := os.ReadFile(upstreamManifest)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "metallb-native.yaml"), string(manifest))
		write(t, filepath.Join(dir, "kustomization.yaml"), "namespace: "+namespace+"\nresources:\n- metallb-native.yaml\n")
		kubectl(t, env, "apply", "-k", dir)
		kubectl(t, env, "create", "secret", "generic", "memberlist", "-n", namespace, "--from-literal=secretkey="+strings.Repeat("k", 128))
	}
}

// helmInstall installs upstream's chart with Helm, in MetalLB's namespace.
func helmInstall(t *testing.T, env *testenv.Env) {
	helm(t, env, "install", "metallb", metallbChart, "--namespace", "metallb-system")
}

// installWithSecondSpeaker installs upstream's manifest, and a second speaker
// DaemonSet made from its own, as for a pool of nodes of their own.
func installWithSecondSpeaker(t *testing.T, env *testenv.Env) {
	installWithMemberlistKey("secretkey")(t, env)
	manifest, err := os.ReadFile(upstreamManifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		if strings.Contains(doc, "\nkind: DaemonSet\n") {
			edge := strings.Replace(doc, "\n  name: speaker\n", "\n  name: speaker-edge\n", 1)
			kubectl(t, env, "apply", "-f", writeTemp(t, edge))
			return
		}
	}
	t.Fatalf("%s has no DaemonSet", upstreamManifest)
}

// installWithMemberlistKey installs upstream's manifest with a memberlist
// Secret whose one key is named key.
func installWithMemberlistKey(key string) func(*testing.T, *testenv.Env) {
	return func(t *testing.T, env *testenv.Env) {
		kubectl(t, env, "apply", "-f", upstreamManifest)
		kubectl(t, env, "create", "secret", "generic", "memberlist", "-n", "metallb-system", "--from-literal="+key+"="+strings.Repeat("k", 128))
	}
}

// installationKinds are the kinds of the objects an installation of MetalLB
// has, for kubectl get.
const installationKinds = "customresourcedefinitions,validatingwebhookconfigurations,clusterroles,clusterrolebindings," +
	"daemonsets,deployments,services,secrets,configmaps,serviceaccounts,roles,rolebindings"

// resourceVersions lists every object of the kinds an installation of
// MetalLB has, as "kind/namespace/name resourceVersion", sorted.
func resourceVersions(t *testing.T, env *testenv.Env) []string {
	t.Helper()
	out := kubectl(t, env, "get", "-A", "-o", `jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}`,
		installationKinds)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(lines)
	return lines
}

// assertWroteOnlyStatus checks, by the audit log, that since a time the
// operator wrote nothing but Events, the ClusterOperator's status and its
// leader Lease, which it renews whatever it does.
func assertWroteOnlyStatus(t *testing.T, env *testenv.Env, since time.Time) {
	t.Helper()
	for _, r := range readAudit(t, env.AuditLog, operatorAccount) {
		reports := r.Resource == "events" || r.Resource == "clusteroperators/status"
		renews := r.Resource == "leases" && r.Name == operator.LeaseName
		if r.IsWrite() && r.Received.After(since) && !reports && !renews {
			t.Errorf("the operator wrote: %s %s", r, r.Name)
		}
	}
}

// waitEventNotes waits for Events of a reason and returns their notes.
func waitEventNotes(t *testing.T, env *testenv.Env, reason string) []string {
	t.Helper()
	var out string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(context.Context) (bool, error) {
		out, _ = kubectlErr(env, "get", "events.events.k8s.io", "-A", "--field-selector=reason="+reason, "-o", `jsonpath={range .items[*]}{.note}{"\n"}{end}`)
		return strings.TrimSpace(out) != "", nil
	})
	if err != nil {
		t.Fatalf("no Event of reason %s within a minute", reason)
	}
	return strings.Split(strings.TrimSpace(out), "\n")
}

// letHelmGo does what the Events said of a Helm install, which the user
// guide says too: Helm forgets the release, its label comes off what the
// operator takes over, and Helm's own workloads go. Then the operator takes
// the rest over, Helm can no longer delete it, and the guide's commands
// remove what the chart left under its own names.
func letHelmGo(t *testing.T, env *testenv.Env) {
	guide, err := os.ReadFile(userGuide)
	if err != nil {
		t.Fatal(err)
	}
	for _, reason := range []string{"HelmRelease", "AnotherMetalLBWorkload"} {
		for _, note := range waitEventNotes(t, env, reason) {
			for _, command := range commandsOf(t, note) {
				if !strings.Contains(string(guide), command) {
					t.Errorf("the user guide does not say what the %s Event does: %s", reason, command)
				}
				t.Logf("$ %s\n%s", command, kubectl(t, env, strings.Fields(command)[1:]...))
			}
		}
	}
	if releases := strings.TrimSpace(helm(t, env, "list", "-n", "metallb-system", "-q")); releases != "" {
		t.Errorf("Helm still lists releases: %s", releases)
	}
	waitClusterOperatorCondition(t, env, "Degraded", "False AsExpected")
	crd := kubectl(t, env, "get", "crd", "ipaddresspools.metallb.io", "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}")
	if crd != "cluster-network-operator" {
		t.Errorf("the IPAddressPool CRD was not taken over: managed-by %q", crd)
	}
	if out, err := helmErr(env, "uninstall", "metallb", "-n", "metallb-system"); err == nil || !strings.Contains(out, "not found") {
		t.Errorf("helm uninstall did not fail for want of the release: %v\n%s", err, out)
	}
	for _, command := range guideCommands(t, "helm-leftovers") {
		t.Logf("$ %s\n%s", strings.Join(command, " "), kubectl(t, env, command[1:]...))
	}
	// The guide leaves frr-k8s's CRDs, and the FRRConfigurations in them.
	left := slices.DeleteFunc(helmLabelled(t, env), func(o string) bool { return strings.HasSuffix(o, ".frrk8s.metallb.io") })
	if len(left) > 0 {
		t.Errorf("Helm's objects left after the guide's clean-up: %q", left)
	}
	waitClusterOperatorCondition(t, env, "Degraded", "False AsExpected")
}

// helmLabelled lists the objects, of the kinds an installation of MetalLB
// has, that carry Helm's label.
func helmLabelled(t *testing.T, env *testenv.Env) []string {
	t.Helper()
	out := kubectl(t, env, "get", "-A", "-l", "app.kubernetes.io/managed-by=Helm", "-o", `jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\n"}{end}`,
		installationKinds)
	return strings.Fields(out)
}

// commandsOf returns the kubectl commands a note ends with: after its last
// colon, separated by semicolons.
func commandsOf(t *testing.T, note string) []string {
	t.Helper()
	commands := strings.Split(note[strings.LastIndex(note, ": ")+2:], "; ")
	for _, command := range commands {
		if !strings.HasPrefix(command, "kubectl ") {
			t.Fatalf("%q is not a kubectl command (from %q)", command, note)
		}
	}
	return commands
}

func helm(t *testing.T, env *testenv.Env, args ...string) string {
	t.Helper()
	return mustRun(t, "helm", args)(helmErr(env, args...))
}

// helmErr runs Helm with its settings and caches in a folder of their own.
// waitWholeListsServed waits until the API server serves a list of all the
// objects of each CRD of a group (and its subgroups): the request of the CRD
// finalizer that deletes them. Until a new CRD's watch cache has filled, such
// a list is refused (429, "storage is (re)initializing"), and the finalizer
// retries with a backoff that doubles from 5 ms: a CRD deleted in its first
// seconds was seen to outlive a minute on a loaded machine.
func waitWholeListsServed(t *testing.T, env *testenv.Env, group string) {
	t.Helper()
	var out string
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(context.Context) (bool, error) {
		paths := kubectl(t, env, "get", "crd", "-o",
			`jsonpath={range .items[*]}/apis/{.spec.group}/{.spec.versions[?(@.storage==true)].name}/{.spec.names.plural}{"\n"}{end}`)
		for _, path := range strings.Fields(paths) {
			if !strings.HasSuffix(strings.Split(path, "/")[2], group) {
				continue
			}
			var err error
			if out, err = kubectlErr(env, "get", "--raw", path); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the lists of %s's objects are not served: %s", group, out)
	}
}

func helmErr(env *testenv.Env, args ...string) (string, error) {
	home := filepath.Join(env.Dir, "helm")
	return toolErr(env, "helm", []string{"HELM_CONFIG_HOME=" + home, "HELM_CACHE_HOME=" + home, "HELM_DATA_HOME=" + home}, args...)
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Why a Helm release must let go before a takeover: helm uninstall of
// upstream's chart deletes MetalLB's CRDs, and with them every pool.
func TestHelmUninstallDeletesMetalLBsCRDs(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env, "metallb-system")
	helmInstall(t, env)
	waitWholeListsServed(t, env, "metallb.io")
	helm(t, env, "uninstall", "metallb", "-n", "metallb-system")
	err := wait.PollUntilContextTimeout(t.Context(), kubectlPoll, time.Minute, true, func(context.Context) (bool, error) {
		out, _ := kubectlErr(env, "get", "crd", "-o", "name")
		return !strings.Contains(out, "metallb.io"), nil
	})
	if err != nil {
		t.Errorf("MetalLB's CRDs outlived helm uninstall: %s", kubectl(t, env, "get", "crd", "-o", "name"))
	}
}
