// Package crdvalidation checks a custom resource against its
// CustomResourceDefinition the way the API server checks one that is created:
// unknown fields, the OpenAPI schema, list types and the CEL rules
// (x-kubernetes-validations), with apiextensions-apiserver's own code. A tool
// with no API server at hand, or an object the API server never checked (one
// written before its CRD had a rule), so gets the errors the API server gives,
// with the same field paths.
package crdvalidation
