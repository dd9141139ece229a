package analysis

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// NewRun builds an AnalysisRun from templates as Argo Rollouts does: the
// metrics, dryRun and measurementRetention of all templates together (two
// metrics of one name are an error), the templates' args with values from
// args overriding theirs (args the templates do not declare are dropped),
// and every arg must end with a value or valueFrom.
func NewRun(templates []*v1alpha1.AnalysisTemplate, clusterTemplates []*v1alpha1.ClusterAnalysisTemplate, args []v1alpha1.Argument, name, namespace string, labels map[string]string) (*v1alpha1.AnalysisRun, error) {
	specs := make([]v1alpha1.AnalysisTemplateSpec, 0, len(templates)+len(clusterTemplates))
	for _, t := range templates {
		specs = append(specs, t.Spec)
	}
	for _, t := range clusterTemplates {
		specs = append(specs, t.Spec)
	}
	merged, err := flatten(specs)
	if err != nil {
		return nil, err
	}
	runArgs, err := mergeArgs(args, merged.Args)
	if err != nil {
		return nil, err
	}
	return &v1alpha1.AnalysisRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "AnalysisRun"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: v1alpha1.AnalysisRunSpec{
			Metrics:              merged.Metrics,
			Args:                 runArgs,
			DryRun:               merged.DryRun,
			MeasurementRetention: merged.MeasurementRetention,
		},
	}, nil
}

func flatten(specs []v1alpha1.AnalysisTemplateSpec) (v1alpha1.AnalysisTemplateSpec, error) {
	var out v1alpha1.AnalysisTemplateSpec
	metricNames := map[string]bool{}
	argIndex := map[string]int{}
	dryRunNames := map[string]bool{}
	retentionNames := map[string]bool{}
	for _, spec := range specs {
		spec = *spec.DeepCopy()
		for _, m := range spec.Metrics {
			if metricNames[m.Name] {
				return out, fmt.Errorf("two metrics have the same name %q", m.Name)
			}
			metricNames[m.Name] = true
			out.Metrics = append(out.Metrics, m)
		}
		for _, a := range spec.Args {
			i, seen := argIndex[a.Name]
			if !seen {
				argIndex[a.Name] = len(out.Args)
				out.Args = append(out.Args, a)
				continue
			}
			prev := out.Args[i]
			if a.Value != nil && prev.Value != nil && a.Value.String() != prev.Value.String() {
				return out, fmt.Errorf("argument %q is specified multiple times with different values", a.Name)
			}
			if prev.Value == nil && prev.ValueFrom == nil {
				out.Args[i] = a
			}
		}
		for _, d := range spec.DryRun {
			if dryRunNames[d.MetricName] {
				return out, fmt.Errorf("two dryRun entries name metric %q", d.MetricName)
			}
			dryRunNames[d.MetricName] = true
			out.DryRun = append(out.DryRun, d)
		}
		for _, r := range spec.MeasurementRetention {
			if retentionNames[r.MetricName] {
				return out, fmt.Errorf("two measurementRetention entries name metric %q", r.MetricName)
			}
			retentionNames[r.MetricName] = true
			out.MeasurementRetention = append(out.MeasurementRetention, r)
		}
	}
	return out, nil
}

// mergeArgs gives template args the values of incoming args of the same name.
func mergeArgs(incoming, templateArgs []v1alpha1.Argument) ([]v1alpha1.Argument, error) {
	out := make([]v1alpha1.Argument, len(templateArgs))
	for i, t := range templateArgs {
		out[i] = *t.DeepCopy()
		for _, in := range incoming {
			if in.Name != t.Name || (in.Value == nil && in.ValueFrom == nil) {
				continue
			}
			in := *in.DeepCopy()
			out[i].Value, out[i].ValueFrom = in.Value, in.ValueFrom
		}
		if out[i].Value == nil && out[i].ValueFrom == nil {
			return nil, fmt.Errorf("args.%s was not resolved", t.Name)
		}
	}
	return out, nil
}
