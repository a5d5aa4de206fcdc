package noderunner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// processUser is who a container's process runs as: its user and group, the
// container's settings over the pod's over the image's (USER), and the pod's
// fsGroup and supplemental groups.
type processUser struct {
	UID, GID int64
	Groups   []int64
}

func userOf(pod *corev1.PodSecurityContext, ctr *corev1.SecurityContext, image Image) processUser {
	u := processUser{UID: image.User}
	if pod != nil {
		u.UID, u.GID = ptrOr(pod.RunAsUser, u.UID), ptrOr(pod.RunAsGroup, u.GID)
		if pod.FSGroup != nil {
			u.Groups = append(u.Groups, *pod.FSGroup)
		}
		u.Groups = append(u.Groups, pod.SupplementalGroups...)
	}
	if ctr != nil {
		u.UID, u.GID = ptrOr(ctr.RunAsUser, u.UID), ptrOr(ctr.RunAsGroup, u.GID)
	}
	return u
}

// verifyRunAsNonRoot refuses, with the kubelet's words, a container that must
// not run as root and would: its runAsUser is 0, or it has none and the
// image's user is root.
func verifyRunAsNonRoot(pod *corev1.Pod, ctr *corev1.Container, image Image) error {
	nonRoot, runAsUser := false, (*int64)(nil)
	if sc := pod.Spec.SecurityContext; sc != nil {
		nonRoot, runAsUser = ptrOr(sc.RunAsNonRoot, false), sc.RunAsUser
	}
	if sc := ctr.SecurityContext; sc != nil {
		nonRoot = ptrOr(sc.RunAsNonRoot, nonRoot)
		if sc.RunAsUser != nil {
			runAsUser = sc.RunAsUser
		}
	}
	switch {
	case !nonRoot:
		return nil
	case runAsUser != nil && *runAsUser == 0:
		return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", podFormat(pod), ctr.Name)
	case runAsUser == nil && image.User == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podFormat(pod), ctr.Name)
	}
	return nil
}

// podFormat names a pod as the kubelet's messages do.
func podFormat(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
