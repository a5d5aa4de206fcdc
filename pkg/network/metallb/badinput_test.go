package metallb

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/plan"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// Who refuses a bad input.
const (
	// bySchema: the CRD's schema and rules, in the API server when the object
	// is written and offline (render -f, or an object the API server never
	// checked), with the same field paths.
	bySchema = "schema"
	// byModule: the module's Go checks, what no schema can say within the
	// API server's CEL cost budget (see validation.go); offline too.
	byModule = "module"
	// byReference: a reference to an object that does not exist, which only
	// the module on a cluster can see.
	byReference = "reference"
)

// notChecked is the field path of the API server's error that says its CEL
// rules were not evaluated, because the schema found an error of type first.
const notChecked = "<nil>"

// badInputs are specs that must not change what runs. Each names the field
// paths of its refusal and a part of its message.
var badInputs = []struct {
	name, spec string
	layer      string
	fields     []string
	says       string
}{
	{"unknown log level", `logLevel: loud`, bySchema, []string{"spec.logLevel", notChecked}, `Unsupported value: "loud": supported values: "all", "debug", "info", "warn", "error", "none"`},
	{"log level of the wrong type", `logLevel: 3`, bySchema, []string{"spec.logLevel", notChecked}, "must be of type string"},
	{"unknown BGP backend", `bgpBackend: bird`, bySchema, []string{"spec.bgpBackend", notChecked}, `Unsupported value: "bird"`},
	{"FRR backend, deprecated upstream", `bgpBackend: frr`, bySchema, []string{"spec.bgpBackend"}, "deprecated by MetalLB and not offered: use frr-k8s"},
	{"external frr-k8s backend", `bgpBackend: frr-k8s-external`, bySchema, []string{"spec.bgpBackend"}, "not offered: use frr-k8s, which this operator deploys"},
	{"alwaysBlock not a CIDR", `frrk8sConfig: {alwaysBlock: [192.0.2.0/24, 192.0.2.1]}`, bySchema, []string{"spec.frrk8sConfig.alwaysBlock"}, "must be a CIDR"},
	{"unknown failure detection profile", `failureDetection: {profile: Instant}`, bySchema, []string{"spec.failureDetection.profile", notChecked}, `Unsupported value: "Instant": supported values: "Default", "Fast"`},
	{"load balancer class with spaces", `loadBalancerClass: "not a class"`, bySchema, []string{"spec.loadBalancerClass"}, "must be a label-style name"},
	{"maxUnavailable 0", `speakerConfig: {maxUnavailable: 0}`, bySchema, []string{"spec.speakerConfig.maxUnavailable"}, "must be a number of at least 1, or a percentage from 1% to 100%"},
	{"maxUnavailable negative", `speakerConfig: {maxUnavailable: -2}`, bySchema, []string{"spec.speakerConfig.maxUnavailable"}, "at least 1"},
	{"maxUnavailable 0%", `speakerConfig: {maxUnavailable: "0%"}`, bySchema, []string{"spec.speakerConfig.maxUnavailable"}, "from 1% to 100%"},
	{"maxUnavailable 150%", `speakerConfig: {maxUnavailable: "150%"}`, bySchema, []string{"spec.speakerConfig.maxUnavailable"}, `"150%"`},
	{"maxUnavailable in words", `speakerConfig: {maxUnavailable: "ten"}`, bySchema, []string{"spec.speakerConfig.maxUnavailable"}, `"ten"`},
	{"tolerationSeconds with NoSchedule", `speakerTolerations: [{key: a, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}]`, bySchema,
		[]string{"spec.speakerTolerations[0].tolerationSeconds"}, "may only be set when effect is NoExecute"},
	{"tolerationSeconds without effect", `controllerTolerations: [{key: a, operator: Exists, tolerationSeconds: 5}]`, bySchema,
		[]string{"spec.controllerTolerations[0].tolerationSeconds"}, "may only be set when effect is NoExecute"},
	{"unknown toleration operator", `speakerTolerations: [{key: a, operator: Maybe}]`, bySchema, []string{"spec.speakerTolerations[0].operator", notChecked}, `Unsupported value: "Maybe"`},
	{"unknown toleration effect", `controllerTolerations: [{key: a, operator: Exists, effect: Sometimes}]`, bySchema,
		[]string{"spec.controllerTolerations[0].effect", notChecked}, `Unsupported value: "Sometimes"`},
	{"toleration value with Exists", `speakerTolerations: [{key: a, operator: Exists, value: b}]`, bySchema, []string{"spec.speakerTolerations[0].value"}, "must be empty when operator is Exists"},
	{"33 tolerations", `speakerTolerations: [` + strings.Repeat(`{operator: Exists},`, 32) + `{operator: Exists}]`, bySchema, []string{"spec.speakerTolerations", notChecked}, "must have at most 32 items"},
	{"toleration key with a space", `speakerTolerations: [{key: "bad key", operator: Exists}]`, bySchema, []string{"spec.speakerTolerations[0].key"}, "must be a label key"},
	{"toleration without key and with Equal", `speakerTolerations: [{operator: Equal, value: x}]`, bySchema, []string{"spec.speakerTolerations[0].operator"}, "must be Exists when key is empty"},
	{"toleration value not a label value", `controllerTolerations: [{key: a, operator: Equal, value: "not a value!"}]`, bySchema, []string{"spec.controllerTolerations[0].value"}, "should match"},
	{"priority class name with capitals", `controllerConfig: {priorityClassName: "Urgent!"}`, bySchema, []string{"spec.controllerConfig.priorityClassName"}, `"Urgent!"`},
	{"runtime class name with capitals", `speakerConfig: {runtimeClassName: "gVisor"}`, bySchema, []string{"spec.speakerConfig.runtimeClassName"}, `"gVisor"`},
	{"quantity that is not one", `controllerConfig: {resources: {requests: {cpu: lots}}}`, bySchema, []string{"spec.controllerConfig.resources.requests.cpu"}, `"lots"`},
	{"node selector value not a string", `nodeSelector: {a: [1]}`, bySchema, []string{"spec.nodeSelector.a", notChecked}, "must be of type string"},
	{"node selector key with a space", `nodeSelector: {"bad key": "x"}`, bySchema, []string{"spec.nodeSelector"}, "keys must be label keys"},
	{"node selector value with a space", `nodeSelector: {"example.com/lb": "not a value"}`, bySchema, []string{"spec.nodeSelector.example.com/lb"}, `"not a value"`},
	{"controller node selector key with two slashes", `controllerNodeSelector: {"a/b/c": "x"}`, bySchema, []string{"spec.controllerNodeSelector"}, "keys must be label keys"},
	{"annotation key with a space", `speakerConfig: {annotations: {"bad key": x}}`, bySchema, []string{"spec.speakerConfig.annotations"}, "keys must be annotation keys"},
	{"node affinity weight 0", `speakerConfig: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {}}]}}}`, bySchema,
		[]string{"spec.speakerConfig.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"}, "weights must be from 1 to 100"},
	{"pod anti-affinity weight 101", `controllerConfig: {affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, podAffinityTerm: {topologyKey: kubernetes.io/hostname}}]}}}`, bySchema,
		[]string{"spec.controllerConfig.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"}, "weights must be from 1 to 100"},
	{"node selector operator Near", `speakerConfig: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near}]}]}}}}`, byModule,
		[]string{"spec.speakerConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"}, `Unsupported value: "Near"`},
	{"In without values", `speakerConfig: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}}`, byModule,
		[]string{"spec.speakerConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values"}, "must list values"},
	{"Gt with a word", `controllerConfig: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Gt, values: [many]}]}]}}}}`, byModule,
		[]string{"spec.controllerConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]"}, "must be an integer"},
	{"requests above limits", `controllerConfig: {resources: {requests: {memory: 1Gi}, limits: {memory: 100Mi}}}`, byModule,
		[]string{"spec.controllerConfig.resources.requests[memory]"}, "must not exceed the limit 100Mi"},
	{"negative quantity", `speakerConfig: {resources: {requests: {cpu: "-1"}}}`, byModule, []string{"spec.speakerConfig.resources.requests[cpu]"}, "must not be negative"},
	{"unknown TLS profile type", `tlsSecurityProfile: {type: Strict}`, bySchema, []string{"spec.tlsSecurityProfile.type", notChecked}, `Unsupported value: "Strict"`},
	{"Custom TLS profile without custom", `tlsSecurityProfile: {type: Custom}`, byModule, []string{"spec.tlsSecurityProfile.custom"}, "a Custom profile lists its ciphers and minTLSVersion under custom"},
	{"Custom TLS profile of ciphers Go lacks", `tlsSecurityProfile: {type: Custom, custom: {minTLSVersion: VersionTLS12, ciphers: [DHE-RSA-AES128-GCM-SHA256]}}`, byModule,
		[]string{"spec.tlsSecurityProfile.custom.ciphers"}, "none of these is a cipher Go's TLS allows below TLS 1.3"},
	{"two errors at once, the second not checked", `logLevel: loud, speakerConfig: {maxUnavailable: 0}`, bySchema, []string{"spec.logLevel", notChecked}, "some validation rules were not checked"},
	{"priority class that does not exist", `speakerConfig: {priorityClassName: does-not-exist}`, byReference, []string{"spec.speakerConfig.priorityClassName"}, `Not found: "does-not-exist"`},
	{"runtime class that does not exist", `controllerConfig: {runtimeClassName: does-not-exist}`, byReference, []string{"spec.controllerConfig.runtimeClassName"}, `Not found: "does-not-exist"`},
}

