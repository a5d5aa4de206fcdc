package manifests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Who may reach a port of a pod, as the rendered NetworkPolicies say.
const (
	anyClient = "any"       // an ingress rule allows every source
	nodeOnly  = "node only" // no rule: only the pod's own node (the kubelet's probes), which policies never block
	hostNet   = "host network, no policy applies"
)

// TestNetworkPoliciesAllowWhatPodsServe: for every port a rendered container
// listens on (its ports and its probes' ports), the clients the rendered
// policies let in; the egress each pod is allowed; and that no policy allows
// a port no pod it selects listens on.
func TestNetworkPoliciesAllowWhatPodsServe(t *testing.T) {
	apiServer := []string{"TCP/443", "TCP/6443"}
	cases := []struct {
		scenario string
		ingress  map[string]string   // "pod port/protocol" → who may reach it
		egress   map[string][]string // pod → ports it may reach
	}{
		{
			scenario: "defaults",
			ingress: map[string]string{
				"controller TCP/9120": anyClient, "controller TCP/9443": anyClient, "controller TCP/17472": nodeOnly,
				"speaker TCP/9120": hostNet, "speaker TCP/7946": hostNet, "speaker UDP/7946": hostNet, "speaker TCP/17472": hostNet,
			},
			egress: map[string][]string{"controller": apiServer},
		},
		{
			scenario: "webhooks-disabled",
			ingress: map[string]string{
				"controller TCP/9120": anyClient, "controller TCP/9443": nodeOnly, "controller TCP/17472": nodeOnly,
				"speaker TCP/9120": hostNet, "speaker TCP/7946": hostNet, "speaker UDP/7946": hostNet, "speaker TCP/17472": hostNet,
			},
			egress: map[string][]string{"controller": apiServer},
		},
		{
			scenario: "frr-k8s",
			ingress: map[string]string{
				"controller TCP/9120": anyClient, "controller TCP/9443": anyClient, "controller TCP/17472": nodeOnly,
				"speaker TCP/9120": hostNet, "speaker TCP/7946": hostNet, "speaker UDP/7946": hostNet, "speaker TCP/17472": hostNet,
				"frr-k8s-statuscleaner TCP/19443": hostNet,
				"frr-k8s-daemon TCP/7572":         hostNet, "frr-k8s-daemon TCP/7573": hostNet,
				"frr-k8s-daemon TCP/9140": hostNet, "frr-k8s-daemon TCP/9141": hostNet,
			},
			egress: map[string][]string{"controller": apiServer},
		},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			objs := scenario{name: c.scenario, noWebhooks: c.scenario == "webhooks-disabled"}.render(t)
			pods, policies := podsOf(t, objs), policiesOf(t, objs)
			if !slices.ContainsFunc(policies, isDefaultDeny) {
				t.Fatalf("no default-deny policy (every pod, ingress and egress, nothing allowed) among %d", len(policies))
			}
			ingress, egress := reach(pods, policies)
			if d := cmp.Diff(c.ingress, ingress); d != "" {
				t.Errorf("who reaches which port (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.egress, egress); d != "" {
				t.Errorf("what each pod reaches (-want +got):\n%s", d)
			}
			for _, np := range policies {
				checkAllowsOnlyListeners(t, np, pods)
			}
		})
	}
}

// reach is who reaches each port of each pod ("pod port/protocol"), and what
// each pod that policies apply to reaches.
func reach(pods []pod, policies []*networkingv1.NetworkPolicy) (map[string]string, map[string][]string) {
	ingress, egress := map[string]string{}, map[string][]string{}
	for _, p := range pods {
		for _, port := range p.listens {
			ingress[p.name+" "+port.String()] = whoReaches(p, port, policies)
		}
		if !p.hostNetwork {
			egress[p.name] = egressOf(p, policies)
		}
	}
	return ingress, egress
}

// TestNetworkPoliciesOff: the MetalLB object turns them off.
func TestNetworkPoliciesOff(t *testing.T) {
	if n := len(policiesOf(t, scenario{name: "network-policies-disabled"}.render(t))); n != 0 {
		t.Errorf("%d NetworkPolicies rendered with networkPolicies.mode Disabled, want none", n)
	}
}

// listener is a port a container listens on.
type listener struct {
	protocol corev1.Protocol
	port     int32
}

func (l listener) String() string { return fmt.Sprintf("%s/%d", l.protocol, l.port) }

// pod is a workload's pod template, as the policies see it.
type pod struct {
	name        string
	labels      labels.Set
	hostNetwork bool
	listens     []listener
	named       map[string]int32 // container ports by name
}

func podsOf(t *testing.T, objs []*unstructured.Unstructured) []pod {
	t.Helper()
	var pods []pod
	for _, o := range objs {
		var tpl corev1.PodTemplateSpec
		switch o.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			fromUnstructured(t, o, &d)
			tpl = d.Spec.Template
		case "DaemonSet":
			var d appsv1.DaemonSet
			fromUnstructured(t, o, &d)
			tpl = d.Spec.Template
		default:
			continue
		}
		pods = append(pods, podOf(o.GetName(), tpl))
	}
	return pods
}

