package explain

import (
	"strings"
	"testing"

	metallbv1beta1 "go.universe.tf/metallb/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// serviceCase is a cluster, a Service with its endpoints and Events, and
// what explain tells of it.
type serviceCase struct {
	name    string
	cluster func(*Cluster)
	target  Target
	state   State
	reason  string
	says    string // in Why
}

var readyOnC = endpoints("node-c")

var serviceCases = []serviceCase{
	{name: "announced in layer 2", cluster: func(c *Cluster) { c.L2Statuses = append(c.L2Statuses, l2Status("node-b")) },
		target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Announced},
	{name: "not a LoadBalancer", target: Target{Service: service(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP })},
		state: NotServed, reason: "NotLoadBalancer", says: "type ClusterIP"},
	{name: "another class", target: Target{Service: service(func(s *corev1.Service) { s.Spec.LoadBalancerClass = new("example.com/lb") })},
		state: NotServed, reason: "OtherLoadBalancerClass", says: "example.com/lb, and MetalLB serves only Services with no loadBalancerClass"},
	{name: "no class while MetalLB has one", cluster: func(c *Cluster) {
		c.MetalLB = &v1beta1.MetalLB{Spec: v1beta1.MetalLBSpec{LoadBalancerClass: "metallb"}}
	},
		target: Target{Service: service()}, state: NotServed, reason: "OtherLoadBalancerClass", says: "It has no spec.loadBalancerClass, and MetalLB serves only Services of loadBalancerClass metallb"},
	{name: "the node-address mode's class, a port taken", target: Target{Service: service(func(s *corev1.Service) { s.Spec.LoadBalancerClass = new(decide.Class) }),
		Events: []corev1.Event{warning("AddressTaken", "Node address 192.0.2.2 is not published for this Service: Service demo/a, older, takes 80/TCP on it. Change it."),
			warning("AddressTaken", "Node address 192.0.2.1 is not published for this Service: Service demo/a, older, takes 80/TCP on it. Change it.")}},
		state: NodeAddress, reason: "NodeAddressPortTaken",
		says: "Node address 192.0.2.1 is not published for this Service: Service demo/a, older, takes 80/TCP on it. Node address 192.0.2.2 is not published"},
	{name: "no pool, MetalLB not running", cluster: func(c *Cluster) { c.Pools, c.Controller = nil, nil },
		target: Target{Service: service()}, state: Pending, reason: "NoPool"},
	{name: "not bare metal", cluster: func(c *Cluster) {
		c.Pools, c.Controller = nil, nil
		c.Conditions = []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: ReasonPlatformNotSupported,
			Message: "MetalLB is not deployed: the platform is AWS (from --platform), and the operator deploys MetalLB only on BareMetal, None. To deploy it anyway, start the operator with --platform=BareMetal."}}
	}, target: Target{Service: service()}, state: Pending, reason: ReasonPlatformNotSupported, says: "the platform is AWS (from --platform), and the operator deploys MetalLB only on BareMetal, None."},
	{name: "no controller, the operator degraded", cluster: func(c *Cluster) {
		c.Controller = nil
		c.Conditions = []metav1.Condition{{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "ForeignObjects", Message: "Another installation runs MetalLB"}}
	}, target: Target{Service: service()}, state: Pending, reason: "MetalLBNotRunning", says: "The operator says: Another installation runs MetalLB."},
	{name: "controller not available", cluster: func(c *Cluster) { c.Controller.Status.AvailableReplicas = 0 },
		target: Target{Service: service()}, state: Pending, reason: "ControllerNotReady"},
	{name: "the pool serves another namespace", cluster: func(c *Cluster) {
		c.Pools[0].Spec.AllocateTo = &metallbv1beta1.ServiceAllocation{Namespaces: []string{"prod"}}
	}, target: Target{Service: service()}, state: Pending, reason: "NoPoolServes", says: "default: spec.serviceAllocation takes other Services (namespaces prod)"},
	{name: "the pool selects its namespace by label", cluster: func(c *Cluster) {
		c.Pools[0].Spec.AllocateTo = &metallbv1beta1.ServiceAllocation{NamespaceSelectors: []metav1.LabelSelector{selector("team", "a")}}
		c.Pools[0].Status.AvailableIPv4 = 0
	}, target: Target{Service: service()}, state: Pending, reason: "PoolExhausted"},
	{name: "autoAssign false", cluster: func(c *Cluster) { c.Pools[0].Spec.AutoAssign = new(false) },
		target: Target{Service: service()}, state: Pending, reason: "NoPoolServes", says: "default: autoAssign is false"},
	{name: "IPv6 asked, IPv4 pool", target: Target{Service: service(func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} })},
		state: Pending, reason: "NoPoolServes", says: "default: no IPv6 addresses"},
	{name: "exhausted", cluster: func(c *Cluster) { c.Pools[0].Status = metallbv1beta1.IPAddressPoolStatus{AssignedIPv4: 11} },
		target: Target{Service: service(), Events: []corev1.Event{warning("AllocationFailed", `Failed to allocate IP for "demo/web": no available IPs`)}},
		state:  Pending, reason: "PoolExhausted", says: "default (11 IPv4 and 0 IPv6 addresses in use, none free)"},
	{name: "names a pool that does not exist", target: Target{Service: service(annotated(AnnotationAddressPool, "gold"))},
		state: Pending, reason: "NoSuchPool", says: "names IPAddressPool gold"},
	{name: "asks for an address outside every pool", target: Target{Service: service(annotated(AnnotationAddresses, "203.0.113.9"))},
		state: Pending, reason: "AddressOutsidePools", says: "asks for 203.0.113.9"},
	{name: "asks for an address another Service holds", cluster: func(c *Cluster) { c.Services = append(c.Services, *other("", 80)) },
		target: Target{Service: service(annotated(AnnotationAddresses, "192.0.2.10"))}, state: Pending, reason: "AddressTaken", says: "demo/db holds"},
	{name: "sharing keys differ", cluster: func(c *Cluster) { c.Services = append(c.Services, *other("blue", 5432)) },
		target: Target{Service: service(annotated(AnnotationAddresses, "192.0.2.10"), annotated(AnnotationAllowShared, "green"))},
		state:  Pending, reason: "SharingKeyConflict", says: `sharing key "blue"`},
	{name: "shared on the same port", cluster: func(c *Cluster) { c.Services = append(c.Services, *other("blue", 80)) },
		target: Target{Service: service(annotated(AnnotationAddresses, "192.0.2.10"), annotated(AnnotationAllowShared, "blue"))},
		state:  Pending, reason: "SharedPortConflict", says: "port 80/TCP"},
	{name: "shared on another port: MetalLB's word", cluster: func(c *Cluster) { c.Services = append(c.Services, *other("blue", 5432)) },
		target: Target{Service: service(annotated(AnnotationAddresses, "192.0.2.10"), annotated(AnnotationAllowShared, "blue")),
			Events: []corev1.Event{warning("AllocationFailed", "something else")}}, state: Pending, reason: "AllocationFailed", says: "something else"},
	{name: "no advertisement", cluster: func(c *Cluster) { c.L2Ads = nil },
		target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "PoolNotAnnounced"},
	{name: "an advertisement of another pool", cluster: func(c *Cluster) { c.L2Ads[0].Spec.IPAddressPools = []string{"other"} },
		target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "PoolNotAnnounced"},
	{name: "BGP only, no peer", cluster: func(c *Cluster) {
		c.L2Ads, c.BGPAds = nil, []metallbv1beta1.BGPAdvertisement{{ObjectMeta: metav1.ObjectMeta{Name: "bgp"}}}
	}, target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "NoBGPPeer"},
	{name: "no ready endpoint", target: Target{Service: service(withAddress("192.0.2.10", "default"))}, state: Unannounced, reason: "NoReadyEndpoint"},
	{name: "every node excluded", cluster: func(c *Cluster) {
		for i := range c.Nodes {
			c.Nodes[i].Labels[corev1.LabelNodeExcludeBalancers] = ""
		}
	}, target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "AllNodesExcluded",
		says: "node-a, node-b, node-c carry the label node.kubernetes.io/exclude-from-external-load-balancers"},
	{name: "nodeSelectors match no node", cluster: func(c *Cluster) { c.L2Ads[0].Spec.NodeSelectors = []metav1.LabelSelector{selector("name", "node-z")} },
		target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "NoNodeSelected"},
	{name: "Local, endpoint on an excluded node", cluster: func(c *Cluster) { c.Nodes[2].Labels[corev1.LabelNodeExcludeBalancers] = "" },
		target: Target{Service: service(withAddress("192.0.2.10", "default"), local), Endpoints: readyOnC}, state: Unannounced, reason: "NoEligibleNode",
		says: "node-c carries the label node.kubernetes.io/exclude-from-external-load-balancers; node-a, node-b have none of its ready endpoints"},
	{name: "BGP peer selects no node the advertisement does", cluster: func(c *Cluster) {
		c.L2Ads = nil
		c.BGPAds = []metallbv1beta1.BGPAdvertisement{{ObjectMeta: metav1.ObjectMeta{Name: "bgp"}, Spec: metallbv1beta1.BGPAdvertisementSpec{NodeSelectors: []metav1.LabelSelector{selector("name", "node-a")}}}}
		c.Peers = append(c.Peers, peer("router", selector("name", "node-b")))
	}, target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "NoNodeSelected"},
	{name: "speakers not ready", cluster: func(c *Cluster) { c.Speakers = nil },
		target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "NoSpeaker"},
	{name: "nodes unreadable: MetalLB's word on interfaces", cluster: func(c *Cluster) {
		c.Nodes, c.Unreadable = nil, []Unread{{What: KindNodes, Reason: "forbidden"}}
	}, target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC,
		Events: []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "announceFailed", Message: `the interfaces specified by LB IP "192.0.2.10" doesn't exist in assigned node "node-a" with protocol "layer2"`}}},
		state: Unannounced, reason: "InterfaceMissing", says: "doesn't exist in assigned node"},
	{name: "address in no pool any more", cluster: func(c *Cluster) { c.Pools[0].Spec.Addresses = []string{"198.51.100.0/24"} },
		target: Target{Service: service(withAddress("192.0.2.10", "")), Endpoints: readyOnC}, state: Unannounced, reason: "AddressOutsidePools"},
	{name: "not announced yet", target: Target{Service: service(withAddress("192.0.2.10", "default")), Endpoints: readyOnC}, state: Unannounced, reason: "NotAnnouncedYet"},
}

