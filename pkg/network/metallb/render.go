package metallb

import (
	"crypto/rand"
	"encoding/base64"
	"maps"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
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
	Webhooks          bool
	// MemberlistKey is the base64 of the memberlist Secret's key, or empty to
	// render a placeholder (for `render`, which must never print a secret).
	MemberlistKey string
	Controller    podData
	Speaker       podData
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

func newData(s Settings, memberlistKey string) data {
	return data{
		Namespace:         s.Namespace,
		ReleaseVersion:    s.Images.ReleaseVersion,
		MetricsPort:       metricsPort,
		LogLevel:          string(s.LogLevel),
		LoadBalancerClass: s.LoadBalancerClass,
		MaxUnavailable:    s.MaxUnavailable,
		Webhooks:          s.Webhooks,
		MemberlistKey:     memberlistKey,
		Controller:        newPodData(s.Images.Controller, s.Controller, nil),
		Speaker:           newPodData(s.Images.Speaker, s.Speaker, controlPlaneTolerations),
	}
}

func newPodData(image string, c Component, tolerations []corev1.Toleration) podData {
	selector := maps.Clone(linuxNodes)
	maps.Copy(selector, c.NodeSelector)
	annotations := maps.Clone(scrapeAnnotations)
	maps.Copy(annotations, c.Annotations)
	return podData{
		Image:             image,
		NodeSelector:      selector,
		Tolerations:       append(append([]corev1.Toleration{}, tolerations...), c.Tolerations...),
		Annotations:       annotations,
		PriorityClassName: c.PriorityClassName,
		RuntimeClassName:  c.RuntimeClassName,
		Affinity:          c.Affinity,
		Resources:         c.Resources,
	}
}

var templates = sync.OnceValues(func() (*render.Templates, error) {
	return render.Parse(bindata.FS, "metallb")
})

// Render returns MetalLB's objects for the settings, in apply order, each with
// the ownership labels. memberlistKey is the base64 of the memberlist Secret's
// key (see NewMemberlistKey), or empty for a placeholder.
func Render(s Settings, memberlistKey string) ([]*unstructured.Unstructured, error) {
	t, err := templates()
	if err != nil {
		return nil, err
	}
	objs, err := t.Render(newData(s, memberlistKey))
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, ownership)
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
