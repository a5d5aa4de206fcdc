package metallb

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
)

// Reasons of what stops a takeover, or shows a second MetalLB.
const (
	// ReasonTakeoverBlocked: the user asked for a takeover, and a conflict
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
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// memberlistSecretKey is the key of the memberlist Secret that MetalLB's
// speakers read their memberlist key from.
const memberlistSecretKey = "secretkey"

// A conflict is something found beside MetalLB's objects that taking them
// over would make worse: another MetalLB's workloads, which would go on
// beside the module's; a Helm release, which would write back or delete what
// was taken over; a memberlist Secret the module's speakers cannot read.
// Each is told on its object, with what to do.
type conflict struct {
	regarding       client.Object
	reason, message string
}

// metallbComponent tells which of MetalLB's components a workload runs, by
// its labels, or "": upstream's manifests (and the upstream operator) label
// workloads app=metallb and component, its Helm chart with the recommended
// app.kubernetes.io labels.
func metallbComponent(labels map[string]string) string {
	switch {
	case labels["app"] == "metallb":
		return labels["component"]
	case labels["app.kubernetes.io/name"] == "metallb":
		return labels["app.kubernetes.io/component"]
	}
	return ""
}

// workloadConflicts are MetalLB's workloads other than the two the module
// runs, in MetalLB's namespace or not: each is a second MetalLB controller or
// set of speakers, handing out or announcing the same addresses.
func workloadConflicts(workloads []*metav1.PartialObjectMetadata, namespace string) []conflict {
	var out []conflict
	for _, w := range workloads {
		kind, component := w.GetObjectKind().GroupVersionKind().Kind, metallbComponent(w.Labels)
		if w.Namespace == namespace && w.Name == component {
			continue // the module's own, or the one a takeover replaces
		}
		c := conflict{regarding: w, reason: ReasonAnotherMetalLBWorkload}
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

// foreignConflicts are what stops taking over another installation's
// objects, over and above other workloads: a Helm release they belong to,
// and a memberlist Secret without the speakers' key (memberlistKeys are its
// keys, as read).
func foreignConflicts(foreign []apply.Foreign, memberlistKeys []string, namespace string) []conflict {
	out := helmConflicts(foreign, namespace)
	i := slices.IndexFunc(foreign, func(f apply.Foreign) bool {
		return f.Object.GetKind() == secretKind.Kind && f.Object.GetName() == memberlistSecret
	})
	if i >= 0 && memberlistKeys != nil && !slices.Contains(memberlistKeys, memberlistSecretKey) {
		out = append(out, conflict{regarding: foreign[i].Live, reason: ReasonMemberlistKeyMissing,
			message: memberlistKeyMessage(memberlistKeys, namespace)})
	}
	return out
}

// helmConflicts are the Helm releases that foreign objects belong to, one
// conflict per release, on its first object.
func helmConflicts(foreign []apply.Foreign, namespace string) []conflict {
	var releases []string
	byRelease := map[string][]apply.Foreign{}
	for _, f := range foreign {
		if f.Live.Labels[ManagedByLabel] != helmManagedBy {
			continue
		}
		release := f.Live.Annotations[helmReleaseNameAnnotation] + "\x00" + f.Live.Annotations[helmReleaseNamespaceAnnotation]
		if byRelease[release] == nil {
			releases = append(releases, release)
		}
		byRelease[release] = append(byRelease[release], f)
	}
	var out []conflict
	for _, release := range releases {
		objs := byRelease[release]
		out = append(out, conflict{regarding: objs[0].Live, reason: ReasonHelmRelease, message: helmMessage(objs, namespace)})
	}
	return out
}

func helmMessage(objs []apply.Foreign, namespace string) string {
	name, releaseNamespace := objs[0].Live.Annotations[helmReleaseNameAnnotation], objs[0].Live.Annotations[helmReleaseNamespaceAnnotation]
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
		name, len(objs), forget, namespace, strings.Join(refs, " "), ManagedByLabel)
}

// kubectlRef names an object on kubectl's command line, as briefly as it
// takes: the messages that hold such names are also Events' notes, which the
// API server takes up to 1 kB.
func kubectlRef(kind, name string) string {
	if kind == crdKind.Kind {
		return "crd/" + name
	}
	return strings.ToLower(kind) + "/" + name
}

func memberlistKeyMessage(keys []string, namespace string) string {
	has := "it has no key"
	fix := fmt.Sprintf(`kubectl -n %s patch secret %s -p "{\"stringData\":{\"%s\":\"$(openssl rand -base64 96 | tr -d '\n')\"}}"`,
		namespace, memberlistSecret, memberlistSecretKey)
	if len(keys) > 0 {
		has = "its keys: " + strings.Join(keys, ", ")
		fix = fmt.Sprintf(`kubectl -n %s patch secret %s -p "{\"data\":{\"%s\":\"$(kubectl -n %s get secret %s -o jsonpath='{.data.%s}')\"}}"`,
			namespace, memberlistSecret, memberlistSecretKey, namespace, memberlistSecret, keys[0])
	}
	return fmt.Sprintf("Secret %s/%s has no key %s (%s): the speakers this operator runs read their memberlist key from it, and "+
		"do not start without it. A takeover keeps that Secret as it is: add the key, the one your speakers use if they use one, "+
		"so that old and new speakers stay one memberlist cluster while they roll: %s",
		namespace, memberlistSecret, memberlistSecretKey, has, fix)
}

// conflictMessages joins what the conflicts say.
func conflictMessages(conflicts []conflict) string {
	messages := make([]string, len(conflicts))
	for i, c := range conflicts {
		messages[i] = c.message
	}
	return strings.Join(messages, " ")
}

// conflictNotices tell each conflict on its object.
func conflictNotices(conflicts []conflict) []Event {
	events := make([]Event, len(conflicts))
	for i, c := range conflicts {
		events[i] = notice(c.regarding, c.reason, c.message)
	}
	return events
}
