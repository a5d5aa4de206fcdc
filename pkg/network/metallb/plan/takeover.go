package plan

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// Reasons of what stops a takeover, or shows a second MetalLB.
const (
	// ReasonTakeoverBlocked: the user asked for a takeover, and a problem
	// stops it.
	ReasonTakeoverBlocked           = "TakeoverBlocked"
	ReasonMetalLBInAnotherNamespace = "MetalLBInAnotherNamespace"
	ReasonAnotherMetalLBWorkload    = "AnotherMetalLBWorkload"
	ReasonHelmRelease               = "HelmRelease"
	ReasonMemberlistKeyMissing      = "MemberlistKeyMissing"
)

// Helm's marks on what it installs: the label Helm's ownership check reads,
// and the annotations that name the release.
const (
	helmManagedBy                  = "Helm"
	HelmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	HelmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// workloadProblems are MetalLB's workloads other than the two the module
// runs, in MetalLB's namespace or not: each is a second MetalLB controller or
// set of speakers, handing out or announcing the same addresses.
func workloadProblems(workloads []*metav1.PartialObjectMetadata, namespace string) []problem {
	var out []problem
	for _, w := range workloads {
		kind, component := w.GetObjectKind().GroupVersionKind().Kind, manifests.ComponentOf(w.Labels)
		if w.Namespace == namespace && w.Name == component {
			continue // the module's own, or the one a takeover replaces
		}
		c := problem{regarding: w, reason: ReasonAnotherMetalLBWorkload}
		deleteIt := fmt.Sprintf("kubectl delete -n %s %s", w.Namespace, kubectlRef(kind, w.Name))
		if w.Namespace != namespace {
			c.reason = ReasonMetalLBInAnotherNamespace
			c.message = fmt.Sprintf("%s %s/%s runs MetalLB's %s outside %s, where this operator runs MetalLB: beside it, two MetalLBs "+
				"would answer for the same addresses. This operator does not move an installation between namespaces. Remove that one "+
				"(with its other workloads, keeping MetalLB's CRDs) once your configuration is in %s, the only namespace MetalLB reads it from: %s",
				kind, w.Namespace, w.Name, component, namespace, namespace, deleteIt)
		} else {
			c.message = fmt.Sprintf("%s %s/%s runs MetalLB's %s under another name than %s, the one this operator runs: the two would "+
				"serve the same addresses. Delete the one not meant to run; the addresses it served go to %s once it is gone: %s",
				kind, w.Namespace, w.Name, component, component, component, deleteIt)
		}
		out = append(out, c)
	}
	return out
}

// foreignProblems are what stops taking over another installation's
// objects, over and above other workloads: a Helm release they belong to,
// and a memberlist Secret without the speakers' key (memberlistKeys are its
// keys, as read).
func foreignProblems(foreign []objects.Foreign, memberlistKeys []string, namespace string) []problem {
	out := helmProblems(foreign, namespace)
	i := slices.IndexFunc(foreign, func(f objects.Foreign) bool {
		return f.Object.GetKind() == objects.Secret.Kind && f.Object.GetName() == manifests.MemberlistSecret
	})
	if i >= 0 && memberlistKeys != nil && !slices.Contains(memberlistKeys, manifests.MemberlistSecretKey) {
		out = append(out, problem{regarding: foreign[i].Live, reason: ReasonMemberlistKeyMissing,
			message: memberlistKeyMessage(memberlistKeys, namespace)})
	}
	return out
}

// helmProblems are the Helm releases that foreign objects belong to, one
// problem per release, on its first object.
func helmProblems(foreign []objects.Foreign, namespace string) []problem {
	var releases []string
	byRelease := map[string][]objects.Foreign{}
	for _, f := range foreign {
		if f.Live.Labels[manifests.ManagedByLabel] != helmManagedBy {
			continue
		}
		release := f.Live.Annotations[HelmReleaseNameAnnotation] + "\x00" + f.Live.Annotations[HelmReleaseNamespaceAnnotation]
		if byRelease[release] == nil {
			releases = append(releases, release)
		}
		byRelease[release] = append(byRelease[release], f)
	}
	var out []problem
	for _, release := range releases {
		objs := byRelease[release]
		out = append(out, problem{regarding: objs[0].Live, reason: ReasonHelmRelease, message: helmMessage(objs, namespace)})
	}
	return out
}

func helmMessage(objs []objects.Foreign, namespace string) string {
	name, releaseNamespace := objs[0].Live.Annotations[HelmReleaseNameAnnotation], objs[0].Live.Annotations[HelmReleaseNamespaceAnnotation]
	refs := make([]string, len(objs))
	for i, f := range objs {
		refs[i] = kubectlRef(f.Object.GetKind(), f.Object.GetName())
	}
	forget := fmt.Sprintf("kubectl delete secret -n %s -l owner=helm,name=%s", releaseNamespace, name)
	if name == "" || releaseNamespace == "" {
		name, forget = "(unnamed)", "delete the Secrets Helm keeps the release in"
	}
	return fmt.Sprintf("Helm's release %s manages %d of the objects this operator would take over: after a takeover, helm upgrade "+
		"would write them back and helm uninstall would delete them, MetalLB's CRDs (and with them every pool) among them. "+
		"Make Helm forget the release, keeping what it deployed, then take Helm's label off them: %s; kubectl label -n %s %s %s-",
		name, len(objs), forget, namespace, strings.Join(refs, " "), manifests.ManagedByLabel)
}

// kubectlRef names an object on kubectl's command line, as briefly as it
// takes: the messages that hold such names are also Events' notes, which the
// API server takes up to 1 kB.
func kubectlRef(kind, name string) string {
	if kind == objects.CustomResourceDefinition.Kind {
		return "crd/" + name
	}
	return strings.ToLower(kind) + "/" + name
}

func memberlistKeyMessage(keys []string, namespace string) string {
	has := "it has no key"
	fix := fmt.Sprintf(`kubectl -n %s patch secret %s -p "{\"stringData\":{\"%s\":\"$(openssl rand -base64 96 | tr -d '\n')\"}}"`,
		namespace, manifests.MemberlistSecret, manifests.MemberlistSecretKey)
	if len(keys) > 0 {
		has = "its keys: " + strings.Join(keys, ", ")
		fix = fmt.Sprintf(`kubectl -n %s patch secret %s -p "{\"data\":{\"%s\":\"$(kubectl -n %s get secret %s -o jsonpath='{.data.%s}')\"}}"`,
			namespace, manifests.MemberlistSecret, manifests.MemberlistSecretKey, namespace, manifests.MemberlistSecret, keys[0])
	}
	return fmt.Sprintf("Secret %s/%s has no key %s (%s): the speakers this operator runs read their memberlist key from it, and "+
		"do not start without it. A takeover keeps that Secret as it is: add the key, the one your speakers use if they use one, "+
		"so that old and new speakers stay one memberlist cluster while they roll: %s",
		namespace, manifests.MemberlistSecret, manifests.MemberlistSecretKey, has, fix)
}

// foreignMessage tells what another installation owns, and how to hand it
// over, once the blockers' own messages are acted on.
func foreignMessage(foreign []objects.Foreign, blockers []problem, namespace string) string {
	names := make([]string, len(foreign))
	for i, f := range foreign {
		names[i] = fmt.Sprintf("%s (written by %s)", objects.Describe(f.Object), joinOr(f.Managers(), "an unknown manager"))
	}
	handOver := "hand MetalLB over to this operator, which then takes those objects over in place (the addresses and the memberlist " +
		"key are kept; MetalLB's pods restart once, the speakers one at a time)"
	if len(blockers) > 0 {
		reasons := make([]string, len(blockers))
		for i, b := range blockers {
			reasons[i] = b.reason
		}
		handOver = fmt.Sprintf("hand MetalLB over to this operator once what stops a takeover is resolved (%s: see those Events)",
			strings.Join(slices.Compact(reasons), ", "))
	}
	return fmt.Sprintf("Another installation of MetalLB owns objects this operator would write: %s. Nothing was changed. "+
		"Remove that installation, or %s: kubectl annotate namespace %s %s=true", strings.Join(names, "; "), handOver, namespace, manifests.AdoptAnnotation)
}
