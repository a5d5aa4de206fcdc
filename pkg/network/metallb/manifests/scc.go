package manifests

// On OpenShift a pod is admitted only under a SecurityContextConstraints
// (SCC) that its service account may use. Each of MetalLB's pods names the
// narrowest SCC that admits it (RequiredSCCAnnotation), and a Role the module
// renders lets its service account, and no other, use that one.
const (
	// RequiredSCCAnnotation names, on a pod, the one SCC it is admitted under.
	RequiredSCCAnnotation = "openshift.io/required-scc"

	// ControllerSCC admits MetalLB's controller, which also serves its
	// webhooks: OpenShift's default for every account, with a user of the
	// namespace's range.
	ControllerSCC = "restricted-v2"
	// SpeakerSCC is the speakers' own: the host's network and ports, NET_RAW
	// and nothing else. It comes with the operator's manifests
	// (manifests/0000_70_metallb_03_scc.yaml), so that the operator needs no
	// write on SCCs, which would let it hand any privilege to anyone.
	SpeakerSCC = "cluster-network-operator-metallb-speaker"
	// FRRK8sSCC admits frr-k8s's DaemonSet, whose FRR needs NET_ADMIN,
	// SYS_ADMIN and a fixed user: only privileged does, as on OpenShift's own
	// frr-k8s.
	FRRK8sSCC = "privileged"
	// FRRK8sStatusCleanerSCC admits frr-k8s's status cleaner: the host's
	// network, no capability.
	FRRK8sStatusCleanerSCC = "hostnetwork-v2"
)

// sccGrant is a Role that lets a service account use SCCs.
type sccGrant struct {
	Account string
	SCCs    []string
}

// sccGrants are the grants the settings need: none where pods are not
// admitted by SCCs.
func sccGrants(s Settings) []sccGrant {
	if !s.SCCAdmission {
		return nil
	}
	grants := []sccGrant{{Account: ControllerName, SCCs: []string{ControllerSCC}}, {Account: SpeakerName, SCCs: []string{SpeakerSCC}}}
	if s.deploysFRRK8s() {
		grants = append(grants, sccGrant{Account: FRRK8sName, SCCs: []string{FRRK8sSCC, FRRK8sStatusCleanerSCC}})
	}
	return grants
}
