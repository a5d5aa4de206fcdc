package explain

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// State is where a Service stands with MetalLB.
type State string

const (
	// Announced: it has an address, and MetalLB announces it from a node.
	Announced State = "Announced"
	// Pending: it has no address.
	Pending State = "Pending"
	// Unannounced: it has an address, and no node announces it.
	Unannounced State = "Unannounced"
	// NotServed: MetalLB does not serve it (its type or class).
	NotServed State = "NotServedByMetalLB"
	// NodeAddress: the node-address mode serves it.
	NodeAddress State = "NodeAddress"
)

// Explanation is what `kubectl metallb explain` tells of one Service.
type Explanation struct {
	Service     string      `json:"service"`
	State       State       `json:"state"`
	Addresses   []string    `json:"addresses,omitempty"`
	Pool        string      `json:"pool,omitempty"`
	AnnouncedBy []Announcer `json:"announcedBy,omitempty"`
	// Reason, Why and Fix tell why it is not announced: Why in one
	// sentence, Fix what to do.
	Reason string `json:"reason,omitempty"`
	Why    string `json:"why,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// LastWarning is MetalLB's last Warning Event on the Service, its
	// reason and message.
	LastWarning  string   `json:"lastWarning,omitempty"`
	CouldNotRead []Unread `json:"couldNotRead,omitempty"`
}

// Announcer is a node that announces the Service, and how.
type Announcer struct {
	Node       string   `json:"node"`
	Protocol   string   `json:"protocol"`
	Interfaces []string `json:"interfaces,omitempty"`
	Peers      []string `json:"peers,omitempty"`
}

// finding is a reason with its sentence and fix.
type finding struct{ reason, why, fix string }

// quoting are the reasons whose sentence quotes the Service's Warning
// Events, which are then not repeated.
var quoting = map[string]bool{"AllocationFailed": true, ReasonInterfaceMissing: true, "NodeAddressPortTaken": true}

// Service explains one Service.
func Service(c *Cluster, t Target) Explanation {
	svc := t.Service
	e := Explanation{Service: svc.Namespace + "/" + svc.Name, CouldNotRead: c.Unreadable,
		Pool: svc.Annotations[AnnotationAllocatedFrom], LastWarning: lastWarning(t.Events)}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			e.Addresses = append(e.Addresses, in.IP)
		}
	}
	notServed, down := notMetalLBs(c, svc), c.notRunning()
	var f *finding
	switch {
	case notServed != nil:
		e.State, f = NotServed, notServed
	case svc.Spec.LoadBalancerClass != nil && *svc.Spec.LoadBalancerClass == decide.Class:
		e.State, f = NodeAddress, nodeAddressConflict(t)
	case down != nil:
		e.State, f = Pending, down
		if len(e.Addresses) > 0 {
			e.State = Unannounced
		}
	case len(e.Addresses) == 0:
		e.State, f = Pending, c.whyPending(t)
	default:
		if e.AnnouncedBy = c.announcers(svc); len(e.AnnouncedBy) > 0 {
			e.State = Announced
		} else {
			e.State, f = Unannounced, c.whyUnannounced(t, e.Pool)
		}
	}
	if f != nil {
		e.Reason, e.Why, e.Fix = f.reason, f.why, f.fix
		if quoting[f.reason] {
			e.LastWarning = ""
		}
	}
	return e
}

// metallbClass is the loadBalancerClass MetalLB serves ("" is Services with
// none).
func (c *Cluster) metallbClass() string {
	if c.MetalLB == nil {
		return ""
	}
	return c.MetalLB.Spec.LoadBalancerClass
}

// notMetalLBs tells why MetalLB does not serve the Service: its type or its
// class; nil when it does.
func notMetalLBs(c *Cluster, svc *corev1.Service) *finding {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return &finding{"NotLoadBalancer", fmt.Sprintf("It is of type %s, and MetalLB gives addresses only to Services of type LoadBalancer.", svc.Spec.Type),
			"Set spec.type: LoadBalancer."}
	}
	class, mine := "", c.metallbClass()
	if svc.Spec.LoadBalancerClass != nil {
		class = *svc.Spec.LoadBalancerClass
	}
	if class == mine || class == decide.Class {
		return nil
	}
	serves := "Services with no loadBalancerClass"
	if mine != "" {
		serves = "Services of loadBalancerClass " + mine
	}
	has := "Its spec.loadBalancerClass is " + class
	if class == "" {
		has = "It has no spec.loadBalancerClass"
	}
	return &finding{"OtherLoadBalancerClass", fmt.Sprintf("%s, and MetalLB serves only %s: another load balancer is to serve it.", has, serves),
		fmt.Sprintf("spec.loadBalancerClass cannot change: create the Service again with %s, or set spec.loadBalancerClass: %s on the MetalLB object %s/metallb.", classWord(mine), class, c.Namespace)}
}

func classWord(class string) string {
	if class == "" {
		return "no loadBalancerClass"
	}
	return "loadBalancerClass " + class
}

// notRunning tells why MetalLB cannot serve anything yet: the platform, or
// its controller missing or not ready; nil while it runs or where it could
// not be read.
func (c *Cluster) notRunning() *finding {
	if !c.Readable(KindController) {
		return nil
	}
	if cond := c.condition(func(cond metav1.Condition) bool { return cond.Reason == ReasonPlatformNotSupported }); cond != nil {
		why, _, _ := strings.Cut(cond.Message, " To deploy it anyway")
		return &finding{ReasonPlatformNotSupported, Sentence(why),
			"If nothing else gives this cluster's Services addresses, start the operator with --platform=BareMetal; else give the Service the class of the load balancer that does."}
	}
	why := ""
	if cond := c.condition(unhealthy); cond != nil {
		why = " The operator says: " + Sentence(cond.Message)
	}
	if c.Controller == nil {
		if len(c.Pools) == 0 && c.Readable(KindPools) {
			return &finding{"NoPool", fmt.Sprintf("No IPAddressPool exists in %s, so MetalLB is not running.%s", c.Namespace, why),
				fmt.Sprintf("Create an IPAddressPool and an L2Advertisement (or a BGPPeer and a BGPAdvertisement) in %s: the operator deploys MetalLB then.", c.Namespace)}
		}
		return &finding{"MetalLBNotRunning", fmt.Sprintf("MetalLB is not running: there is no controller Deployment in %s.%s", c.Namespace, why),
			"kubectl metallb status tells what the operator reports."}
	}
	if c.Controller.Status.AvailableReplicas == 0 {
		return &finding{"ControllerNotReady", fmt.Sprintf("MetalLB's controller (Deployment %s/%s) has no available pod, and it is what hands out addresses.%s", c.Namespace, c.Controller.Name, why),
			fmt.Sprintf("kubectl describe deployment %s -n %s, and kubectl metallb status.", c.Controller.Name, c.Namespace)}
	}
	return nil
}

// ReasonPlatformNotSupported is the operator's reason where it deploys no
// MetalLB: the platform is not bare metal.
const ReasonPlatformNotSupported = "PlatformNotSupported"

// condition is the first of the operator's conditions that matches.
func (c *Cluster) condition(matches func(metav1.Condition) bool) *metav1.Condition {
	for i := range c.Conditions {
		if matches(c.Conditions[i]) {
			return &c.Conditions[i]
		}
	}
	return nil
}

// unhealthy tells a condition that says something is wrong: Degraded, or
// not Available.
func unhealthy(c metav1.Condition) bool {
	return c.Type == "Degraded" && c.Status == metav1.ConditionTrue || c.Type == "Available" && c.Status != metav1.ConditionTrue
}

// nodeAddressConflict tells the ports the node-address mode could not
// publish (its AddressTaken Events, one per node address, in no fixed
// order: sorted); nil when there is none.
func nodeAddressConflict(t Target) *finding {
	var lost []string
	for _, ev := range t.Events {
		if ev.Reason == "AddressTaken" && ev.Type == corev1.EventTypeWarning {
			why, _, _ := strings.Cut(ev.Message, ". ")
			lost = append(lost, Sentence(why))
		}
	}
	if len(lost) > 0 {
		slices.Sort(lost)
		return &finding{"NodeAddressPortTaken", strings.Join(slices.Compact(lost), " "),
			"Change the port of one of the two Services, or give one another loadBalancerClass."}
	}
	if len(t.Service.Status.LoadBalancer.Ingress) == 0 {
		return &finding{"NodeAddressModeOff", "The node-address mode serves its class, and it has written no address: the mode is off or has not reached it yet.",
			"Set spec.nodeAddress.mode: Enabled on the MetalLB object; kubectl metallb status tells the mode's state."}
	}
	return nil
}

// metallbComponents are the names MetalLB's controller and speaker write
// their Events under.
var metallbComponents = []string{"metallb-controller", "metallb-speaker"}

// lastWarning is MetalLB's last Warning Event's reason and message: the API
// server's own (a ClusterIP repaired) say nothing of MetalLB.
func lastWarning(events []corev1.Event) string {
	for _, ev := range slices.Backward(events) {
		if ev.Type == corev1.EventTypeWarning && (slices.Contains(metallbComponents, ev.Source.Component) ||
			slices.Contains(metallbComponents, ev.ReportingController)) {
			return ev.Reason + ": " + strings.TrimSpace(ev.Message)
		}
	}
	return ""
}

// Sentence ends a message of MetalLB's with a full stop.
func Sentence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}
