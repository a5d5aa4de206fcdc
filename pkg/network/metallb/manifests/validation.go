package manifests

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

var (
	specPath    = field.NewPath("spec")
	speakerPath = specPath.Child("speakerConfig")
)

// The MetalLB CRD's schema and CEL rules are the definition of every check
// they can say (schema.go evaluates them). What is checked here, in Go, is
// what they cannot:
//   - references to other objects: the PriorityClass and RuntimeClass a spec
//     names must exist (CheckReferences);
//   - rules over corev1's Affinity and ResourceRequirements whose lists and
//     strings corev1's schema leaves unbounded, so that a CEL rule over them
//     costs more than the API server allows a CRD (it refuses those rules,
//     "estimated rule cost exceeds budget"): node selector requirements, and
//     resource quantities (checkPodFields).
// Both are the API server's own rules for a Pod, which it would otherwise
// enforce only when the operator writes MetalLB's workloads.

// checkPodFields checks the affinity and resources of both components.
func checkPodFields(spec *v1beta1.MetalLBSpec) field.ErrorList {
	var errs field.ErrorList
	for _, c := range []struct {
		path   *field.Path
		config *v1beta1.Config
	}{{specPath.Child("controllerConfig"), spec.ControllerConfig}, {speakerPath, speakerConfig(spec)}} {
		if c.config != nil {
			errs = append(errs, checkResources(c.config.Resources, c.path.Child("resources"))...)
			errs = append(errs, checkAffinity(c.config.Affinity, c.path.Child("affinity"))...)
		}
	}
	return errs
}

func speakerConfig(spec *v1beta1.MetalLBSpec) *v1beta1.Config {
	if spec.SpeakerConfig == nil {
		return nil
	}
	return &spec.SpeakerConfig.Config
}

// CheckReferences checks that the classes the pods would name exist: without
// them the API server refuses the pods, not the workloads, and a rollout hangs.
func CheckReferences(s Settings, priorityClasses, runtimeClasses sets.Set[string]) error {
	var errs field.ErrorList
	for _, ref := range []struct {
		path   *field.Path
		name   string
		exists sets.Set[string]
	}{
		{specPath.Child("controllerConfig", "priorityClassName"), s.Controller.PriorityClassName, priorityClasses},
		{speakerPath.Child("priorityClassName"), s.Speaker.PriorityClassName, priorityClasses},
		{specPath.Child("controllerConfig", "runtimeClassName"), s.Controller.RuntimeClassName, runtimeClasses},
		{speakerPath.Child("runtimeClassName"), s.Speaker.RuntimeClassName, runtimeClasses},
	} {
		if ref.name != "" && !ref.exists.Has(ref.name) {
			errs = append(errs, field.NotFound(ref.path, ref.name))
		}
	}
	return errs.ToAggregate()
}

func checkResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		list corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for name, q := range list.list {
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(path.Child(list.name).Key(string(name)), q.String(), "must not be negative"))
			}
		}
	}
	for name, req := range r.Requests {
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must not exceed the limit %s", limit.String())))
		}
	}
	return errs
}

// checkAffinity checks the node selector requirements of node affinity; the
// weights of preferred terms are the schema's.
func checkAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var errs field.ErrorList
	p := path.Child("nodeAffinity")
	if req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		for i, term := range req.NodeSelectorTerms {
			errs = append(errs, checkNodeSelectorTerm(term, p.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(i))...)
		}
	}
	for i, pref := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		errs = append(errs, checkNodeSelectorTerm(pref.Preference, p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("preference"))...)
	}
	return errs
}

var nodeSelectorOperators = []string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}

func checkNodeSelectorTerm(term corev1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, req := range term.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		for _, msg := range validation.IsQualifiedName(req.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), req.Key, msg))
		}
		errs = append(errs, checkRequirementValues(req, p)...)
	}
	return errs
}

func checkRequirementValues(req corev1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) == 0 {
			return field.ErrorList{field.Required(p.Child("values"), "must list values when operator is "+string(req.Operator))}
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(req.Values) > 0 {
			return field.ErrorList{field.Forbidden(p.Child("values"), "must be empty when operator is "+string(req.Operator))}
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(req.Values) != 1 {
			return field.ErrorList{field.Required(p.Child("values"), "must hold exactly one integer when operator is "+string(req.Operator))}
		}
		if _, err := strconv.ParseInt(req.Values[0], 10, 64); err != nil {
			return field.ErrorList{field.Invalid(p.Child("values").Index(0), req.Values[0], "must be an integer")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("operator"), req.Operator, nodeSelectorOperators)}
	}
	return nil
}
