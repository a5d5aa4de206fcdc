package manifests

import (
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// controller-runtime's client here logs nothing worth reading; without a root
// logger it prints a stack saying none was set.
func init() { crlog.SetLogger(logr.Discard()) }

// Every object of every scenario is accepted by a real kube-apiserver: schema,
// defaulting and admission, through a server-side dry-run apply.
func TestRenderedObjectsPassServerSideDryRun(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	c := env.Client(t, nil)
	// Custom resources need their CRDs, and namespaced objects their namespace,
	// for real; the CRDs must become Established.
	real := &apply.Applier{Client: c, FieldOwner: "render-test"}
	var prerequisites []*unstructured.Unstructured
	for _, o := range scenarios[0].render(t) {
		if gvk := o.GroupVersionKind(); gvk == objects.CustomResourceDefinition || gvk == objects.Namespace {
			prerequisites = append(prerequisites, o)
		}
	}
	if len(prerequisites) != 11 {
		t.Fatalf("want MetalLB's nine CRDs, ours and the namespace, got %d objects", len(prerequisites))
	}
	// The monitoring kinds' CRDs are prometheus-operator's.
	prerequisites = append(prerequisites, testenv.MonitoringCRDs(t)...)
	if _, err := real.Apply(t.Context(), prerequisites); err != nil {
		t.Fatal(err)
	}
	dryRun := &apply.Applier{Client: c, FieldOwner: "render-test", DryRun: true}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for _, o := range sc.render(t) {
				if _, err := dryRun.Apply(t.Context(), []*unstructured.Unstructured{o}); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
