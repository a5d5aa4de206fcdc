package manifests

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"io/fs"
	"maps"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/bindata"
	"github.com/bmlb/cluster-network-operator/pkg/render"
)

// data is what the templates of bindata/metallb see. Defaults and merges are
// done here, in Go, so that the templates only place values.
type data struct {
	Namespace         string
	ReleaseVersion    string
	MetricsPort       int
	LogLevel          string
	LoadBalancerClass string
	MaxUnavailable    intstr.IntOrString
	// SpeakerMinReadySeconds is the speaker DaemonSet's, 0 for none.
	SpeakerMinReadySeconds int
	Webhooks               bool
	BGPBackend             string
	FRRK8s                 frrK8sData
	// MemberlistKey is the base64 of the memberlist Secret's key, or empty to
	// render a placeholder (for `render`, which must never print a secret).
	MemberlistKey string
	// MemberlistConfig is the speakers' memberlist timing file (config.json).
	MemberlistConfig string
	Controller       podData
	Speaker          podData
	// NetworkPolicies has the NetworkPolicies rendered; APIServerPorts are
	// the ports their egress rules allow towards the API server.
	NetworkPolicies bool
	APIServerPorts  []int
	// Monitoring has the monitoring objects rendered; AlertRules is the
	// rules file of MetalLB's alerts, whose groups its PrometheusRule holds.
	Monitoring bool
	AlertRules string
	// PlatformMonitoring has the namespace scraped by OpenShift's platform
	// Prometheus.
	PlatformMonitoring bool
	// TLSArgs give every binary that serves TLS (MetalLB's, frr-k8s's) the
	// TLS profile.
	TLSArgs []string
	// ManagementWorkloads marks the namespace and the pods for OpenShift's
	// workload partitioning, with ManagementWorkloadAnnotation on each pod.
	ManagementWorkloads          bool
	ManagementWorkloadAnnotation string
	// SCCAdmission leaves the user and group of the controller to its SCC;
	// SCCGrants are the Roles that let the service accounts use their SCCs.
	SCCAdmission bool
	SCCGrants    []sccGrant
	// MetricsCerts name the metrics endpoints' certificates where the
	// service CA signs them (servingcerts.go).
	MetricsCerts metricsCertsData
	// MetricsServices renders the metrics Services: for the ServiceMonitors,
	// and on OpenShift, where the service CA signs the endpoints' certificates
	// for them. Elsewhere no one reads them, and each selects a pod on every
	// node, whose readiness changes keep the EndpointSlice controller busy
	// (at 2,000 nodes, all through an activation).
	MetricsServices bool
}

// OpenShift's workload partitioning: pods of a namespace annotated
// workload.openshift.io/allowed: management that carry this annotation run on
// the CPUs reserved for the platform where partitioning is on (single-node
// OpenShift), and as they would anywhere else.
const (
	managementWorkloadKey   = "target.workload.openshift.io/management"
	managementWorkloadValue = `{"effect": "PreferredDuringScheduling"}`
)

// apiServerPorts are the ports MetalLB's pods reach the API server on, as
// network policies see them: after the kubernetes Service's 443 is translated
// to an endpoint, 6443 on OpenShift, kubeadm and k3s; 443 where the endpoints
// listen on the Service's own port.
var apiServerPorts = []int{443, 6443}

// frrK8sData is what the frr-k8s templates place beyond the speakers' pod
// settings, which frr-k8s's DaemonSet follows.
type frrK8sData struct {
	// Deploy has the module deploy frr-k8s in MetalLB's namespace; with the
	// frr-k8s backend and not Deploy, the speakers use the platform's, in
	// Namespace.
	Deploy          bool
	Namespace       string
	Image, FRRImage string
	AlwaysBlock     []string
	MinReadySeconds int
	// Annotations and StatusCleanerAnnotations are those of the DaemonSet's
	// and the status cleaner's pods beyond upstream's.
	Annotations, StatusCleanerAnnotations map[string]string
}

// frrK8sMinReadySeconds is how long a new frr-k8s pod must have been ready to
// count as available: its BGP sessions are back some seconds after it is
// ready (benchmarks.md, "The real frr-k8s").
const frrK8sMinReadySeconds = 20

// speakerMinReadySeconds is how long a speaker must have been ready to count
// as available: none, but while the speakers move onto frr-k8s, where the
// node's new session comes up only once frr-k8s has loaded what the new
// speaker wrote, as long as frr-k8s's own pods (plan.speakersMoveOntoFRRK8s).
func speakerMinReadySeconds(s Settings) int {
	if s.SpeakersMoveOntoFRRK8s {
		return frrK8sMinReadySeconds
	}
	return 0
}

type podData struct {
	Image             string
	NodeSelector      map[string]string
	Tolerations       []corev1.Toleration
	Annotations       map[string]string
	PriorityClassName string
	RuntimeClassName  string
	Affinity          *corev1.Affinity
	Resources         *corev1.ResourceRequirements
}

// Upstream's scheduling defaults, which the user's settings add to.
var (
	linuxNodes = map[string]string{"kubernetes.io/os": "linux"}
	// Speakers announce from every node, control-plane nodes included.
	controlPlaneTolerations = []corev1.Toleration{
		{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	scrapeAnnotations = map[string]string{"prometheus.io/port": strconv.Itoa(metricsPort), "prometheus.io/scrape": "true"}
)

// podDefaults are what the operator gives MetalLB's pods, as the CNO gives
// its operands, unless the MetalLB object sets them: a priority class that
// keeps them from being preempted by workloads, and requests (no limits) that
// reserve what they use at rest, so that a busy node does not starve them.
type podDefaults struct {
	tolerations       []corev1.Toleration
	priorityClassName string
	requests          corev1.ResourceList
}

var (
	controllerDefaults = podDefaults{
		priorityClassName: "system-cluster-critical",
		requests:          corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("50Mi")},
	}
	speakerDefaults = podDefaults{
		tolerations:       controlPlaneTolerations,
		priorityClassName: "system-node-critical",
		requests:          corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("50Mi")},
	}
)

