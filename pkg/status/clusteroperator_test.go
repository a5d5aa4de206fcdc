package status

import (
	"os"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

func TestClusterOperatorWrites(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = configv1.Install(scheme)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	w := &ClusterOperator{Client: c, Name: "metallb", Clock: clock.RealClock{}}
	report := Report{Conditions: NewConditions(), Versions: []configv1.OperandVersion{{Name: "operator", Version: "A"}}}

	// Without the API, nothing is written and nothing fails.
	if ok, err := w.Write(ctx, report); ok || err != nil {
		t.Fatalf("without the ClusterOperator API: wrote %v, error %v", ok, err)
	}

	installCRD(t, c, "testdata/clusteroperators-crd.yaml")
	if ok, err := w.Write(ctx, report); !ok || err != nil {
		t.Fatalf("first write: wrote %v, error %v", ok, err)
	}
	first := get(t, c)
	if first.Status.Versions[0].Version != "A" || len(first.Status.Conditions) != 4 {
		t.Fatalf("created ClusterOperator has status %+v", first.Status)
	}

	// The same report writes nothing.
	if _, err := w.Write(ctx, report); err != nil {
		t.Fatal(err)
	}
	if again := get(t, c); again.ResourceVersion != first.ResourceVersion {
		t.Error("an unchanged report was written again")
	}

	// A new message keeps the transition time; a new status moves it.
	time.Sleep(1100 * time.Millisecond) // transition times have a one-second resolution
	report.Conditions.Set(Progressing, metav1.ConditionFalse, "AsExpected", "a new message")
	report.Conditions.Set(Degraded, metav1.ConditionTrue, "RolloutHung", "stuck")
	if _, err := w.Write(ctx, report); err != nil {
		t.Fatal(err)
	}
	changed := get(t, c)
	for _, cond := range changed.Status.Conditions {
		before := findCondition(first, cond.Type)
		moved := !cond.LastTransitionTime.Equal(&before.LastTransitionTime)
		if want := cond.Type == Degraded; moved != want {
			t.Errorf("%s: transition time moved %v, want %v", cond.Type, moved, want)
		}
	}

	// Deleted, it is created again.
	if err := c.Delete(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if ok, err := w.Write(ctx, report); !ok || err != nil {
		t.Fatalf("write after deletion: wrote %v, error %v", ok, err)
	}
	if recreated := get(t, c); recreated.UID == changed.UID {
		t.Error("the ClusterOperator was not created again")
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

func findCondition(co *configv1.ClusterOperator, t configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
	for _, c := range co.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return configv1.ClusterOperatorStatusCondition{}
}
