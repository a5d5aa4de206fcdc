package noderunner

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Image is an image the runner makes of files on the node, for containers
// whose programs are more than one binary: shell scripts and the tools they
// call, or FRR's daemons from Debian's package.
type Image struct {
	// Files are the image's own files: path in the container → file on the node.
	Files map[string]string
	// System gives the containers the node's programs and libraries, read-only:
	// /usr with its merged-/usr links (/bin, /sbin, /lib, /lib64), and the
	// node's users, groups and PAM configuration.
	System bool
	// Commands replace a container's command (its words joined by spaces) that
	// the node lacks the programs of: an image's own entry point, for one.
	Commands map[string][]string
}

// systemLinks are the merged-/usr links of a Debian system.
var systemLinks = map[string]string{"/bin": "usr/bin", "/sbin": "usr/sbin", "/lib": "usr/lib", "/lib64": "usr/lib64"}

// systemFiles are the node's files a System image shows, read-only: its
// programs and the links Debian's alternatives choose them by (iptables is
// one), its users, and PAM's configuration (FRR's vtysh asks PAM).
var systemFiles = []string{"/usr", "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/pam.d"}

// command is what a container of the image runs: its command and arguments,
// or what replaces them.
func (im Image) command(c corev1.Container) []string {
	argv := append(append([]string{}, c.Command...), c.Args...)
	if replaced, ok := im.Commands[strings.Join(argv, " ")]; ok {
		return replaced
	}
	return argv
}

// mounts are the image's files, and the node's system if it shows it.
func (im Image) mounts() []mount {
	var out []mount
	for target, source := range im.Files {
		out = append(out, mount{Source: source, Target: target, ReadOnly: true})
	}
	if im.System {
		for _, f := range systemFiles {
			out = append(out, mount{Source: f, Target: f, ReadOnly: true})
		}
	}
	return out
}
