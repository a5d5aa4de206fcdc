package operator

import (
	"strings"
	"testing"
)

// Plain-HTTP metrics are accepted on a loopback address alone: with no
// authentication, no other host may reach them.
func TestValidateMetricsSecure(t *testing.T) {
	for _, tc := range []struct {
		secure  bool
		address string
		refused bool
	}{
		{true, ":8443", false},
		{false, "127.0.0.1:8443", false},
		{false, "[::1]:8443", false},
		{false, "0", false},
		{false, ":8443", true},
		{false, "0.0.0.0:8443", true},
		{false, "192.0.2.10:8443", true},
		{false, "localhost:8443", true},
	} {
		o := DefaultOptions()
		o.MetricsSecure, o.MetricsAddress = tc.secure, tc.address
		err := o.Validate()
		if refused := err != nil; refused != tc.refused {
			t.Errorf("--metrics-secure=%t --metrics-bind-address=%s: error %v, want refused %t", tc.secure, tc.address, err, tc.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "--metrics-bind-address") {
			t.Errorf("the error does not name --metrics-bind-address: %v", err)
		}
	}
}
