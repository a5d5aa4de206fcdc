package testenv

import "testing"

// A failed test shows the components' warnings and errors, not their chatter.
func TestProblemsKeepWarningsAndErrors(t *testing.T) {
	log := `I1201 03:00:17.170491   28982 server.go:151] Version: v1.37.2
W1201 03:00:17.472600   28982 genericapiserver.go:798] Skipping API apiextensions.k8s.io/v1beta1 because it has no resources.
E1201 03:00:23.064187   29010 run.go:72] "command failed" err="finished without leader elect"
{"level":"info","ts":"2026-12-01T03:00:16.52Z","msg":"serving client traffic"}
{"level":"warn","ts":"2026-12-01T03:00:16.52Z","msg":"apply request took too long"}
{"time":"2026-12-01T03:00:21.58Z","level":"INFO","msg":"Watch nodes"}
{"time":"2026-12-01T03:00:21.58Z","level":"ERROR","msg":"Failed to update node"}
Info message that mentions E1201 in the middle`
	want := `W1201 03:00:17.472600   28982 genericapiserver.go:798] Skipping API apiextensions.k8s.io/v1beta1 because it has no resources.
E1201 03:00:23.064187   29010 run.go:72] "command failed" err="finished without leader elect"
{"level":"warn","ts":"2026-12-01T03:00:16.52Z","msg":"apply request took too long"}
{"time":"2026-12-01T03:00:21.58Z","level":"ERROR","msg":"Failed to update node"}`
	if got := problems(log); got != want {
		t.Errorf("problems kept:\n%s\nwant:\n%s", got, want)
	}
	if got := problems("I1201 03:00:17.170491   28982 server.go:151] Version: v1.37.2"); got != "(none)" {
		t.Errorf("an all-info log gave %q, want (none)", got)
	}
}
