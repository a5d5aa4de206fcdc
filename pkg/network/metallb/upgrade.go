package metallb

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// TrackingAnnotation, on MetalLB's namespace, keeps the rollout tracking
// across operator restarts (see status.Tracking).
const TrackingAnnotation = "networkoperator.openshift.io/metallb-rollout"

var (
	deploymentKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	daemonSetKind  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	namespaceKind  = corev1.SchemeGroupVersion.WithKind("Namespace")
)

// holdSpeakers orders an upgrade: while the speaker DaemonSet runs another
// release and the controller, which serves the webhooks, has not finished
// rolling out the new one, the DaemonSet is left as it is. Its own
// RollingUpdate then paces the nodes.
func (r *Reconciler) holdSpeakers(ctx context.Context, want []*unstructured.Unstructured, s Settings) ([]*unstructured.Unstructured, error) {
	speaker, err := r.live(ctx, daemonSetKind, s.Namespace, "speaker")
	if err != nil || speaker == nil || speaker.GetAnnotations()[ReleaseVersionAnnotation] == s.Images.ReleaseVersion {
		return want, err
	}
	controller, err := r.live(ctx, deploymentKind, s.Namespace, "controller")
	if err != nil {
		return nil, err
	}
	if controller != nil {
		if c := status.RolloutOf(controller, ReleaseVersionAnnotation); c.Version == s.Images.ReleaseVersion && c.Done() {
			return want, nil
		}
	}
	return withoutKind(want, "DaemonSet"), nil
}

// rollouts reads the rollouts of the workloads that exist.
func (r *Reconciler) rollouts(ctx context.Context, namespace string) ([]status.Rollout, error) {
	var rollouts []status.Rollout
	for _, w := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{deploymentKind, "controller"}, {daemonSetKind, "speaker"}} {
		o, err := r.live(ctx, w.gvk, namespace, w.name)
		if err != nil {
			return nil, err
		}
		if o != nil {
			rollouts = append(rollouts, status.RolloutOf(o, ReleaseVersionAnnotation))
		}
	}
	return rollouts, nil
}

// live reads an owned object from the cache; nil when it does not exist.
func (r *Reconciler) live(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	o := ownedObject(gvk)
	err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, o)
	if err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return o, nil
}

// loadTracking reads the tracking kept on the namespace.
func (r *Reconciler) loadTracking(ctx context.Context, namespace string) (status.Tracking, error) {
	var t status.Tracking
	ns, err := r.live(ctx, namespaceKind, "", namespace)
	if err != nil || ns == nil {
		return t, err
	}
	if data := ns.GetAnnotations()[TrackingAnnotation]; data != "" {
		_ = json.Unmarshal([]byte(data), &t) // a mangled annotation starts tracking afresh
	}
	return t, nil
}

// saveTracking writes the tracking to the namespace when it changed.
func (r *Reconciler) saveTracking(ctx context.Context, namespace string, prev, next status.Tracking) error {
	if prev == next {
		return nil
	}
	data, err := json.Marshal(next)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{TrackingAnnotation: string(data)}}})
	if err != nil {
		return err
	}
	ns := ownedObject(namespaceKind)
	ns.SetName(namespace)
	return r.client.Patch(ctx, ns, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner+"-status"))
}

// notReadySpeakerNodes names the nodes whose speaker pod is not ready.
func (r *Reconciler) notReadySpeakerNodes(ctx context.Context, namespace string) ([]string, error) {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"app": "metallb", "component": "speaker"}); err != nil {
		return nil, err
	}
	var nodes []string
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && !podReady(&p) && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	return nodes, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func joinOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}