func newData(s Settings, memberlistKey string) data {
	memberlistConfig, digest := memberlistFile(s.FailureDetection)
	speaker := newPodData(s.Images.Speaker, s.Speaker, speakerDefaults)
	speaker.Annotations[MemberlistConfigAnnotation] = digest
	controller := newPodData(s.Images.Controller, s.Controller, controllerDefaults)
	if s.OpenShift {
		speaker.Annotations[managementWorkloadKey] = managementWorkloadValue
		controller.Annotations[managementWorkloadKey] = managementWorkloadValue
	}
	frrK8s := frrK8sData{Deploy: s.deploysFRRK8s(), Namespace: s.platformFRRK8sNamespace(),
		Image: s.Images.FRRK8s, FRRImage: s.Images.FRR, AlwaysBlock: s.FRRK8sAlwaysBlock, MinReadySeconds: frrK8sMinReadySeconds}
	if s.SCCAdmission {
		speaker.Annotations[RequiredSCCAnnotation] = SpeakerSCC
		controller.Annotations[RequiredSCCAnnotation] = ControllerSCC
		frrK8s.Annotations = map[string]string{RequiredSCCAnnotation: FRRK8sSCC}
		frrK8s.StatusCleanerAnnotations = map[string]string{RequiredSCCAnnotation: FRRK8sStatusCleanerSCC}
	}
	return data{
		Namespace:                    s.Namespace,
		ReleaseVersion:               s.Images.ReleaseVersion,
		MetricsPort:                  metricsPort,
		LogLevel:                     string(s.LogLevel),
		LoadBalancerClass:            s.LoadBalancerClass,
		MaxUnavailable:               s.MaxUnavailable,
		SpeakerMinReadySeconds:       speakerMinReadySeconds(s),
		Webhooks:                     s.Webhooks,
		BGPBackend:                   string(s.BGPBackend),
		FRRK8s:                       frrK8s,
		MemberlistKey:                memberlistKey,
		MemberlistConfig:             memberlistConfig,
		Controller:                   controller,
		Speaker:                      speaker,
		NetworkPolicies:              s.NetworkPolicies,
		APIServerPorts:               apiServerPorts,
		Monitoring:                   s.Monitoring,
		PlatformMonitoring:           s.Monitoring && s.OpenShift,
		TLSArgs:                      s.TLS.Args(),
		ManagementWorkloads:          s.OpenShift,
		ManagementWorkloadAnnotation: managementWorkloadValue,
		SCCAdmission:                 s.SCCAdmission,
		SCCGrants:                    sccGrants(s),
		MetricsCerts:                 metricsCerts(s),
		MetricsServices:              s.Monitoring || s.OpenShift,
	}
}

func newPodData(image string, c Component, d podDefaults) podData {
	selector := maps.Clone(linuxNodes)
	maps.Copy(selector, c.NodeSelector)
	annotations := maps.Clone(scrapeAnnotations)
	maps.Copy(annotations, c.Annotations)
	pod := podData{
		Image:             image,
		NodeSelector:      selector,
		Tolerations:       append(append([]corev1.Toleration{}, d.tolerations...), c.Tolerations...),
		Annotations:       annotations,
		PriorityClassName: cmp.Or(c.PriorityClassName, d.priorityClassName),
		RuntimeClassName:  c.RuntimeClassName,
		Affinity:          c.Affinity,
		Resources:         c.Resources,
	}
	if pod.Resources == nil {
		pod.Resources = &corev1.ResourceRequirements{Requests: d.requests}
	}
	return pod
}

var templates = sync.OnceValues(func() (*render.Templates, error) {
	return render.Parse(bindata.FS, "metallb")
})

// AlertRulesFile is the rules file of MetalLB's alerts in bindata.FS.
const AlertRulesFile = "alerts/metallb.rules.yaml"

var alertRules = sync.OnceValues(func() ([]byte, error) { return fs.ReadFile(bindata.FS, AlertRulesFile) })

// Render returns MetalLB's objects for the settings, in apply order, each with
// the Ownership labels. memberlistKey is the base64 of the memberlist Secret's
// key (see NewMemberlistKey), or empty for a placeholder.
func Render(s Settings, memberlistKey string) ([]*unstructured.Unstructured, error) {
	t, err := templates()
	if err != nil {
		return nil, err
	}
	rules, err := alertRules()
	if err != nil {
		return nil, err
	}
	d := newData(s, memberlistKey)
	d.AlertRules = string(rules)
	objs, err := t.Render(d)
	if err != nil {
		return nil, err
	}
	setConversion(objs, s.Webhooks, s.Namespace)
	for _, o := range objs {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, Ownership)
		o.SetLabels(l)
	}
	return objs, nil
}

// NewMemberlistKey returns a new key for the speakers' memberlist, base64
// encoded: 128 bytes from crypto/rand, as MetalLB's controller makes it.
func NewMemberlistKey() string {
	key := make([]byte, 128)
	_, _ = rand.Read(key) // crypto/rand.Read never fails on Linux (Go 1.24+ panics instead)
	return base64.StdEncoding.EncodeToString(key)
}
