package metallb

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress"
	"github.com/bmlb/cluster-network-operator/pkg/status"
)

// Plan is everything one reconcile does, worked out from a Snapshot.
type Plan struct {
	// Apply are the objects to write, in order: those that differ from the
	// cluster.
	Apply []*unstructured.Unstructured
	// Adopt are another installation's objects the user lets the module take
	// over: labelled as its own, and rid of owner references, before Apply.
	Adopt []apply.Foreign
	// Held are rendered objects left as they are in the cluster for now.
	Held []Held
	// Withheld are rendered objects kept out of the cluster for now: removed
	// if they are there.
	Withheld []Held
	// Prune are owned objects no longer wanted, in the order to delete them.
	Prune []*unstructured.Unstructured
	// ConversionOff is the BGPPeer CRD, as read, whose conversion webhook is
	// taken away before Apply: see gateConversion.
	ConversionOff *unstructured.Unstructured
	// WatchConfigs has the configuration kinds watched: their CRDs are served.
	WatchConfigs bool
	// Tracking is the rollout tracking to keep on the namespace; nil when it
	// is unchanged.
	Tracking *status.Tracking
	// Statuses are the status writes of the MetalLB objects that do not count.
	Statuses []StatusWrite
	// Notices are Events given once per object and note; OnCreate, Events
	// given only if act creates the object they regard.
	Notices, OnCreate []Event
	// NodeAddress is what the node-address mode serves; nil leaves it as it is.
	NodeAddress *nodeaddress.Scope
	// RequeueAfter is when to look again with no event: when a rollout in
	// flight would turn hung.
	RequeueAfter time.Duration

	opts  Options
	found findings
	// failure is why planning did not finish.
	failure error
}

// Held is a rendered object the plan does not write, and why.
type Held struct {
	Object *unstructured.Unstructured
	Why    string
}

// StatusWrite is a MetalLB object's next status.
type StatusWrite struct {
	Object *v1beta1.MetalLB
	Status *v1beta1.MetalLBStatus
}

// plan works out what to do about the cluster the snapshot shows at now. It
// reads nothing but its arguments.
func plan(s *Snapshot, opts Options, now time.Time) *Plan {
	p := &Plan{opts: opts, found: findings{
		now: now, tuning: s.Tuning, tracking: s.Tracking, elsewhere: s.Configs.elsewhere, clusterOperator: s.ClusterOperator,
		active: len(s.Configs.inNamespace) > 0 || (s.Tuning != nil && !enablesNodeAddress(s.Tuning)),
	}}
	f := &p.found
	f.platform = platformOf(opts.Platform, s.Platform)
	f.allowed = slices.Contains(opts.AllowedPlatforms, f.platform.Type)
	p.Statuses = ignoredStatuses(s.Ignored, opts.Namespace, now)
	if !f.allowed {
		// Nothing is applied, and nothing removed: what runs keeps its addresses.
		p.WatchConfigs = s.Configs.Served
		p.Notices = platformNotices(s, f.platform, opts)
		p.NodeAddress = &nodeaddress.Scope{}
		return p
	}
	settings := p.settings(s, opts.Environment)
	// Unclassed Services are MetalLB's while its controller runs and serves
	// them, the module's or another installation's (standDown).
	metallbServes := (f.active || len(s.Foreign) > 0) && settings.LoadBalancerClass == ""
	p.NodeAddress = new(nodeaddress.ScopeFor(true, settings.NodeAddress, metallbServes, s.Platform.NodeCount))
	desired, err := Render(settings, s.MemberlistKey)
	if err != nil {
		p.failure = fmt.Errorf("rendering: %w", err)
		return p
	}
	others := workloadConflicts(s.Workloads, opts.Namespace)
	if len(s.Foreign) > 0 {
		blockers := slices.Concat(others, foreignConflicts(s.Foreign, s.MemberlistKeys, opts.Namespace))
		if !s.AdoptionAllowed || len(blockers) > 0 {
			p.standDown(s, blockers)
			return p
		}
		p.Adopt = s.Foreign
		p.Notices = adoptionNotices(s.Foreign)
	}
	// Another MetalLB beside the module's: told, and what runs is left as it is.
	f.others = others
	p.Notices = append(p.Notices, conflictNotices(others)...)
	p.deploy(s, settings, desired)
	return p
}

// enablesNodeAddress tells whether the MetalLB object enables the node-address
// mode for unclassed Services: then it asks for that mode, not for MetalLB,
// which would take those Services, and does not deploy MetalLB by itself.
func enablesNodeAddress(tuning *v1beta1.MetalLB) bool {
	na := tuning.Spec.NodeAddress
	return na != nil && na.Mode == v1beta1.NodeAddressEnabled
}

// standDown plans no write: another installation's objects are in the way,
// and the user has not handed them over, or something stops the takeover
// (blockers). Beside another MetalLB operator's CRD, the MetalLB objects are
// that operator's: not even a status is written.
func (p *Plan) standDown(s *Snapshot, blockers []conflict) {
	f := &p.found
	f.foreign, f.blockers, f.takeoverAsked = s.Foreign, blockers, s.AdoptionAllowed
	p.Notices = append(foreignNotices(s.Foreign, blockers, p.opts.Namespace), conflictNotices(blockers)...)
	crd := metallbCRD(s.Foreign)
	if crd == nil {
		return
	}
	f.foreignAPI, p.Statuses = true, nil
	if !s.AdoptionAllowed {
		f.managedBy = managerOf(*crd)
		p.Notices = []Event{managedElsewhereNotice(*crd, f.managedBy, p.opts.Namespace)}
	}
}

