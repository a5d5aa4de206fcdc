package noderunner

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// warn records a Warning Event on the pod from its node's kubelet, as a
// kubelet tells what no status field holds (a volume it cannot mount).
func (p *podRun) warn(ctx context.Context, reason, message string) {
	now := metav1.Now()
	event := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: p.pod.Name + ".", Namespace: p.pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.pod.Namespace,
			Name: p.pod.Name, UID: p.pod.UID},
		Reason: reason, Message: message, Type: corev1.EventTypeWarning, Count: 1,
		Source:         corev1.EventSource{Component: "kubelet", Host: p.node},
		FirstTimestamp: now, LastTimestamp: now,
	}
	if _, err := p.r.opts.Client.CoreV1().Events(p.pod.Namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
		p.logf("recording event %s: %v", reason, err)
	}
}
