package plan

import (
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
)

// DefaultAllowedPlatforms are the platforms MetalLB runs on unless told
// otherwise: where no cloud hands out load-balancer addresses.
var DefaultAllowedPlatforms = []string{string(configv1.BareMetalPlatformType), string(configv1.NonePlatformType)}

// Platform is what the cluster runs on, and how that was found out.
type Platform struct {
	Type   string // an OpenShift platform type: "BareMetal", "None", "AWS", ...
	Source string // for messages: "--platform", "Infrastructure cluster", "node n1's provider ID aws:///..."
}

// cloudProviders maps the scheme of a Node's spec.providerID to the platform of
// cloud controller managers that set it; these clouds hand out load-balancer
// addresses themselves.
var cloudProviders = map[string]configv1.PlatformType{
	"aws":          configv1.AWSPlatformType,
	"gce":          configv1.GCPPlatformType,
	"azure":        configv1.AzurePlatformType,
	"openstack":    configv1.OpenStackPlatformType,
	"vsphere":      configv1.VSpherePlatformType,
	"ibm":          configv1.IBMCloudPlatformType,
	"ibmcloud":     configv1.IBMCloudPlatformType,
	"ibmpowervs":   configv1.PowerVSPlatformType,
	"kubevirt":     configv1.KubevirtPlatformType,
	"alicloud":     configv1.AlibabaCloudPlatformType,
	"nutanix":      configv1.NutanixPlatformType,
	"ovirt":        configv1.OvirtPlatformType,
	"equinixmetal": configv1.EquinixMetalPlatformType,
	"packet":       configv1.EquinixMetalPlatformType,
	"libvirt":      configv1.LibvirtPlatformType,
}

// bareMetalProviders are provider ID schemes of clusters that hand out no
// load-balancer addresses: local distributions and bare-metal provisioners.
var bareMetalProviders = []string{"kind", "k3s", "rke2", "metal3", "baremetal", "docker", "talos", "kwok"}

// platformOf decides the platform: --platform, else the Infrastructure
// object's, else the Nodes' provider IDs tell.
func platformOf(override string, in PlatformInputs) Platform {
	switch {
	case override != "":
		return Platform{Type: override, Source: "--platform"}
	case in.Infrastructure != "":
		return Platform{Type: in.Infrastructure, Source: "Infrastructure cluster"}
	}
	return platformOfNodes(in.Nodes)
}

// platformOfNodes infers the platform from the Nodes' provider IDs: a cloud if
// any node names one, else bare metal, or None when no node names a provider.
// The node a message names is the first by name of those that decide.
func platformOfNodes(nodes []NodeProvider) Platform {
	var decisive, bareMetal *NodeProvider // the first by name of each
	for i := range nodes {
		n := &nodes[i]
		scheme, _, found := strings.Cut(n.ProviderID, "://")
		switch {
		case !found || scheme == "":
		case slices.Contains(bareMetalProviders, scheme):
			bareMetal = firstByName(bareMetal, n)
		default:
			decisive = firstByName(decisive, n)
		}
	}
	if decisive != nil {
		scheme, _, _ := strings.Cut(decisive.ProviderID, "://")
		source := fmt.Sprintf("node %s's provider ID %s", decisive.Name, decisive.ProviderID)
		if cloud, ok := cloudProviders[scheme]; ok {
			return Platform{Type: string(cloud), Source: source}
		}
		return Platform{Type: string(configv1.ExternalPlatformType), Source: source + ", an unknown provider"}
	}
	if bareMetal != nil {
		return Platform{Type: string(configv1.BareMetalPlatformType), Source: fmt.Sprintf("node %s's provider ID %s", bareMetal.Name, bareMetal.ProviderID)}
	}
	return Platform{Type: string(configv1.NonePlatformType), Source: "no node names a cloud provider"}
}

func firstByName(first, n *NodeProvider) *NodeProvider {
	if first == nil || n.Name < first.Name {
		return n
	}
	return first
}

func platformMessage(p Platform, allowed []string) string {
	return fmt.Sprintf("MetalLB is not deployed: the platform is %s (from %s), and the operator deploys MetalLB only on %s. "+
		"To deploy it anyway, start the operator with --platform=BareMetal.", p.Type, p.Source, strings.Join(allowed, ", "))
}