func TestServiceExplained(t *testing.T) {
	for _, tc := range serviceCases {
		t.Run(tc.name, func(t *testing.T) {
			c := healthy()
			if tc.cluster != nil {
				tc.cluster(c)
			}
			e := Service(c, tc.target)
			if e.State != tc.state || e.Reason != tc.reason {
				t.Fatalf("state %s, reason %q (%s); want %s, %q", e.State, e.Reason, e.Why, tc.state, tc.reason)
			}
			if !strings.Contains(e.Why, tc.says) {
				t.Errorf("why %q does not say %q", e.Why, tc.says)
			}
			if quoting[e.Reason] && e.LastWarning != "" {
				t.Errorf("the sentence quotes the Events, and the last is repeated: %q", e.LastWarning)
			}
			if (e.Reason == "") != (e.Fix == "") || e.Reason != "" && !strings.HasSuffix(e.Why, ".") {
				t.Errorf("a reason has one sentence and a fix: %+v", e)
			}
		})
	}
}

func local(s *corev1.Service) {
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
}

// other is demo/db, holding 192.0.2.10 on a port, with a sharing key.
func other(key string, port int32) *corev1.Service {
	s := service(withAddress("192.0.2.10", "default"))
	s.Name = "db"
	s.Spec.Ports[0].Port = port
	if key != "" {
		s.Annotations[AnnotationAllowShared] = key
	}
	return s
}

// The last Warning shown is MetalLB's, whichever API wrote it; the API
// server's own on the Service (a ClusterIP repaired) are not MetalLB's word.
func TestLastWarningIsMetalLBs(t *testing.T) {
	speaker := corev1.Event{Type: corev1.EventTypeWarning, Reason: "announceFailed", Message: "no eth9", ReportingController: "metallb-speaker"}
	repair := corev1.Event{Type: corev1.EventTypeWarning, Reason: "ClusterIPNotAllocated", Message: "repairing",
		Source: corev1.EventSource{Component: "ipallocator-repair-controller"}}
	for _, tc := range []struct {
		events []corev1.Event
		want   string
	}{
		{[]corev1.Event{warning("AllocationFailed", "no available IPs"), repair}, "AllocationFailed: no available IPs"},
		{[]corev1.Event{warning("AllocationFailed", "no available IPs"), speaker, repair}, "announceFailed: no eth9"},
		{[]corev1.Event{repair}, ""},
	} {
		if got := lastWarning(tc.events); got != tc.want {
			t.Errorf("last warning %q, want %q", got, tc.want)
		}
	}
}
