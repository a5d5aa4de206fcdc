package manifests

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// On OpenShift every endpoint a ServiceMonitor scrapes is verified against the
// service CA, for the name the CA signs: the Service it selects asks the CA
// for a certificate, and the container behind the endpoint's port serves it,
// mounted from the Secret the CA writes. Elsewhere nothing asks for one, and
// the scrape cannot verify.
func TestScrapesVerifiedWhereTheServiceCASigns(t *testing.T) {
	monitored := 0
	for _, sc := range scenarios {
		if !sc.monitoring {
			continue
		}
		objs := sc.render(t)
		for _, sm := range ofKind(objs, "ServiceMonitor") {
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			svc := selectedService(t, objs, sm)
			secret, asks := svc.Annotations[objects.ServingCertSecretAnnotation]
			if asks != sc.openshift {
				t.Errorf("%s: Service %s asks the service CA for a certificate: %t, want %t", sc.name, svc.Name, asks, sc.openshift)
			}
			for _, e := range endpoints {
				e := e.(map[string]any)
				tls, _, _ := unstructured.NestedMap(e, "tlsConfig")
				want := map[string]any{"insecureSkipVerify": true}
				if sc.openshift {
					want = map[string]any{"caFile": ServiceCAFile, "serverName": svc.Name + "." + svc.Namespace + ".svc"}
					assertServes(t, sc.name, objs, svc, e["port"].(string), secret)
				}
				if !maps.Equal(tls, want) {
					t.Errorf("%s: ServiceMonitor %s, port %s: tlsConfig %v, want %v", sc.name, sm.GetName(), e["port"], tls, want)
				}
				monitored++
			}
		}
	}
	if monitored == 0 {
		t.Fatal("no scenario renders a ServiceMonitor")
	}
}

// assertServes checks that the container behind the Service's port mounts the
// Secret and serves the certificate in it.
func assertServes(t *testing.T, scenario string, objs []*unstructured.Unstructured, svc *corev1.Service, port, secret string) {
	t.Helper()
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == port })
	pod := podBehind(t, objs, svc)
	if i < 0 || pod == nil {
		t.Fatalf("%s: no port %s, or no pod, behind Service %s", scenario, port, svc.Name)
	}
	target := svc.Spec.Ports[i].TargetPort
	volume := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == secret })
	for _, c := range pod.Containers {
		if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
			return p.Name == target.StrVal || p.ContainerPort == target.IntVal
		}) {
			continue
		}
		if volume < 0 {
			t.Errorf("%s: the pods behind %s do not mount Secret %s", scenario, svc.Name, secret)
			return
		}
		m := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == pod.Volumes[volume].Name })
		args := strings.Join(c.Args, " ")
		if m < 0 || !strings.Contains(args, "--metrics-cert-dir="+c.VolumeMounts[m].MountPath) &&
			!strings.Contains(args, "--tls-cert-file="+c.VolumeMounts[m].MountPath+"/tls.crt") {
			t.Errorf("%s: container %s behind %s:%s does not serve the certificate of Secret %s: args %s", scenario, c.Name, svc.Name, port, secret, args)
		}
		return
	}
	t.Errorf("%s: no container serves %s:%s", scenario, svc.Name, port)
}

// selectedService is the one Service the ServiceMonitor selects.
func selectedService(t *testing.T, objs []*unstructured.Unstructured, sm *unstructured.Unstructured) *corev1.Service {
	t.Helper()
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	var found []*corev1.Service
	for _, o := range ofKind(objs, "Service") {
		if labels.SelectorFromSet(selector).Matches(labels.Set(o.GetLabels())) {
			svc := &corev1.Service{}
			fromUnstructured(t, o, svc)
			found = append(found, svc)
		}
	}
	if len(found) != 1 {
		t.Fatalf("ServiceMonitor %s selects %d Services, want 1", sm.GetName(), len(found))
	}
	return found[0]
}

// podBehind is the pod template's spec of the workload the Service selects.
func podBehind(t *testing.T, objs []*unstructured.Unstructured, svc *corev1.Service) *corev1.PodSpec {
	t.Helper()
	for _, o := range objs {
		spec, workload := podSpecOf(t, o)
		podLabels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		if workload && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(podLabels)) {
			return &spec
		}
	}
	return nil
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}
