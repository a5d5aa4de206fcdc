package e2e

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// kubectlPoll is how often a wait that asks kubectl asks it again. A kubectl
// process costs the loaded machine some 0.1 CPU-second before it sends
// anything (a 62 MB binary initializing its schemes), and the API server a
// TLS handshake: the waits on the ClusterOperator, the MetalLB object and
// MetalLB's and frr-k8s's status objects ask the API server from here (the
// helpers below), as does applyOnceServed until the API server takes a file.
const kubectlPoll = time.Second

// clients are the dynamic clients of each control plane, one each, so that
// the waits reuse one connection.
var clients sync.Map // *testenv.Env → dynamic.Interface

func dynamicClient(t *testing.T, env *testenv.Env) dynamic.Interface {
	t.Helper()
	if c, ok := clients.Load(env); ok {
		return c.(dynamic.Interface)
	}
	c, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clients.Delete(env) })
	actual, _ := clients.LoadOrStore(env, c)
	return actual.(dynamic.Interface)
}

// The resources the waits read.
var (
	clusterOperators   = configv1.GroupVersion.WithResource("clusteroperators")
	metallbs           = v1beta1.GroupVersion.WithResource("metallbs")
	serviceBGPStatuses = v1beta1.GroupVersion.WithResource("servicebgpstatuses")
	frrK8sAPI          = schema.GroupVersion{Group: "frrk8s.metallb.io", Version: "v1beta1"}
	frrNodeStates      = frrK8sAPI.WithResource("frrnodestates")
	bgpSessionStates   = frrK8sAPI.WithResource("bgpsessionstates")
)

// clusterOperator reads the ClusterOperator metallb; nil when it cannot.
func clusterOperator(ctx context.Context, c dynamic.Interface) *unstructured.Unstructured {
	co, err := c.Resource(clusterOperators).Get(ctx, "metallb", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return co
}

// clusterOperatorSettled tells whether the ClusterOperator metallb reports
// the operator's version and is Available, not Progressing, not Degraded:
// what `kubectl get clusteroperator metallb` shows as "version True False False".
func clusterOperatorSettled(ctx context.Context, c dynamic.Interface, version string) bool {
	co := clusterOperator(ctx, c)
	return operatorVersion(co) == version &&
		condition(co, string(configv1.OperatorAvailable))["status"] == "True" &&
		condition(co, string(configv1.OperatorProgressing))["status"] == "False" &&
		condition(co, string(configv1.OperatorDegraded))["status"] == "False"
}

// operatorVersion is the operator version a ClusterOperator reports; "" when none.
func operatorVersion(co *unstructured.Unstructured) string {
	v, _ := statusItem(co, "versions", "name", "operator")["version"].(string)
	return v
}

// condition is an object's status condition of a type; nil when it has none.
func condition(obj *unstructured.Unstructured, typ string) map[string]any {
	return statusItem(obj, "conditions", "type", typ)
}

// statusItem is the item of a status list whose key is value; nil when none.
func statusItem(obj *unstructured.Unstructured, list, key, value string) map[string]any {
	if obj == nil {
		return nil
	}
	items, _, _ := unstructured.NestedSlice(obj.Object, "status", list)
	for _, item := range items {
		if m, ok := item.(map[string]any); ok && m[key] == value {
			return m
		}
	}
	return nil
}

// listed says each object of a list (all namespaces when ns is "") as read
// says it, sorted; nil when it cannot list them.
func listed(ctx context.Context, c dynamic.Interface, gvr schema.GroupVersionResource, ns string, read func(obj map[string]any) string) []string {
	list, err := c.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, o := range list.Items {
		out = append(out, read(o.Object))
	}
	slices.Sort(out)
	return out
}

// stringAt reads a string at a path of an object; "" when there is none.
func stringAt(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

// applyOnceServed applies a file with kubectl once the API server takes
// each of its objects: until the operator has installed their CRDs and the
// webhooks that check them answer, each try is a server-side dry run from
// here, not a kubectl process.
func applyOnceServed(t *testing.T, env *testenv.Env, file string) {
	t.Helper()
	applyOnceServedAfter(t, env, file, func() {})
}

// applyOnceServedAfter is applyOnceServed, calling first once the API
// server takes the objects, right before they are applied.
func applyOnceServedAfter(t *testing.T, env *testenv.Env, file string, first func()) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, data)
	disco, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	var mapper meta.RESTMapper
	var refused error
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if mapper == nil {
			groups, err := restmapper.GetAPIGroupResources(disco)
			if err != nil {
				refused = err
				return false, nil
			}
			mapper = restmapper.NewDiscoveryRESTMapper(groups)
		}
		refused = dryRunApply(ctx, dynamicClient(t, env), mapper, objs)
		if meta.IsNoMatchError(refused) {
			mapper = nil // read again: the CRD may be served by now
		}
		return refused == nil, nil
	})
	if err != nil {
		t.Fatalf("the API server never took %s: %v", file, refused)
	}
	first()
	var out string
	err = wait.PollUntilContextTimeout(t.Context(), kubectlPoll, 30*time.Second, true, func(context.Context) (bool, error) {
		out, err = kubectlErr(env, "apply", "-f", file)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("kubectl apply -f %s: %s", file, out)
	}
}

// dryRunApply applies each object as a server-side dry run: the API server
// checks it as it would the real one, the admission webhooks included.
func dryRunApply(ctx context.Context, c dynamic.Interface, mapper meta.RESTMapper, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return err
		}
		ns := o.GetNamespace()
		if ns == "" && mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = "default"
		}
		_, err = c.Resource(mapping.Resource).Namespace(ns).Apply(ctx, o.GetName(), o,
			metav1.ApplyOptions{FieldManager: "e2e-dry-run", Force: true, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
	}
	return nil
}
