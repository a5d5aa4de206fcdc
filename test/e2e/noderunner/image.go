package noderunner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
)

// Image is what a node pulls for an image reference: files of the node that
// the container sees at paths of its own (the locally built MetalLB binaries,
// shell scripts and the tools they call, FRR's daemons from Debian's package),
// and how its containers run.
type Image struct {
	// Files are the image's own files: path in the container → file on the node.
	Files map[string]string
	// System gives the containers the node's programs and libraries, read-only:
	// /usr with its merged-/usr links (/bin, /sbin, /lib, /lib64), and the
	// node's users, groups and PAM configuration.
	System bool
	// Entrypoint runs when a container names no command (the image's ENTRYPOINT).
	Entrypoint []string
	// Commands replace a container's command (its words joined by spaces) that
	// the node lacks the programs of: an image's own entry point, for one.
	Commands map[string][]string
	// User is the user the image runs as (its USER, as a number): 0, root,
	// when it names none, as MetalLB's images (distroless/static), frr-k8s's
	// (alpine) and FRR's do.
	User int64
}

// systemLinks are the merged-/usr links of a Debian system.
var systemLinks = map[string]string{"/bin": "usr/bin", "/sbin": "usr/sbin", "/lib": "usr/lib", "/lib64": "usr/lib64"}

// systemFiles are the node's files a System image shows, read-only: its
// programs and the links Debian's alternatives choose them by (iptables is
// one), its users, and PAM's configuration (FRR's vtysh asks PAM).
var systemFiles = []string{"/usr", "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/pam.d"}

// argv is what a container of the image runs, as a runtime builds it: its
// command, or the image's entry point when it has none, then its arguments;
// or what replaces them. Command and arguments have their $(VAR) references
// expanded already.
func (im Image) argv(command, args []string) ([]string, error) {
	if len(command) == 0 {
		command = im.Entrypoint
	}
	argv := append(slices.Clone(command), args...)
	if replaced, ok := im.Commands[strings.Join(argv, " ")]; ok {
		return replaced, nil
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command specified")
	}
	return argv, nil
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

// pull finds a container's image by its whole reference, completed as a
// runtime completes it (docker.io/library/ for a bare name, :latest for no
// tag), as a node pulls it: an image no registry has fails to pull.
func (r *Runner) pull(ctr corev1.Container) (Image, error) {
	named, err := reference.ParseNormalizedNamed(ctr.Image)
	if err != nil {
		return Image{}, &pullError{reason: "InvalidImageName", msg: fmt.Sprintf("Failed to apply default image tag %q: %v", ctr.Image, err)}
	}
	ref := reference.TagNameOnly(named).String()
	im, err := r.opts.Pull(ref)
	if err != nil {
		return Image{}, &pullError{reason: "ErrImagePull", msg: fmt.Sprintf("failed to pull and unpack image %q: %v", ref, err)}
	}
	return im, nil
}

// pullError is a pull that failed, with the reason the kubelet gives it.
type pullError struct{ reason, msg string }

func (e *pullError) Error() string { return e.msg }
