package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/explain"
)

// The text is coloured when asked (green announced, red the reason), never
// off a terminal unless asked; JSON and YAML are the explanation's fields.
func TestPrintedExplanation(t *testing.T) {
	pending := explain.Explanation{Service: "demo/web", State: explain.Pending, Reason: "PoolExhausted", Why: "Every pool is exhausted.", Fix: "Add addresses."}
	announced := explain.Explanation{Service: "demo/web", State: explain.Announced, Addresses: []string{"192.0.2.10"},
		AnnouncedBy: []explain.Announcer{{Node: "node-a", Protocol: explain.ProtocolBGP, Peers: []string{"router"}}}}
	for _, tc := range []struct {
		name, output, color string
		e                   explain.Explanation
		want                []string
	}{
		{"coloured", "text", "always", announced, []string{"\x1b[32mAnnounced\x1b[0m", "BGP from node-a to BGPPeer router"}},
		{"a reason in red", "text", "always", pending, []string{"\x1b[31mPending\x1b[0m (PoolExhausted)", "Why:", "Every pool is exhausted."}},
		{"not a terminal", "text", "auto", pending, []string{"State:    Pending (PoolExhausted)"}},
		{"YAML", "yaml", "always", pending, []string{"reason: PoolExhausted\n", "state: Pending\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &options{output: tc.output, color: tc.color, out: &out}
			if err := o.print(tc.e, func(p *printer) { p.explanation(tc.e) }); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the output does not say %q:\n%s", w, out.String())
				}
			}
			if tc.color != "always" && strings.Contains(out.String(), "\x1b[") {
				t.Errorf("coloured off a terminal:\n%q", out.String())
			}
		})
	}
	var out bytes.Buffer
	o := &options{output: "json", out: &out}
	if err := o.print(pending, nil); err != nil {
		t.Fatal(err)
	}
	var back explain.Explanation
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.Reason != "PoolExhausted" || back.Why != pending.Why {
		t.Errorf("JSON %s read back as %+v (%v)", out.String(), back, err)
	}
}
