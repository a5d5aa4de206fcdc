package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	maintenance "github.com/bmlb/cluster-network-operator/pkg/network/metallb/maintenance/decide"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress/decide"
)

// MonitoringRetry is how soon a reconcile looks again at monitoring kinds
// whose CRDs exist and that the API server does not serve yet: no event tells
// when it starts to.
const MonitoringRetry = time.Second

// Make works out what to do about the cluster the snapshot shows at now. It
// reads nothing but its arguments.
func Make(s *Snapshot, opts Options, now time.Time) *Plan {
	p := makePlan(s, opts, now)
	p.lookAgainWithin(p.recheck)
	p.lookAgainWithin(p.handoverRecheck)
	if s.MonitoringPending {
		p.lookAgainWithin(MonitoringRetry)
	}
	return p
}

// lookAgainWithin has the reconcile come again within d, with no event, if
// d is positive.
func (p *Plan) lookAgainWithin(d time.Duration) {
	if d > 0 && (p.RequeueAfter == 0 || d < p.RequeueAfter) {
		p.RequeueAfter = d
	}
}

func makePlan(s *Snapshot, opts Options, now time.Time) *Plan {
	p := &Plan{opts: opts, now: now, metallb: s.MetalLB, tracking: s.Tracking, elsewhere: s.Configs.Elsewhere,
		clusterOperator: s.ClusterOperator, Maintenance: &maintenance.Scope{}, maintenanceReport: s.Maintenance,
		configured: len(s.Configs.InNamespace) > 0 || (s.MetalLB != nil && !enablesNodeAddress(s.MetalLB)),
	}
	p.platform = platformOf(opts.Platform, s.Platform)
	p.allowed = slices.Contains(opts.AllowedPlatforms, p.platform.Type)
	p.Statuses = ignoredStatuses(s.Ignored, opts.Namespace, now)
	if needsEveryKind(s, p.configured) && p.allowed {
		return &Plan{ReadEveryKind: true}
	}
	if !p.allowed {
		// Nothing is applied, and nothing removed: what runs keeps its addresses.
		p.WatchConfigs = s.Configs.Served
		p.Notices = platformNotices(s, p.platform, opts)
		p.NodeAddress = &decide.Scope{}
		return p
	}
	env := opts.Environment
	env.Monitoring = s.MonitoringServed
	env.ClusterTLSProfile = s.ClusterTLSProfile
	env.PlatformFRRK8s = s.PlatformFRRK8s
	settings := p.settings(s, env)
	settings.SpeakersMoveOntoFRRK8s = speakersMoveOntoFRRK8s(s, settings)
	// Unclassed Services are MetalLB's while its controller runs and serves
	// them, the module's or another installation's (standDown).
	metallbServes := (p.configured || len(s.Foreign) > 0) && settings.LoadBalancerClass == ""
	p.NodeAddress = new(decide.ScopeFor(true, settings.NodeAddress, metallbServes, s.Platform.NodeCount))
	desired, err := manifests.Render(settings, s.MemberlistKey)
	if err != nil {
		p.failure = fmt.Errorf("rendering: %w", err)
		return p
	}
	others := workloadProblems(s.Workloads, opts.Namespace)
	if len(s.Foreign) > 0 {
		blockers := slices.Concat(others, foreignProblems(s.Foreign, s.MemberlistKeys, opts.Namespace))
		if !s.AdoptionAllowed || len(blockers) > 0 {
			p.standDown(s, blockers)
			return p
		}
		p.Adopt = refsOf(s.Foreign)
		p.Notices = adoptionNotices(s.Foreign)
	}
	// Another MetalLB beside the module's: told, and what runs is left as it is.
	p.others = others
	p.Notices = append(p.Notices, problemNotices(others)...)
	p.deploy(s, settings, desired)
	return p
}

// enablesNodeAddress tells whether the MetalLB object enables the node-address
// mode for unclassed Services: then it asks for that mode, not for MetalLB,
// which would take those Services, and does not deploy MetalLB by itself.
func enablesNodeAddress(obj *v1beta1.MetalLB) bool {
	na := obj.Spec.NodeAddress
	return na != nil && na.Mode == v1beta1.NodeAddressEnabled
}

