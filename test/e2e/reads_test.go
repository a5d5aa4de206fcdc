package e2e

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// kubectlPoll is how often a wait asks kubectl again. A kubectl process
// costs the loaded machine some 50 ms of CPU (a large binary paged in, its
// discovery read and parsed) and the API server a TLS handshake: the waits
// that need no kubectl ask the API server from here, and those that read
// what kubectl shows ask once a second.
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

// clusterOperatorSettled tells whether the ClusterOperator metallb reports
// the operator's version and is Available, not Progressing, not Degraded:
// what `kubectl get clusteroperator metallb` shows as "version True False False".
func clusterOperatorSettled(ctx context.Context, c dynamic.Interface, version string) bool {
	return clusterOperatorVersion(ctx, c) == version &&
		clusterOperatorCondition(ctx, c, configv1.OperatorAvailable) == "True" &&
		clusterOperatorCondition(ctx, c, configv1.OperatorProgressing) == "False" &&
		clusterOperatorCondition(ctx, c, configv1.OperatorDegraded) == "False"
}

var clusterOperators = configv1.GroupVersion.WithResource("clusteroperators")

// clusterOperatorVersion is the operator version the ClusterOperator metallb
// reports; "" when it reports none, or cannot be read.
func clusterOperatorVersion(ctx context.Context, c dynamic.Interface) string {
	return clusterOperatorStatusItem(ctx, c, "versions", "name", "operator", "version")
}

// clusterOperatorCondition is the status of one of its conditions; "" when none.
func clusterOperatorCondition(ctx context.Context, c dynamic.Interface, typ configv1.ClusterStatusConditionType) string {
	return clusterOperatorStatusItem(ctx, c, "conditions", "type", string(typ), "status")
}

// clusterOperatorStatusItem reads field of the item of a status list whose
// key is value.
func clusterOperatorStatusItem(ctx context.Context, c dynamic.Interface, list, key, value, field string) string {
	co, err := c.Resource(clusterOperators).Get(ctx, "metallb", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	items, _, _ := unstructured.NestedSlice(co.Object, "status", list)
	for _, item := range items {
		if m, ok := item.(map[string]any); ok && m[key] == value {
			s, _ := m[field].(string)
			return s
		}
	}
	return ""
}

// applyOnceServed applies a file with kubectl once the API server takes
// each of its objects: until the operator has installed their CRDs and the
// webhooks that check them answer, each try is a server-side dry run from
// here, not a kubectl process.
func applyOnceServed(t *testing.T, env *testenv.Env, file string) {
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
