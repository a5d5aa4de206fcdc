package operator

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The metrics are plain HTTP where --metrics-secure=false says so, and, where
// it is not given, on a loopback address; plain HTTP is accepted on a loopback
// address alone: with no authentication, no other host may reach them.
func TestMetricsSecure(t *testing.T) {
	for _, tc := range []struct {
		flag    []string // --metrics-secure as given, if at all
		address string
		https   bool
		refused bool
	}{
		{nil, ":8443", true, false},
		{nil, "0.0.0.0:8443", true, false},
		{nil, "192.0.2.10:8443", true, false},
		{nil, "localhost:8443", true, false},
		{nil, "127.0.0.1:8443", false, false},
		{nil, "[::1]:8443", false, false},
		{[]string{"--metrics-secure"}, "127.0.0.1:8443", true, false},
		{[]string{"--metrics-secure=true"}, "127.0.0.1:8443", true, false},
		{[]string{"--metrics-secure=true"}, ":8443", true, false},
		{[]string{"--metrics-secure=false"}, "127.0.0.1:8443", false, false},
		{[]string{"--metrics-secure=false"}, "[::1]:8443", false, false},
		{[]string{"--metrics-secure=false"}, "0", false, false},
		{[]string{"--metrics-secure=false"}, ":8443", false, true},
		{[]string{"--metrics-secure=false"}, "0.0.0.0:8443", false, true},
		{[]string{"--metrics-secure=false"}, "192.0.2.10:8443", false, true},
		{[]string{"--metrics-secure=false"}, "localhost:8443", false, true},
	} {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("start", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(append(tc.flag, "--metrics-bind-address="+tc.address)); err != nil {
			t.Fatal(err)
		}
		name := strings.Join(append(tc.flag, "--metrics-bind-address="+tc.address), " ")
		if https := o.metricsOverHTTPS(); https != tc.https {
			t.Errorf("%s: HTTPS %t, want %t", name, https, tc.https)
		}
		err := o.Validate()
		if refused := err != nil; refused != tc.refused {
			t.Errorf("%s: error %v, want refused %t", name, err, tc.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "--metrics-bind-address") {
			t.Errorf("the error does not name --metrics-bind-address: %v", err)
		}
	}
}
