package manifests

import (
	"context"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/bindata"
	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/crdvalidation"
)

// metallbCRDFile is the MetalLB CRD's file in bindata/metallb, generated from
// pkg/apis by `make generate`.
const metallbCRDFile = "metallb/011-crd-metallb.io_metallbs.yaml"

// metallbSchema is the MetalLB CRD's validator: the one definition of every
// rule a schema can say about the object.
var metallbSchema = sync.OnceValues(func() (*crdvalidation.Validator, error) {
	crd, err := readMetalLBCRD()
	if err != nil {
		return nil, err
	}
	return crdvalidation.New(crd, v1beta1.GroupVersion.Version)
})

func readMetalLBCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := bindata.FS.ReadFile(metallbCRDFile)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return crd, yaml.UnmarshalStrict(data, crd)
}

// checkSchema checks a MetalLB object, as JSON data, against the CRD's schema
// and rules, as the API server does when it is written.
func checkSchema(obj map[string]any) (unknown []string, errs field.ErrorList) {
	v, err := metallbSchema()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, err)}
	}
	return v.Validate(context.Background(), obj)
}

// checkTyped checks a typed MetalLB object, as checkSchema does.
func checkTyped(obj *v1beta1.MetalLB) field.ErrorList {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	u["apiVersion"], u["kind"] = v1beta1.GroupVersion.String(), "MetalLB"
	_, errs := checkSchema(u)
	return errs
}
