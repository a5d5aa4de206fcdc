// Package objects is what deciding about Kubernetes objects takes without a
// client: who an object is (Key, Ref, Describe), whether a rendered object
// must be written over the one in the cluster (NeedsWrite, with the hash
// Applied puts on it), which objects are created once and left alone
// (CreateOnly), what another installation created (Foreign), and the
// built-in kinds the operator's packages name. pkg/apply carries these
// decisions out.
package objects