// standDown plans no write: another installation's objects are in the way,
// and the user has not handed them over, or something stops the takeover
// (blockers). Beside another MetalLB operator's CRD, the MetalLB objects are
// that operator's: not even a status is written.
func (p *Plan) standDown(s *Snapshot, blockers []problem) {
	p.foreign, p.blockers, p.takeoverAsked = s.Foreign, blockers, s.AdoptionAllowed
	p.Notices = append(foreignNotices(s.Foreign, blockers, p.opts.Namespace), problemNotices(blockers)...)
	crd := metallbCRD(s.Foreign)
	if crd == nil {
		return
	}
	p.foreignAPI, p.Statuses = true, nil
	if !s.AdoptionAllowed {
		p.managedBy = managerOf(*crd)
		p.Notices = []Event{managedElsewhereNotice(*crd, p.managedBy, p.opts.Namespace)}
	}
}

// deploy plans MetalLB on a platform that allows it, with no foreign objects
// in the way: the CRDs always, so that users can create MetalLB's objects, and
// the rest when the user asked for MetalLB.
func (p *Plan) deploy(s *Snapshot, settings manifests.Settings, desired []*unstructured.Unstructured) {
	foundation := foundationKinds()
	want := onlyKinds(desired, foundation...)
	if p.configured {
		want = p.gateWebhooks(s, settings, desired)
	}
	want = p.gateConversion(s, settings, want)
	p.rendered = want
	if p.invalid != nil && !p.lastValid {
		// No spec tells what MetalLB should look like: what runs is the best
		// guess, and stays as it is.
		p.Apply = changed(s, onlyKinds(want, foundation...))
		for _, o := range withoutKinds(want, foundation...) {
			p.Held = append(p.Held, Held{o, "the spec is invalid and no valid spec was applied before"})
		}
	} else {
		p.Apply = changed(s, p.holdBehind(s, settings, want))
		// What is held back is still wanted: pruning goes by want.
		p.Prune = refsOfObjects(p.leaveNodeByNode(s, want, p.keepFRRK8sWhileUsed(s, want, prunable(s, want))))
	}
	p.WatchConfigs = true
	p.Notices = append(p.Notices, ignoredNotices(s.Configs.Elsewhere, p.opts.Namespace)...)
	if p.configured {
		p.Maintenance = maintenanceScope(s, p.opts.Environment.OpenShift)
		p.mistakes, p.recheck = configProblems(s, s.Configs.ofKind(manifests.IPAddressPoolKind), p.now)
		p.Notices = append(p.Notices, problemNotices(p.mistakes)...)
	}
	p.OnCreate = memberlistEvents(s, p.Apply, p.opts.Namespace)
	p.track(s, settings, want)
}

// settings are those of the MetalLB object, or, when its spec is invalid,
// those of the last valid spec (status.appliedSpec, or the defaults if there
// was none), so that nothing running changes.
func (p *Plan) settings(s *Snapshot, env manifests.Environment) manifests.Settings {
	settings, err := manifests.SettingsFor(env, s.MetalLB)
	if err == nil {
		err = manifests.CheckReferences(settings, s.PriorityClasses, s.RuntimeClasses)
	}
	p.invalid, p.specValid = err, err == nil && s.MetalLB != nil
	if err != nil {
		settings, p.lastValid = lastValidSettings(env, s.MetalLB)
	}
	p.maxUnavailable = settings.MaxUnavailable
	return settings
}

// lastValidSettings returns the settings of the object's status.appliedSpec,
// and whether it holds a valid spec; if not, the defaults.
func lastValidSettings(env manifests.Environment, obj *v1beta1.MetalLB) (manifests.Settings, bool) {
	if obj != nil && obj.Status.AppliedSpec != nil {
		last := &v1beta1.MetalLB{}
		if json.Unmarshal(obj.Status.AppliedSpec.Raw, &last.Spec) == nil {
			if s, err := manifests.SettingsFor(env, last); err == nil {
				return s, true
			}
		}
	}
	s, _ := manifests.SettingsFor(env, nil) // the defaults are valid
	return s, false
}

// LogValues are what a log line says of the plan.
func (p *Plan) LogValues() []any {
	return []any{"platform", p.platform.Type, "allowed", p.allowed, "configured", p.configured, "foreign", len(p.foreign),
		"applied", len(p.Apply), "pruned", len(p.Prune)}
}