// Offline, as `render -f` reads a file, every bad input is refused with its
// field paths and message but those that reference other objects, which no
// file can show.
func TestBadInputOffline(t *testing.T) {
	t.Parallel()
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			err := offline(tc.spec)
			if tc.layer == byReference {
				if err != nil {
					t.Fatalf("a reference, which offline cannot check, was refused: %v", err)
				}
				return
			}
			if got := fieldPaths(t, err); !slices.Equal(got, sortedSet(tc.fields)) {
				t.Fatalf("refused with fields %q, want %q; error: %v", got, sortedSet(tc.fields), err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error does not say %q: %v", tc.says, err)
			}
		})
	}
}

// offline reads a spec as `render -f` does.
func offline(spec string) error {
	obj, err := manifests.DecodeMetalLB([]byte("apiVersion: metallb.io/v1beta1\nkind: MetalLB\nmetadata: {name: metallb, namespace: metallb-system}\nspec: {" + spec + "}\n"))
	if err != nil {
		return err
	}
	_, err = manifests.SettingsFor(manifests.Environment{Namespace: manifests.DefaultNamespace, Webhooks: true}, obj)
	return err
}

// fieldPaths returns the field paths an error names, sorted, once each: those
// of an API server's refusal, or of a list of field errors.
func fieldPaths(t *testing.T, err error) []string {
	t.Helper()
	var fields []string
	var status apierrors.APIStatus
	var agg utilerrors.Aggregate
	switch {
	case err == nil:
	case errors.As(err, &status) && status.Status().Details != nil:
		for _, c := range status.Status().Details.Causes {
			fields = append(fields, c.Field)
		}
	case errors.As(err, &agg):
		for _, e := range agg.Errors() {
			var fe *field.Error
			if !errors.As(e, &fe) {
				t.Fatalf("error is not a field error: %v", e)
			}
			fields = append(fields, fe.Field)
		}
	default:
		t.Fatalf("error names no field: %v", err)
	}
	return sortedSet(fields)
}

