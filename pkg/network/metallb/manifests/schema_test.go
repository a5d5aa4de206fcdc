package manifests

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

// The MetalLB CRD is one the API server accepts, its rules' estimated CEL
// cost included: checked here, offline, with the API server's own CRD
// validation, which the operator's binary does not link (see
// crdvalidation.New).
func TestTuningCRDIsOneTheAPIServerAccepts(t *testing.T) {
	crd, err := readMetalLBCRD()
	if err != nil {
		t.Fatal(err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		t.Fatal(err)
	}
	if errs := validation.ValidateCustomResourceDefinition(t.Context(), internal); len(errs) > 0 {
		t.Errorf("the API server would refuse the MetalLB CRD: %v", errs.ToAggregate())
	}
}
