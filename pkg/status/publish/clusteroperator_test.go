package publish_test

import (
	"os"
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/status"
	"github.com/bmlb/cluster-network-operator/pkg/status/publish"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

func TestClusterOperatorWrites(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := env.Client(t, scheme)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	w := &publish.ClusterOperator{Client: c, Name: "metallb", Clock: clock, OperatorNamespace: "cluster-network-operator"}
	operand := configv1.ObjectReference{Resource: "namespaces", Name: "metallb-system"}
	report := status.OperandStatus{Conditions: status.NewConditions(), Versions: []configv1.OperandVersion{{Name: "operator", Version: "A"}},
		RelatedObjects: []configv1.ObjectReference{operand}}

	assertNothingWritten(t, w, c, report)
	createClusterOperator(t, c)
	write(t, w, report)
	first := get(t, c)
	if first.Status.Versions[0].Version != "A" || len(first.Status.Conditions) != 4 {
		t.Fatalf("created ClusterOperator has status %+v", first.Status)
	}
	// must-gather collects the operator's namespace (its logs) with the operand's.
	own := configv1.ObjectReference{Resource: "namespaces", Name: "cluster-network-operator"}
	if got := first.Status.RelatedObjects; !slices.Equal(got, []configv1.ObjectReference{own, operand}) {
		t.Errorf("relatedObjects %+v, want the operator's namespace, then the report's", got)
	}

	// The same report writes nothing.
	write(t, w, report)
	if again := get(t, c); again.ResourceVersion != first.ResourceVersion {
		t.Error("an unchanged report was written again")
	}

	// A new message keeps the transition time; a new status moves it to the clock's time.
	clock.SetTime(clock.Now().Add(time.Minute))
	report.Conditions.Set(status.Progressing, metav1.ConditionFalse, status.ReasonAsExpected, "a new message")
	report.Conditions.Set(status.Degraded, metav1.ConditionTrue, "RolloutHung", "stuck")
	write(t, w, report)
	changed := get(t, c)
	for _, cond := range changed.Status.Conditions {
		before := v1helpers.FindStatusCondition(first.Status.Conditions, cond.Type)
		moved := !cond.LastTransitionTime.Equal(&before.LastTransitionTime)
		if want := cond.Type == status.Degraded; moved != want || (moved && !cond.LastTransitionTime.Time.Equal(clock.Now())) {
			t.Errorf("%s: transition time %s (was %s), want it moved %v, to %s", cond.Type, cond.LastTransitionTime, before.LastTransitionTime, want, clock.Now())
		}
	}

	// Deleted, and created again by the cluster-version operator, it is written.
	if err := c.Delete(ctx, changed); err != nil {
		t.Fatal(err)
	}
	createClusterOperator(t, c)
	write(t, w, report)
	if recreated := get(t, c); recreated.UID == changed.UID || len(recreated.Status.Conditions) != 4 {
		t.Errorf("the ClusterOperator created again has status %+v", recreated.Status)
	}
}

// createClusterOperator creates the ClusterOperator, status empty, as the
// cluster-version operator does.
func createClusterOperator(t *testing.T, c client.Client) {
	t.Helper()
	if err := c.Create(t.Context(), &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "metallb"}}); err != nil {
		t.Fatal(err)
	}
}

// assertNothingWritten checks that, without the ClusterOperator API, nothing
// is read or written and nothing fails, and with it, that a ClusterOperator
// that does not exist is not created: the cluster-version operator does that.
// It leaves the API installed.
func assertNothingWritten(t *testing.T, w *publish.ClusterOperator, c client.Client, report status.OperandStatus) {
	t.Helper()
	ctx := t.Context()
	if co, err := w.Get(ctx); co != nil || err != nil {
		t.Fatalf("without the ClusterOperator API: read %v, error %v", co, err)
	}
	if ok, err := w.Write(ctx, nil, report); ok || err != nil {
		t.Fatalf("without the ClusterOperator API: wrote %v, error %v", ok, err)
	}
	installCRD(t, c, "testdata/clusteroperators-crd.yaml")
	if ok, err := w.Write(ctx, nil, report); ok || err != nil {
		t.Fatalf("without a ClusterOperator: wrote %v, error %v", ok, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "metallb"}, &configv1.ClusterOperator{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a ClusterOperator was created: %v", err)
	}
}

// write writes the report over the ClusterOperator as Get reads it.
func write(t *testing.T, w *publish.ClusterOperator, r status.OperandStatus) {
	t.Helper()
	co, err := w.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	changes := w.Changes(co, r)
	if ok, err := w.Write(t.Context(), co, r); !ok || err != nil {
		t.Fatalf("write: wrote %v, error %v", ok, err)
	}
	// Changes told whether Write was to write, and now has nothing to write.
	after := get(t, w.Client)
	if wrote := after.ResourceVersion != co.ResourceVersion; changes != wrote || w.Changes(after, r) {
		t.Errorf("Changes said %v before a write that wrote %v, and %v after it", changes, wrote, w.Changes(after, r))
	}
}

func installCRD(t *testing.T, c client.Client, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := (&apply.Applier{Client: c, FieldOwner: "test"}).Apply(t.Context(), []*unstructured.Unstructured{crd}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, c client.Client) *configv1.ClusterOperator {
	t.Helper()
	co := &configv1.ClusterOperator{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "metallb"}, co); err != nil {
		t.Fatal(err)
	}
	return co
}