func podOf(name string, tpl corev1.PodTemplateSpec) pod {
	p := pod{name: name, labels: tpl.Labels, hostNetwork: tpl.Spec.HostNetwork, named: map[string]int32{}}
	add := func(l listener) {
		if !slices.Contains(p.listens, l) {
			p.listens = append(p.listens, l)
		}
	}
	for _, c := range tpl.Spec.Containers {
		for _, cp := range c.Ports {
			add(listener{protocolOf(cp.Protocol), cp.ContainerPort})
			p.named[cp.Name] = cp.ContainerPort
		}
	}
	for _, c := range tpl.Spec.Containers {
		for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if probe != nil && probe.HTTPGet != nil {
				add(listener{corev1.ProtocolTCP, p.resolve(probe.HTTPGet.Port)})
			}
		}
	}
	return p
}

// resolve is a port's number, by name from the pod's container ports.
func (p pod) resolve(port intstr.IntOrString) int32 {
	if port.Type == intstr.String {
		return p.named[port.StrVal]
	}
	return port.IntVal
}

func policiesOf(t *testing.T, objs []*unstructured.Unstructured) []*networkingv1.NetworkPolicy {
	t.Helper()
	var out []*networkingv1.NetworkPolicy
	for _, o := range objs {
		if o.GetKind() == "NetworkPolicy" {
			np := &networkingv1.NetworkPolicy{}
			fromUnstructured(t, o, np)
			out = append(out, np)
		}
	}
	return out
}

func fromUnstructured(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

func isDefaultDeny(np *networkingv1.NetworkPolicy) bool {
	return len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 &&
		slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) &&
		slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) &&
		len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0
}

// selects tells whether a policy isolates the pod in a direction.
func selects(np *networkingv1.NetworkPolicy, p pod, dir networkingv1.PolicyType) bool {
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	return err == nil && sel.Matches(p.labels) && slices.Contains(np.Spec.PolicyTypes, dir)
}

// whoReaches is who the policies let reach a port of the pod.
func whoReaches(p pod, l listener, policies []*networkingv1.NetworkPolicy) string {
	if p.hostNetwork {
		return hostNet
	}
	var who []string
	for _, np := range policies {
		if !selects(np, p, networkingv1.PolicyTypeIngress) {
			continue
		}
		for _, rule := range np.Spec.Ingress {
			if !portsAllow(rule.Ports, p, l) {
				continue
			}
			if len(rule.From) == 0 {
				return anyClient
			}
			who = append(who, fmt.Sprintf("%s: %v", np.Name, rule.From))
		}
	}
	if len(who) == 0 {
		return nodeOnly
	}
	return strings.Join(who, "; ")
}

// egressOf is what the pod may reach: ports, towards any destination.
func egressOf(p pod, policies []*networkingv1.NetworkPolicy) []string {
	var out []string
	for _, np := range policies {
		if !selects(np, p, networkingv1.PolicyTypeEgress) {
			continue
		}
		for _, rule := range np.Spec.Egress {
			to := ""
			if len(rule.To) > 0 {
				to = fmt.Sprintf(" to %v", rule.To)
			}
			if len(rule.Ports) == 0 {
				out = append(out, "every port"+to)
			}
			for _, port := range rule.Ports {
				out = append(out, fmt.Sprintf("%s/%s%s", protocolOf(ptr.Deref(port.Protocol, "")), port.Port.String(), to))
			}
		}
	}
	slices.Sort(out)
	return out
}

// portsAllow tells whether an ingress rule's ports take in the listener; no
// ports is every port.
func portsAllow(ports []networkingv1.NetworkPolicyPort, p pod, l listener) bool {
	if len(ports) == 0 {
		return true
	}
	return slices.ContainsFunc(ports, func(np networkingv1.NetworkPolicyPort) bool {
		return np.Port != nil && protocolOf(ptr.Deref(np.Protocol, "")) == l.protocol && p.resolve(*np.Port) == l.port
	})
}

// checkAllowsOnlyListeners fails on an ingress rule that allows every port,
// or a port that some pod the policy selects does not listen on.
func checkAllowsOnlyListeners(t *testing.T, np *networkingv1.NetworkPolicy, pods []pod) {
	t.Helper()
	for _, p := range pods {
		if p.hostNetwork || !selects(np, p, networkingv1.PolicyTypeIngress) {
			continue
		}
		for _, rule := range np.Spec.Ingress {
			if len(rule.Ports) == 0 {
				t.Errorf("policy %s allows every port of %s in", np.Name, p.name)
			}
			for _, port := range rule.Ports {
				l := listener{protocolOf(ptr.Deref(port.Protocol, "")), p.resolve(ptr.Deref(port.Port, intstr.IntOrString{}))}
				if !slices.Contains(p.listens, l) {
					t.Errorf("policy %s allows %s of %s, where nothing listens", np.Name, l, p.name)
				}
			}
		}
	}
}

// protocolOf is a port's protocol, TCP when unset, as for the API.
func protocolOf(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}