// deploy plans MetalLB on a platform that allows it, with no foreign objects
// in the way: the CRDs always, so that users can create MetalLB's objects, and
// the rest when the user asked for MetalLB.
func (p *Plan) deploy(s *Snapshot, settings Settings, desired []*unstructured.Unstructured) {
	want := onlyKinds(desired, namespaceKind.Kind, crdKind.Kind)
	if p.found.active {
		want = p.gateWebhooks(s, settings, desired)
	}
	want = p.gateConversion(s, settings, want)
	if p.found.invalid != nil && !p.found.lastValid {
		// No spec tells what MetalLB should look like: what runs is the best
		// guess, and stays as it is.
		p.Apply = changed(s, onlyKinds(want, namespaceKind.Kind, crdKind.Kind))
		for _, o := range withoutKinds(want, namespaceKind.Kind, crdKind.Kind) {
			p.Held = append(p.Held, Held{o, "the spec is invalid and no valid spec was applied before"})
		}
	} else {
		p.Apply = changed(s, p.holdBehind(s, settings, want))
		// What is held back is still wanted: pruning goes by want.
		p.Prune = p.keepFRRK8sWhileUsed(s, want, prunable(s, want))
	}
	p.WatchConfigs = true
	p.Notices = append(p.Notices, ignoredNotices(s.Configs.elsewhere, p.opts.Namespace)...)
	if p.found.active {
		p.found.mistakes = configMistakes(s.Configs.ofKind(ipAddressPoolKind), s.Advertisements, s.Peers, s.ConfigStates)
		p.Notices = append(p.Notices, conflictNotices(p.found.mistakes)...)
	}
	p.OnCreate = memberlistEvents(s, p.Apply, p.opts.Namespace)
	p.track(s, settings, want)
}

// settings are those of the tuning object, or, when its spec is invalid,
// those of the last valid spec (status.appliedSpec, or the defaults if there
// was none), so that nothing running changes.
func (p *Plan) settings(s *Snapshot, env Environment) Settings {
	f := &p.found
	settings, err := SettingsFor(env, s.Tuning)
	if err == nil {
		err = checkReferences(settings, s.PriorityClasses, s.RuntimeClasses)
	}
	f.invalid, f.specValid = err, err == nil && s.Tuning != nil
	if err != nil {
		settings, f.lastValid = lastValidSettings(env, s.Tuning)
	}
	f.maxUnavailable = settings.MaxUnavailable
	return settings
}

// lastValidSettings returns the settings of the object's status.appliedSpec,
// and whether it holds a valid spec; if not, the defaults.
func lastValidSettings(env Environment, obj *v1beta1.MetalLB) (Settings, bool) {
	if obj != nil && obj.Status.AppliedSpec != nil {
		last := &v1beta1.MetalLB{}
		if json.Unmarshal(obj.Status.AppliedSpec.Raw, &last.Spec) == nil {
			if s, err := SettingsFor(env, last); err == nil {
				return s, true
			}
		}
	}
	s, _ := SettingsFor(env, nil) // the defaults are valid
	return s, false
}

// webhookServers are the Deployments that serve the webhook configurations.
var webhookServers = map[string]string{webhookConfiguration: controllerName, frrK8sWebhookConfiguration: frrK8sStatusCleaner}

// gateWebhooks withholds each webhook configuration until the Deployment that
// serves it (MetalLB's controller, frr-k8s's status cleaner) is first
// available: with failure policy Fail, the configuration would otherwise
// refuse every object it checks. Once applied it stays while its server is
// briefly unavailable (a drain, a rollout): removing it would drop
// validation, and the CA bundle the server wrote.
func (p *Plan) gateWebhooks(s *Snapshot, settings Settings, desired []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range desired {
		server := webhookServers[o.GetName()]
		if o.GetKind() != webhookKind.Kind || available(s, settings.Namespace, server) || s.Owned[apply.KeyOf(o)] != nil {
			out = append(out, o)
			continue
		}
		p.Withheld = append(p.Withheld, Held{o, fmt.Sprintf("Deployment %s, which serves the webhooks, is not available yet", server)})
	}
	return out
}

// changed returns those of objs that differ from what the cluster holds.
func changed(s *Snapshot, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if apply.NeedsWrite(o, s.Owned[apply.KeyOf(o)]) {
			out = append(out, o)
		}
	}
	return out
}

// prunable returns the owned objects not in want, but those never deleted,
// kinds in the reverse of apply order, so that what depends on others goes
// first.
func prunable(s *Snapshot, want []*unstructured.Unstructured) []*unstructured.Unstructured {
	wanted := map[apply.Key]bool{}
	for _, o := range want {
		wanted[apply.KeyOf(o)] = true
	}
	var out []*unstructured.Unstructured
	for _, gvk := range slices.Backward(s.Kinds) {
		var ofKind []*unstructured.Unstructured
		for key, o := range s.Owned {
			if key.GroupKind == gvk.GroupKind() && !wanted[key] && !neverDeleted(o) && o.GetDeletionTimestamp() == nil {
				ofKind = append(ofKind, o)
			}
		}
		slices.SortFunc(ofKind, func(a, b *unstructured.Unstructured) int {
			return strings.Compare(apply.Describe(a), apply.Describe(b))
		})
		out = append(out, ofKind...)
	}
	return out
}

// neverDeleted protects what losing would lose user data or split the
// speakers' memberlist cluster: the CRDs (and with them every MetalLB object),
// the namespace, the memberlist key.
func neverDeleted(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case crdKind.Kind, namespaceKind.Kind:
		return true
	case secretKind.Kind:
		return o.GetName() == memberlistSecret
	}
	return false
}

func onlyKinds(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

func withoutKinds(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if !slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}
