package rolloutcli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// LintProblem is one error found in a Rollout manifest.
type LintProblem struct {
	// Document is the 1-based index of the YAML document.
	Document int
	// Rollout is the name of the Rollout, "" when it could not be read.
	Rollout string
	Err     error
}

func (p LintProblem) String() string {
	where := fmt.Sprintf("document %d", p.Document)
	if p.Rollout != "" {
		where += fmt.Sprintf(" (rollout %s)", p.Rollout)
	}
	return where + ": " + p.Err.Error()
}

// Lint decodes every YAML document of data and validates the Rollouts
// among them offline: unknown or mistyped fields, and the rules the
// controller checks (selector, strategy, Services, steps). Documents of
// other kinds are skipped. It returns the number of Rollouts checked.
func Lint(data []byte) (int, []LintProblem) {
	dec := utilyaml.NewYAMLReader(bufioReader(data))
	var problems []LintProblem
	rollouts := 0
	for doc := 1; ; doc++ {
		raw, err := dec.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			problems = append(problems, LintProblem{Document: doc, Err: fmt.Errorf("reading YAML: %w", err)})
			break
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			doc--
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			problems = append(problems, LintProblem{Document: doc, Err: fmt.Errorf("parsing YAML: %w", err)})
			continue
		}
		if meta.Kind != "Rollout" {
			continue
		}
		rollouts++
		ro := &v1alpha1.Rollout{}
		if err := yaml.UnmarshalStrict(raw, ro); err != nil {
			var loose v1alpha1.Rollout
			_ = yaml.Unmarshal(raw, &loose)
			problems = append(problems, LintProblem{Document: doc, Rollout: loose.Name, Err: err})
			continue
		}
		for _, e := range ValidateRollout(ro) {
			problems = append(problems, LintProblem{Document: doc, Rollout: ro.Name, Err: e})
		}
	}
	return rollouts, problems
}

// ValidateRollout returns every error of a Rollout's spec, each naming its
// field path. It checks what the controller rejects as InvalidSpec, plus
// the rules of Argo Rollouts' validation a manifest should meet.
func ValidateRollout(ro *v1alpha1.Rollout) field.ErrorList {
	var errs field.ErrorList
	if ro.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), ""))
	}
	spec := &ro.Spec
	path := field.NewPath("spec")
	if spec.Replicas != nil && *spec.Replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), *spec.Replicas, "must be greater than or equal to 0"))
	}
	if spec.WorkloadRef == nil {
		errs = append(errs, validateSelector(path, spec)...)
		if len(spec.Template.Spec.Containers) == 0 {
			errs = append(errs, field.Required(path.Child("template", "spec", "containers"), "a Rollout needs at least one container"))
		}
	}
	if d := spec.ProgressDeadlineSeconds; d != nil && *d <= spec.MinReadySeconds {
		errs = append(errs, field.Invalid(path.Child("progressDeadlineSeconds"), *d, "must be greater than minReadySeconds"))
	}
	strategy := path.Child("strategy")
	bg, canary := spec.Strategy.BlueGreen, spec.Strategy.Canary
	switch {
	case bg == nil && canary == nil:
		errs = append(errs, field.Required(strategy, "one of canary or blueGreen"))
	case bg != nil && canary != nil:
		errs = append(errs, field.Invalid(strategy, "canary and blueGreen", "Multiple Strategies can not be listed"))
	}
	if bg != nil {
		p := strategy.Child("blueGreen")
		if bg.ActiveService == "" {
			errs = append(errs, field.Required(p.Child("activeService"), ""))
		} else if bg.ActiveService == bg.PreviewService {
			errs = append(errs, field.Invalid(p.Child("previewService"), bg.PreviewService, "must not be the active Service"))
		}
	}
	if canary != nil {
		errs = append(errs, validateCanary(strategy.Child("canary"), canary)...)
	}
	return errs
}

func validateSelector(path *field.Path, spec *v1alpha1.RolloutSpec) field.ErrorList {
	p := path.Child("selector")
	if spec.Selector == nil {
		return field.ErrorList{field.Required(p, "Rollout has missing field '.spec.selector'")}
	}
	selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return field.ErrorList{field.Invalid(p, spec.Selector, err.Error())}
	}
	if selector.Empty() {
		return field.ErrorList{field.Invalid(p, spec.Selector, "empty selector is invalid for Rollout")}
	}
	if !selector.Matches(labels.Set(spec.Template.Labels)) {
		return field.ErrorList{field.Invalid(path.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`")}
	}
	return nil
}

func validateCanary(p *field.Path, c *v1alpha1.CanaryStrategy) field.ErrorList {
	var errs field.ErrorList
	if c.CanaryService != "" && c.CanaryService == c.StableService {
		errs = append(errs, field.Invalid(p.Child("stableService"), c.StableService, "must not be the canary Service"))
	}
	if isZero(c.MaxSurge) && isZero(c.MaxUnavailable) && c.MaxSurge != nil && c.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(p.Child("maxUnavailable"), c.MaxUnavailable.String(), "maxSurge and maxUnavailable can not both be zero"))
	}
	for i, step := range c.Steps {
		sp := p.Child("steps").Index(i)
		set := 0
		for _, ok := range []bool{step.SetWeight != nil, step.Pause != nil, step.Experiment != nil, step.Analysis != nil,
			step.SetCanaryScale != nil, step.SetHeaderRoute != nil, step.SetMirrorRoute != nil, step.Plugin != nil} {
			if ok {
				set++
			}
		}
		if set != 1 {
			errs = append(errs, field.Invalid(sp, fmt.Sprintf("%d actions", set), "a step must have exactly one of setWeight, pause, experiment, analysis, setCanaryScale, setHeaderRoute, setMirrorRoute or plugin"))
		}
		if step.SetWeight != nil && (*step.SetWeight < 0 || *step.SetWeight > 100) {
			errs = append(errs, field.Invalid(sp.Child("setWeight"), *step.SetWeight, "must be between 0 and 100"))
		}
		if step.Pause != nil {
			if _, _, err := rollout.PauseDuration(step.Pause); err != nil {
				errs = append(errs, field.Invalid(sp.Child("pause", "duration"), step.Pause.Duration.String(), err.Error()))
			}
		}
	}
	return errs
}

func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return false
	}
	return (v.Type == intstr.Int && v.IntVal == 0) || (v.Type == intstr.String && (v.StrVal == "0" || v.StrVal == "0%"))
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
