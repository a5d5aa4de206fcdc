// Package transient tells the errors of the Kubernetes API that pass (a 5xx,
// a 429, a conflict, a lost connection) from those that last (a refusal, a
// missing object, a bad request), and retries what passes: the steps of a
// start that would otherwise exit on one 500 (Retry), the question whether
// the API server serves a kind (Served), the writes of Events, which
// client-go's recorder would drop (RetryEventWrites), and the reconciles of
// the operator's controllers, at most MaxFailureBackoff apart (RateLimiter);
// and it waits in the dial while the API server refuses connections
// (PatientDial), rather than failing requests whose retries back off.
package transient
