// Package transient tells the errors of the Kubernetes API that pass (a 5xx,
// a 429, a conflict, a lost connection) from those that last (a refusal, a
// missing object, a bad request), and retries what passes: the steps of a
// start that would otherwise exit on one 500 (Retry), and the question
// whether the API server serves a kind (Served).
package transient
