package noderunner

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The capability set of a container, as the kubelet and CRI-O compute it.
func TestContainerCapabilities(t *testing.T) {
	caps := func(add, drop []corev1.Capability) *corev1.SecurityContext {
		return &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: add, Drop: drop}}
	}
	for _, tc := range []struct {
		name string
		sc   *corev1.SecurityContext
		want []string
		err  string
	}{
		{name: "no security context: the runtime's default", want: sorted(runtimeDefaultCapabilities)},
		{name: "the speaker's: NET_RAW alone", sc: caps([]corev1.Capability{"NET_RAW"}, []corev1.Capability{"ALL"}), want: []string{"NET_RAW"}},
		{name: "the controller's: drop all, lower case", sc: caps(nil, []corev1.Capability{"all"}), want: nil},
		{name: "FRR's: added to the default",
			sc:   caps([]corev1.Capability{"NET_ADMIN", "NET_RAW", "SYS_ADMIN", "NET_BIND_SERVICE"}, nil),
			want: sorted(append([]string{"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}, runtimeDefaultCapabilities...))},
		{name: "one dropped from the default", sc: caps(nil, []corev1.Capability{"KILL", "CAP_CHOWN"}),
			want: sorted(slices.DeleteFunc(slices.Clone(runtimeDefaultCapabilities), func(c string) bool { return c == "KILL" || c == "CHOWN" }))},
		{name: "add all, drop one", sc: caps([]corev1.Capability{"ALL"}, []corev1.Capability{"SYS_ADMIN"}),
			want: slices.DeleteFunc(slices.Clone(capabilityNames[:]), func(c string) bool { return c == "SYS_ADMIN" })},
		{name: "privileged: all", sc: &corev1.SecurityContext{Privileged: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			want: capabilityNames[:]},
		{name: "an unknown name", sc: caps([]corev1.Capability{"NET_RAWW"}, nil), err: `unknown capability "CAP_NET_RAWW"`},
	} {
		got, err := containerCapabilities(tc.sc)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: %v, %v; want the error %q", tc.name, got, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(sorted(got), sorted(tc.want))):
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestNoNewPrivileges(t *testing.T) {
	for _, tc := range []struct {
		sc   *corev1.SecurityContext
		want bool
	}{
		{nil, false},
		{&corev1.SecurityContext{}, false},
		{&corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}, false},
		{&corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)}, true},
	} {
		if got := noNewPrivileges(tc.sc); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.sc, got, tc.want)
		}
	}
}

// runAsNonRoot is refused, with the kubelet's words, for a container that
// would run as root: by its runAsUser, or by its image's user.
func TestRunAsNonRoot(t *testing.T) {
	pod := func(podSC *corev1.PodSecurityContext, sc *corev1.SecurityContext) (*corev1.Pod, *corev1.Container) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "controller-1", Namespace: "metallb-system", UID: "u1"},
			Spec: corev1.PodSpec{SecurityContext: podSC, Containers: []corev1.Container{{Name: "controller", SecurityContext: sc}}}}
		return p, &p.Spec.Containers[0]
	}
	root, nobody := Image{}, Image{User: 65534}
	for _, tc := range []struct {
		name  string
		podSC *corev1.PodSecurityContext
		sc    *corev1.SecurityContext
		image Image
		err   string
	}{
		{name: "not asked", image: root},
		{name: "MetalLB's controller: non-root, user 65534", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534)}, image: root},
		{name: "non-root image", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, image: nobody},
		{name: "root image", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, image: root,
			err: `container has runAsNonRoot and image will run as root (pod: "controller-1_metallb-system(u1)", container: controller)`},
		{name: "runAsUser 0 in the container", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534)},
			sc: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}, image: nobody,
			err: `container's runAsUser breaks non-root policy (pod: "controller-1_metallb-system(u1)", container: controller)`},
		{name: "the container allows root", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, sc: &corev1.SecurityContext{RunAsNonRoot: ptr.To(false)}, image: root},
	} {
		p, c := pod(tc.podSC, tc.sc)
		err := verifyRunAsNonRoot(p, c, tc.image)
		if got := errString(err); got != tc.err {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The process's user: the container's over the pod's over the image's.
func TestUserOf(t *testing.T) {
	podSC := &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](65534), FSGroup: ptr.To[int64](65534), SupplementalGroups: []int64{7}}
	for _, tc := range []struct {
		name  string
		pod   *corev1.PodSecurityContext
		ctr   *corev1.SecurityContext
		image Image
		want  processUser
	}{
		{name: "the image's", image: Image{User: 101}, want: processUser{UID: 101}},
		{name: "the pod's", pod: podSC, image: Image{User: 101}, want: processUser{UID: 65534, Groups: []int64{65534, 7}}},
		{name: "the container's", pod: podSC, ctr: &corev1.SecurityContext{RunAsUser: ptr.To[int64](100), RunAsGroup: ptr.To[int64](101)},
			want: processUser{UID: 100, GID: 101, Groups: []int64{65534, 7}}},
	} {
		got := userOf(tc.pod, tc.ctr, tc.image)
		if got.UID != tc.want.UID || got.GID != tc.want.GID || !slices.Equal(got.Groups, tc.want.Groups) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