func sortedSet(items []string) []string { return sets.List(sets.New(items...)) }

// Every bad input is refused, by the API server or by the module, with the
// field paths and message of the offline path; in every case the workloads in
// the cluster stay exactly as they were, byte for byte.
func TestBadInputLeavesWorkloadsUnchanged(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())

	// The starting point is an object written for the upstream metallb-operator,
	// created as it is: the API server and the operator accept it, and it places
	// and configures MetalLB as it asks.
	m.create(t, filepath.Join("manifests", "testdata", "scenarios", "upstream-operator-object.yaml"))
	m.waitDegraded(t, clusterObject, isFalse)
	before := m.workloads(t)
	for _, want := range []string{`"--log-level=debug"`, `"node-role.kubernetes.io/worker":""`, `"key":"example.com/dedicated"`,
		`"node-role.kubernetes.io/control-plane":""`, `"example.com/team":"network"`} {
		if !strings.Contains(before, want) {
			t.Errorf("the upstream operator's object was not applied as it asks: no %s in\n%s", want, before)
		}
	}
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			m.assertRefused(t, tc.spec, tc.layer, sortedSet(tc.fields), tc.says)
			if after := m.workloads(t); after != before {
				t.Errorf("the workloads changed:\nbefore: %s\nafter:  %s", before, after)
			}
		})
	}

	// A valid spec again is applied: the checks above could have seen a change.
	if err := m.setSpec(t, `logLevel: warn`); err != nil {
		t.Fatal(err)
	}
	m.waitDegraded(t, clusterObject, isFalse)
	if after := m.workloads(t); after == before || !strings.Contains(after, "--log-level=warn") {
		t.Errorf("a valid spec after bad ones was not applied:\n%s", after)
	}
}

