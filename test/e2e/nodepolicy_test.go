package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
	"github.com/bmlb/cluster-network-operator/test/e2e/world"
)

// Installed from manifests/, the operator's service account may label a Node
// node.kubernetes.io/exclude-from-external-load-balancers and mark it, and
// take both off again, with server-side apply as the operator does; the
// shipped ValidatingAdmissionPolicy refuses it any other change of a Node
// (another label or annotation, its taints, its cordon), and RBAC its status
// and its deletion. An administrator's changes are not the policy's.
func TestOperatorChangesOnlyTheMaintenanceLabelOfNodes(t *testing.T) {
	world.SideBySide(t, world.Beside)
	env := testenv.New(t, testenv.Options{})
	kubectl(t, env, "apply", "-k", manifestsDir)
	admin := env.Client(t, nil)
	ctx := t.Context()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0", Labels: map[string]string{"topology.kubernetes.io/zone": "a"},
		Annotations: map[string]string{"example.com/owner": "team-a"}}}
	if err := admin.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	operator, err := client.New(impersonateOperator(env.Config), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	refused := refusedNodeChanges()
	// The policy takes effect a moment after it is created: until then a
	// server-side dry run, which admission checks as the write, is let through.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsForbidden(refused[0].do(ctx, client.NewDryRunClient(operator))), nil
	})
	if err != nil {
		t.Fatalf("the policy never refused the operator %s", refused[0].what)
	}
	for _, a := range refused {
		// Refused by the policy's own rule, or by RBAC; not by an expression
		// that failed.
		switch err := a.do(ctx, operator); {
		case apierrors.IsForbidden(err) && !strings.Contains(err.Error(), "resulted in error") &&
			(strings.Contains(err.Error(), "the operator may") || strings.Contains(err.Error(), "cannot")):
			t.Logf("as the operator, %s: refused: %v", a.what, err)
		default:
			t.Errorf("as the operator, %s: %v; want it refused", a.what, err)
		}
	}
	for _, labelled := range []bool{true, false} {
		if err := applyMaintenance(ctx, operator, labelled); err != nil {
			t.Fatalf("as the operator, applying the maintenance label (%t): %v", labelled, err)
		}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
			t.Fatal(err)
		}
		_, hasLabel := n.Labels[corev1.LabelNodeExcludeBalancers]
		_, hasMark := n.Annotations[decide.MarkAnnotation]
		if hasLabel != labelled || hasMark != labelled || n.Labels["topology.kubernetes.io/zone"] != "a" {
			t.Errorf("after the operator's apply (%t): labels %v, annotations %v", labelled, n.Labels, n.Annotations)
		}
	}
	if err := mergeNode("", `{"metadata":{"labels":{"example.com/touched":"true"}}}`).do(ctx, admin); err != nil {
		t.Errorf("an administrator labelling a Node: %v", err)
	}
}

// refusedNodeChanges are the changes of worker-0 the operator may not make.
func refusedNodeChanges() []attempt {
	return []attempt{
		mergeNode("labelling a Node otherwise", `{"metadata":{"labels":{"example.com/touched":"true"}}}`),
		mergeNode("changing a label of a Node", `{"metadata":{"labels":{"topology.kubernetes.io/zone":"b"}}}`),
		mergeNode("removing a label of a Node", `{"metadata":{"labels":{"topology.kubernetes.io/zone":null}}}`),
		mergeNode("annotating a Node otherwise", `{"metadata":{"annotations":{"example.com/owner":"operator"}}}`),
		mergeNode("cordoning a Node", `{"spec":{"unschedulable":true}}`),
		mergeNode("tainting a Node", `{"spec":{"taints":[{"key":"example.com/mine","effect":"NoSchedule"}]}}`),
		{what: "writing a Node's status", do: func(ctx context.Context, c client.Client) error {
			patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"capacity":{"pods":"1"}}}`))
			return c.Status().Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0"}}, patch)
		}},
		{what: "deleting a Node", do: func(ctx context.Context, c client.Client) error {
			return c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0"}})
		}},
	}
}

// mergeNode is a merge patch of worker-0.
func mergeNode(what, patch string) attempt {
	return attempt{what: what, do: func(ctx context.Context, c client.Client) error {
		return c.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0"}}, client.RawPatch(types.MergePatchType, []byte(patch)))
	}}
}

// applyMaintenance applies, as the operator does, the maintenance label and
// mark on worker-0, or none.
func applyMaintenance(ctx context.Context, c client.Client, labelled bool) error {
	n := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "worker-0"}}
	if labelled {
		n["metadata"] = map[string]any{"name": "worker-0",
			"labels":      map[string]any{corev1.LabelNodeExcludeBalancers: ""},
			"annotations": map[string]any{decide.MarkAnnotation: "test"}}
	}
	u := &unstructured.Unstructured{Object: n}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(maintenance.FieldManager))
}
