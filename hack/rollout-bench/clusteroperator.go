package main

import (
	"context"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
)

var clusterOperators = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusteroperators"}

// installClusterOperator installs the ClusterOperator CRD of a file, waits
// until it is served and creates ClusterOperator metallb, which the operator
// reports to.
func installClusterOperator(ctx context.Context, b *binarybench.Bench, crdFile string) error {
	data, err := os.ReadFile(crdFile)
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		return fmt.Errorf("%s: %v", crdFile, err)
	}
	if _, err := b.Dynamic.Resource(binarybench.CRDs).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return err
	}
	established := func(o *unstructured.Unstructured) bool { return binarybench.ConditionTrue(o, "Established") }
	if err := b.WaitFor(ctx, binarybench.CRDs, "", crd.GetName(), established); err != nil {
		return err
	}
	co := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       "ClusterOperator",
		"metadata":   map[string]any{"name": "metallb"},
		"spec":       map[string]any{},
	}}
	_, err = b.Dynamic.Resource(clusterOperators).Create(ctx, co, metav1.CreateOptions{})
	return err
}
