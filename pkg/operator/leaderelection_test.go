package operator

import (
	"strings"
	"testing"
	"time"
)

func TestLeaseTimings(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name                string
		lease, renew, retry time.Duration
		singleNode          bool
		want                LeaseTimings
		wantErr             string
	}{
		{name: "OpenShift's", want: LeaseTimings{137 * s, 107 * s, 26 * s}},
		{name: "one control-plane node", singleNode: true, want: LeaseTimings{270 * s, 240 * s, 60 * s}},
		{name: "flags override", lease: 15 * s, renew: 10 * s, retry: 2 * s, want: LeaseTimings{15 * s, 10 * s, 2 * s}},
		{name: "one flag overrides its own", retry: 10 * s, singleNode: true, want: LeaseTimings{270 * s, 240 * s, 10 * s}},
		{name: "a lease no longer than the renewal", lease: 60 * s, wantErr: "--leader-election-lease-duration 1m0s must be longer than --leader-election-renew-deadline 1m47s"},
		{name: "renewal too close to the retry", renew: 30 * s, wantErr: "--leader-election-renew-deadline 30s must be longer than 1.2 times --leader-election-retry-period 26s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = tc.lease, tc.renew, tc.retry
			got, err := leaseTimings(o, tc.singleNode)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.want:
				t.Errorf("timings %+v, want %+v", got, tc.want)
			}
		})
	}
}