// assertRefused writes spec and checks who refuses it and with what: the API
// server (its error's causes) for the schema's rules, the module (its
// Degraded condition) for the others, each with the offline path's fields.
func (m *moduleEnv) assertRefused(t *testing.T, spec, layer string, fields []string, says string) {
	t.Helper()
	if layer != byReference {
		if got := fieldPaths(t, offline(spec)); !slices.Equal(got, fields) {
			t.Errorf("offline, refused with fields %q, want %q", got, fields)
		}
	}
	err := m.setSpec(t, spec)
	switch {
	case layer == bySchema && err == nil:
		t.Fatalf("the API server accepted it; the CRD should refuse it naming %q", fields)
	case layer == bySchema:
		if got := fieldPaths(t, err); !slices.Equal(got, fields) || !strings.Contains(err.Error(), says) {
			t.Errorf("the API server refused it with fields %q, want %q saying %q: %v", got, fields, says, err)
		}
	case err != nil:
		t.Fatalf("the API server refused what the module should: %v", err)
	default:
		c := m.waitDegraded(t, clusterObject, isTrue)
		if c.Reason != plan.ReasonInvalidConfiguration || !strings.Contains(c.Message, says) {
			t.Errorf("Degraded %s %q does not say %q", c.Reason, c.Message, says)
		}
		for _, f := range fields {
			if !strings.Contains(c.Message, f+":") {
				t.Errorf("Degraded %q does not name %s", c.Message, f)
			}
		}
	}
}

// A spec the CRD takes and whose rendering the API server refuses (speaker
// pod annotations of 256 KiB, the most the CRD allows, which with the
// DaemonSet's own pass the API server's limit) changes nothing that runs:
// not the speakers, and not the controller, whose new rendering (its log
// level) the API server would take. Degraded names the DaemonSet, the field
// and what the API server said; status.appliedSpec stays. A valid change
// after it is applied in one pass: one new generation of each workload.
func TestRefusedRenderingChangesNothing(t *testing.T) {
	t.Parallel()
	m := startModule(t, testenv.Options{}, testOptions())
	m.create(t, filepath.Join("manifests", "testdata", "scenarios", "upstream-operator-object.yaml"))
	m.waitDegraded(t, clusterObject, isFalse)
	before, generations, applied := m.workloads(t), m.workloadGenerations(t), m.appliedSpec(t)

	big := strings.Repeat("k", 262144-len("example.com/big"))
	if err := m.setSpec(t, `logLevel: warn, speakerConfig: {annotations: {example.com/big: `+big+`}}`); err != nil {
		t.Fatalf("the API server refused the MetalLB object; its CRD should take it: %.300v", err)
	}
	c := m.waitDegraded(t, clusterObject, isTrue)
	for _, want := range []string{plan.ReasonRenderingRefused, "DaemonSet metallb-system/speaker", "spec.template.annotations", "Too long"} {
		if !strings.Contains(c.Reason+" "+c.Message, want) {
			t.Errorf("Degraded %s %q does not say %q", c.Reason, c.Message, want)
		}
	}
	if after := m.workloads(t); after != before {
		t.Errorf("the workloads changed:\nbefore: %.500s\nafter:  %.500s", before, after)
	}
	if got := m.appliedSpec(t); got != applied {
		t.Errorf("status.appliedSpec changed to a spec that was not applied:\n%.300s", got)
	}

	if err := m.setSpec(t, `logLevel: warn`); err != nil {
		t.Fatal(err)
	}
	m.waitDegraded(t, clusterObject, isFalse)
	if after := m.workloads(t); !strings.Contains(after, "--log-level=warn") {
		t.Errorf("a valid spec after the refused one was not applied:\n%.500s", after)
	}
	for kind, g := range m.workloadGenerations(t) {
		if g != generations[kind]+1 {
			t.Errorf("%s went from generation %d to %d; want one pass, one generation", kind, generations[kind], g)
		}
	}
}

