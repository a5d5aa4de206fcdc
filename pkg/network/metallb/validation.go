package metallb

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
)

var (
	logLevels   = []string{"all", "debug", "info", "warn", "error", "none"}
	specPath    = field.NewPath("spec")
	speakerPath = specPath.Child("speakerConfig")
)

// validate checks what the MetalLB CRD's schema cannot, naming fields by their
// path in the MetalLB object so that users know what to change.
func (s *Settings) validate() error {
	var errs field.ErrorList
	if !slices.Contains(logLevels, string(s.LogLevel)) {
		errs = append(errs, field.NotSupported(specPath.Child("logLevel"), s.LogLevel, logLevels))
	}
	if s.BGPBackend != v1beta1.BGPBackendNative {
		errs = append(errs, field.NotSupported(specPath.Child("bgpBackend"), s.BGPBackend, []string{string(v1beta1.BGPBackendNative)}))
	}
	if c := s.LoadBalancerClass; c != "" {
		for _, msg := range validation.IsQualifiedName(c) {
			errs = append(errs, field.Invalid(specPath.Child("loadBalancerClass"), c, msg))
		}
	}
	errs = append(errs, validateMaxUnavailable(s.MaxUnavailable, speakerPath.Child("maxUnavailable"))...)
	errs = append(errs, validateComponent(&s.Speaker, specPath.Child("nodeSelector"), specPath.Child("speakerTolerations"), speakerPath)...)
	errs = append(errs, validateComponent(&s.Controller, specPath.Child("controllerNodeSelector"), specPath.Child("controllerTolerations"), specPath.Child("controllerConfig"))...)
	return errs.ToAggregate()
}

func validateComponent(c *Component, selectorPath, tolerationsPath, configPath *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(c.NodeSelector, selectorPath)
	errs = append(errs, validateTolerations(c.Tolerations, tolerationsPath)...)
	errs = append(errs, validateClassName(c.PriorityClassName, configPath.Child("priorityClassName"))...)
	errs = append(errs, validateClassName(c.RuntimeClassName, configPath.Child("runtimeClassName"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(c.Annotations, configPath.Child("annotations"))...)
	errs = append(errs, validateResources(c.Resources, configPath.Child("resources"))...)
	errs = append(errs, validateAffinity(c.Affinity, configPath.Child("affinity"))...)
	return errs
}

func validateClassName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name != "" {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(path, name, msg))
		}
	}
	return errs
}

// validateMaxUnavailable accepts a count of at least 1 or a percentage from 1%
// to 100%: 0 would stall every rolling update.
func validateMaxUnavailable(v intstr.IntOrString, path *field.Path) field.ErrorList {
	const want = "a number of at least 1, or a percentage from 1% to 100%"
	if v.Type == intstr.Int {
		if v.IntVal < 1 {
			return field.ErrorList{field.Invalid(path, v.IntVal, "must be "+want)}
		}
		return nil
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if !strings.HasSuffix(v.StrVal, "%") || err != nil || pct < 1 || pct > 100 {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must be "+want)}
	}
	return nil
}

// validateTolerations applies the API server's rules for Pod tolerations, which
// it would otherwise only enforce when the DaemonSet's pods are created.
func validateTolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	effects := []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
	for i, t := range tolerations {
		p := path.Index(i)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "must be Exists when key is empty, to tolerate every taint"))
			}
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		if t.Effect != "" && !slices.Contains(effects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, effects))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("tolerationSeconds"), *t.TolerationSeconds, "may only be set when effect is NoExecute"))
		}
	}
	return errs
}

func validateResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
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

// validateAffinity checks the weights of preferred terms (1 to 100) and the
// operators of node selector requirements.
func validateAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := path.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			for i, term := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(term, p.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(i))...)
			}
		}
		for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			pp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(pref.Weight, pp.Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(pref.Preference, pp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		for i, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			errs = append(errs, validateWeight(w.Weight, path.Child("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("weight"))...)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			errs = append(errs, validateWeight(w.Weight, path.Child("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("weight"))...)
		}
	}
	return errs
}

func validateWeight(w int32, path *field.Path) field.ErrorList {
	if w < 1 || w > 100 {
		return field.ErrorList{field.Invalid(path, w, "must be from 1 to 100")}
	}
	return nil
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ops := []string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
	for i, req := range term.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		for _, msg := range validation.IsQualifiedName(req.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), req.Key, msg))
		}
		switch req.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must list values when operator is "+string(req.Operator)))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(req.Values) > 0 {
				errs = append(errs, field.Forbidden(p.Child("values"), "must be empty when operator is "+string(req.Operator)))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(req.Values) != 1 {
				errs = append(errs, field.Required(p.Child("values"), "must hold exactly one integer when operator is "+string(req.Operator)))
			} else if _, err := strconv.ParseInt(req.Values[0], 10, 64); err != nil {
				errs = append(errs, field.Invalid(p.Child("values").Index(0), req.Values[0], "must be an integer"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), req.Operator, ops))
		}
	}
	return errs
}
