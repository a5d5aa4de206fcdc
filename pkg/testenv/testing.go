package testenv

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// New starts a control plane for one test and stops it when the test ends,
// failed or not, or when the test binary is interrupted. With -short the test
// is skipped. When the test failed, the warnings and errors at the end of
// every component's log are written to the test's output.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a control plane: not run with -short")
	}
	StopOnInterrupt()
	start := time.Now()
	e, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Logf("control plane up in %s: %s", time.Since(start).Round(time.Millisecond), e.describe())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs:\n%s", e.LogProblems(20))
		}
		e.Stop()
	})
	return e
}

// Client returns an administrator's client of the control plane, with the
// scheme given: the operator's (operator.NewScheme), or client-go's when nil.
func (e *Env) Client(t testing.TB, scheme *runtime.Scheme) client.Client {
	t.Helper()
	c, err := client.New(e.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
