package noderunner

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// capabilityNames are Linux's capabilities by number, named as a
// securityContext names them (without CAP_).
var capabilityNames = [...]string{
	unix.CAP_CHOWN: "CHOWN", unix.CAP_DAC_OVERRIDE: "DAC_OVERRIDE", unix.CAP_DAC_READ_SEARCH: "DAC_READ_SEARCH",
	unix.CAP_FOWNER: "FOWNER", unix.CAP_FSETID: "FSETID", unix.CAP_KILL: "KILL", unix.CAP_SETGID: "SETGID",
	unix.CAP_SETUID: "SETUID", unix.CAP_SETPCAP: "SETPCAP", unix.CAP_LINUX_IMMUTABLE: "LINUX_IMMUTABLE",
	unix.CAP_NET_BIND_SERVICE: "NET_BIND_SERVICE", unix.CAP_NET_BROADCAST: "NET_BROADCAST",
	unix.CAP_NET_ADMIN: "NET_ADMIN", unix.CAP_NET_RAW: "NET_RAW", unix.CAP_IPC_LOCK: "IPC_LOCK",
	unix.CAP_IPC_OWNER: "IPC_OWNER", unix.CAP_SYS_MODULE: "SYS_MODULE", unix.CAP_SYS_RAWIO: "SYS_RAWIO",
	unix.CAP_SYS_CHROOT: "SYS_CHROOT", unix.CAP_SYS_PTRACE: "SYS_PTRACE", unix.CAP_SYS_PACCT: "SYS_PACCT",
	unix.CAP_SYS_ADMIN: "SYS_ADMIN", unix.CAP_SYS_BOOT: "SYS_BOOT", unix.CAP_SYS_NICE: "SYS_NICE",
	unix.CAP_SYS_RESOURCE: "SYS_RESOURCE", unix.CAP_SYS_TIME: "SYS_TIME", unix.CAP_SYS_TTY_CONFIG: "SYS_TTY_CONFIG",
	unix.CAP_MKNOD: "MKNOD", unix.CAP_LEASE: "LEASE", unix.CAP_AUDIT_WRITE: "AUDIT_WRITE",
	unix.CAP_AUDIT_CONTROL: "AUDIT_CONTROL", unix.CAP_SETFCAP: "SETFCAP", unix.CAP_MAC_OVERRIDE: "MAC_OVERRIDE",
	unix.CAP_MAC_ADMIN: "MAC_ADMIN", unix.CAP_SYSLOG: "SYSLOG", unix.CAP_WAKE_ALARM: "WAKE_ALARM",
	unix.CAP_BLOCK_SUSPEND: "BLOCK_SUSPEND", unix.CAP_AUDIT_READ: "AUDIT_READ", unix.CAP_PERFMON: "PERFMON",
	unix.CAP_BPF: "BPF", unix.CAP_CHECKPOINT_RESTORE: "CHECKPOINT_RESTORE",
}

// runtimeDefaultCapabilities are what CRI-O, OpenShift's container runtime,
// gives a container that neither adds nor drops any (its
// default_capabilities since 1.18). containerd's default adds NET_RAW, MKNOD,
// AUDIT_WRITE, SYS_CHROOT and SETFCAP: a manifest that runs under CRI-O's runs
// under containerd's.
var runtimeDefaultCapabilities = []string{"CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "SETGID", "SETUID", "SETPCAP", "NET_BIND_SERVICE", "KILL"}

// containerCapabilities is a container's capability set as the kubelet and
// the runtime compute it: every capability when privileged; otherwise the
// runtime's default, then add: [ALL], drop: [ALL], each added one and each
// dropped one, in that order, names compared without case. A root process
// holds the set; any other user holds none of it (no runtime gives ambient
// capabilities), but it bounds what its children can gain either way. An
// unknown name is an error, as the runtime refuses the container.
func containerCapabilities(sc *corev1.SecurityContext) ([]string, error) {
	if sc != nil && ptrOr(sc.Privileged, false) {
		return capabilityNames[:], nil
	}
	set := map[string]bool{}
	for _, c := range runtimeDefaultCapabilities {
		set[c] = true
	}
	var add, drop []corev1.Capability
	if sc != nil && sc.Capabilities != nil {
		add, drop = sc.Capabilities.Add, sc.Capabilities.Drop
	}
	if hasAll(add) {
		for _, c := range capabilityNames {
			set[c] = true
		}
	}
	if hasAll(drop) {
		clear(set)
	}
	for _, list := range []struct {
		caps []corev1.Capability
		keep bool
	}{{add, true}, {drop, false}} {
		for _, c := range list.caps {
			name := strings.TrimPrefix(strings.ToUpper(string(c)), "CAP_")
			if name == "ALL" {
				continue
			}
			if !slices.Contains(capabilityNames[:], name) {
				return nil, fmt.Errorf("unknown capability %q", "CAP_"+name)
			}
			set[name] = list.keep
		}
	}
	var out []string
	for _, c := range capabilityNames {
		if set[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

func hasAll(caps []corev1.Capability) bool {
	return slices.ContainsFunc(caps, func(c corev1.Capability) bool { return strings.EqualFold(string(c), "ALL") })
}

// noNewPrivileges tells whether a container's processes run with
// no_new_privs, as the kubelet decides: only when allowPrivilegeEscalation
// is false.
func noNewPrivileges(sc *corev1.SecurityContext) bool {
	return sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
}

// capabilityNumbers are the numbers of named capabilities.
func capabilityNumbers(names []string) map[int]bool {
	out := map[int]bool{}
	for n, name := range capabilityNames {
		if slices.Contains(names, name) {
			out[n] = true
		}
	}
	return out
}

// capabilitiesOf names the capabilities of a bit mask, as /proc shows them.
func capabilitiesOf(mask uint64) []string {
	var out []string
	for n, name := range capabilityNames {
		if mask&(1<<n) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// processCapabilities reads a process's capability sets from /proc: the
// effective one, and the bounding one its children cannot exceed.
func processCapabilities(pid int) (effective, bounding []string, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, nil, err
	}
	sets := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		key, value, ok := strings.Cut(line, ":\t")
		if ok && (key == "CapEff" || key == "CapBnd") {
			mask, err := strconv.ParseUint(value, 16, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s of process %d: %v", key, pid, err)
			}
			sets[key] = capabilitiesOf(mask)
		}
	}
	return sets["CapEff"], sets["CapBnd"], nil
}

// limitCapabilities takes this process to what a container's process holds
// before it executes the container's binary: the bounding set cut to caps and
// no inheritable capability. It runs as root, before the user changes.
func limitCapabilities(caps []string) error {
	keep := capabilityNumbers(caps)
	last, err := lastCapability()
	if err != nil {
		return err
	}
	for c := 0; c <= last; c++ {
		if keep[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("dropping capability %d from the bounding set: %v", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	return unix.Capset(&hdr, &data[0])
}

// holdCapabilities sets the effective and permitted sets to caps, which a
// root process keeps through exec (the bounding set's) and another user's
// loses there; a capability the runner itself lacks (a privileged
// container's) it cannot give.
func holdCapabilities(caps []string) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var held, data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &held[0]); err != nil {
		return err
	}
	for c := range capabilityNumbers(caps) {
		data[c/32].Permitted |= held[c/32].Permitted & (1 << (c % 32))
	}
	for i := range data {
		data[i].Effective = data[i].Permitted
	}
	return unix.Capset(&hdr, &data[0])
}

// lastCapability is the highest capability this kernel knows.
func lastCapability() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
