// Package bindata holds the operator's templated manifests, embedded in the
// binary so that it needs no files on disk: one folder per operand.
package bindata
