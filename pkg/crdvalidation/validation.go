package crdvalidation

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Validator checks objects of one version of a CRD. Building one compiles the
// CEL rules, which takes milliseconds: build it once.
type Validator struct {
	apiVersion, kind string
	structural       *structuralschema.Structural
	schema           validation.SchemaCreateValidator
	cel              *cel.Validator
}

// New returns the Validator of a version of crd, which must be one the API
// server accepts (ValidateDefinition): a rule that does not compile is
// reported by Validate. The check of the definition itself is apart, for
// tests: apiextensions-apiserver's CRD validation links the API server's
// webhook and egress clients, gRPC among them, which a binary that only
// validates objects does not need.
func New(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Validator, error) {
	v1schema, err := apihelpers.GetSchemaForVersion(crd, version)
	if err != nil || v1schema == nil {
		return nil, fmt.Errorf("CRD %s has no schema for version %q: %v", crd.Name, version, err)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v1schema, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, version, err)
	}
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	schema, _, err := validation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	return &Validator{
		apiVersion: crd.Spec.Group + "/" + version,
		kind:       crd.Spec.Names.Kind,
		structural: s,
		schema:     schema,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
	}, nil
}

// Validate checks obj, which it does not change, as the API server checks a
// create of it. It returns the paths of the fields the schema does not know,
// which the API server drops (or refuses, with strict field validation), and
// the errors it would give.
func (v *Validator) Validate(ctx context.Context, obj map[string]any) (unknown []string, errs field.ErrorList) {
	if errs := v.validateTypeMeta(obj); len(errs) > 0 {
		return nil, errs
	}
	u := runtime.DeepCopyJSON(obj)
	unknown = structuralpruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, v.structural)
	structuraldefaulting.Default(u, v.structural)

	errs = append(errs, validation.ValidateCustomResource(nil, u, v.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u, v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u)...)
	if blocked := blockingError(errs); blocked != nil {
		return unknown, append(errs, blocked)
	}
	celErrs, _ := v.cel.Validate(ctx, nil, v.structural, u, nil, celconfig.RuntimeCELCostBudget)
	return unknown, append(errs, celErrs...)
}

func (v *Validator) validateTypeMeta(obj map[string]any) field.ErrorList {
	var errs field.ErrorList
	if kind, _ := obj["kind"].(string); kind != v.kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), obj["kind"], "must be "+v.kind))
	}
	if apiVersion, _ := obj["apiVersion"].(string); apiVersion != v.apiVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), obj["apiVersion"], "must be "+v.apiVersion))
	}
	return errs
}

// blockingError is the API server's: when the schema found a value of the
// wrong type, a missing one or one not in its enum, the CEL rules are not
// evaluated, and this error says so.
func blockingError(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}