// workloadGenerations are the generations of the controller Deployment and
// the speaker DaemonSet.
func (m *moduleEnv) workloadGenerations(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for kind, name := range map[string]string{"Deployment": manifests.ControllerName, "DaemonSet": manifests.SpeakerName} {
		out[kind] = m.get(t, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind}, manifests.DefaultNamespace, name).GetGeneration()
	}
	return out
}

// appliedSpec is the MetalLB object's status.appliedSpec, as JSON.
func (m *moduleEnv) appliedSpec(t *testing.T) string {
	t.Helper()
	obj := &v1beta1.MetalLB{}
	if err := m.client.Get(t.Context(), clusterObject, obj); err != nil {
		t.Fatal(err)
	}
	if obj.Status.AppliedSpec == nil {
		return ""
	}
	return string(obj.Status.AppliedSpec.Raw)
}

// The Events that ask the user to act arrive though the API server fails
// each with a server error first (client-go's recorder would drop them):
// the operator tries their writes again (transient.RetryEventWrites).
// Counted from the API server: MemberlistKeyRegenerated, after the
// memberlist Secret is deleted, and RenderingRefused.
func TestEventsAskingToActArriveThroughServerErrors(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{})
	var failed atomic.Int64
	m.transports = append(m.transports, func(rt http.RoundTripper) http.RoundTripper { return eventsFirstTryFails(rt, &failed) })
	m.run(t, testOptions())
	m.create(t, filepath.Join("manifests", "testdata", "scenarios", "upstream-operator-object.yaml"))
	m.waitDegraded(t, clusterObject, isFalse)
	m.assertMemberlistRestored(t, m.memberlistKey(t))
	big := strings.Repeat("k", 262144-len("example.com/big"))
	if err := m.setSpec(t, `speakerConfig: {annotations: {example.com/big: `+big+`}}`); err != nil {
		t.Fatal(err)
	}
	m.waitEvent(t, manifests.DefaultNamespace, manifests.ObjectName, "DegradedTrue", plan.ReasonRenderingRefused+": ")
	if n := failed.Load(); n < 2 {
		t.Errorf("%d Event writes failed, want each Event's first", n)
	}
}

// The memberlist Secret made again, the answer to its creation lost (the
// connection reset after the API server made it): the module still tells
// the user to restart the speakers, reading back what it wrote.
func TestMemberlistKeyRegeneratedToldThoughTheAnswerIsLost(t *testing.T) {
	t.Parallel()
	m := newModuleEnv(t, testenv.Options{})
	var armed atomic.Bool
	faults := testenv.NewFaults(testenv.FaultSeed(t), testenv.FaultRates{LoseFirstAnswers: 1})
	m.transports = append(m.transports, func(rt http.RoundTripper) http.RoundTripper {
		lose := faults.Wrap(rt)
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if armed.Load() && req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/secrets") {
				return lose.RoundTrip(req)
			}
			return rt.RoundTrip(req)
		})
	})
	m.run(t, testOptions())
	m.create(t, filepath.Join("manifests", "testdata", "scenarios", "upstream-operator-object.yaml"))
	m.waitDegraded(t, clusterObject, isFalse)
	armed.Store(true)
	m.assertMemberlistRestored(t, m.memberlistKey(t))
	if seen := faults.Seen(); seen.AnswersLost != 1 {
		t.Errorf("faults seen: %s, want the Secret's creation's answer lost", seen)
	}
}

// eventsFirstTryFails answers the first try of each write of an Event (by
// its method, path and body) with kube-apiserver's 500, and sends the
// others.
func eventsFirstTryFails(rt http.RoundTripper, failed *atomic.Int64) http.RoundTripper {
	var mu sync.Mutex
	tried := map[string]bool{}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet || !isEventPath(req.URL.Path) {
			return rt.RoundTrip(req)
		}
		var body []byte
		if req.Body != nil {
			var err error
			if body, err = io.ReadAll(req.Body); err != nil {
				return nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		key := req.Method + " " + req.URL.Path + " " + string(body)
		mu.Lock()
		first := !tried[key]
		tried[key] = true
		mu.Unlock()
		if !first {
			return rt.RoundTrip(req)
		}
		failed.Add(1)
		status := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","code":500,"message":"injected"}`
		return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(status)), Request: req}, nil
	})
}
