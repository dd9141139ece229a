// Package analysis holds the pure decision logic of Argo Rollouts'
// analysis: judging a measurement by its metric's conditions, a metric's
// phase from its counts and limits, a run's phase from its metrics, when the
// next measurement is due, argument resolution and {{args.x}} substitution,
// and building an AnalysisRun from templates. Nothing here does I/O.
package analysis

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/expr-lang/expr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// EvaluateResult judges one measured value by the metric's conditions, as
// Argo Rollouts does: without conditions every value passes; with only a
// success condition a false one fails; with only a failure condition a false
// one passes; with both, failure wins and neither true is Inconclusive.
func EvaluateResult(metric v1alpha1.Metric, result any) (v1alpha1.AnalysisPhase, error) {
	success, failure := false, false
	var err error
	if metric.SuccessCondition != "" {
		if success, err = EvaluateCondition(metric.SuccessCondition, result); err != nil {
			return v1alpha1.AnalysisPhaseError, err
		}
	}
	if metric.FailureCondition != "" {
		if failure, err = EvaluateCondition(metric.FailureCondition, result); err != nil {
			return v1alpha1.AnalysisPhaseError, err
		}
	}
	switch {
	case metric.SuccessCondition == "" && metric.FailureCondition == "":
		return v1alpha1.AnalysisPhaseSuccessful, nil
	case metric.FailureCondition == "":
		failure = !success
	case metric.SuccessCondition == "":
		success = !failure
	}
	switch {
	case failure:
		return v1alpha1.AnalysisPhaseFailed, nil
	case success:
		return v1alpha1.AnalysisPhaseSuccessful, nil
	default:
		return v1alpha1.AnalysisPhaseInconclusive, nil
	}
}

// EvaluateCondition evaluates an expr-lang expression over result; it must
// yield a boolean.
func EvaluateCondition(condition string, result any) (bool, error) {
	env := map[string]any{
		"result":  result,
		"asInt":   asInt,
		"asFloat": asFloat,
		"isNaN":   math.IsNaN,
		"isInf":   func(f float64) bool { return math.IsInf(f, 0) },
		"isNil":   isNil,
		"default": defaultValue,
	}
	out, err := expr.Eval(condition, env)
	if err != nil {
		return false, fmt.Errorf("evaluating condition %q: %w", condition, err)
	}
	verdict, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("condition %q returned %T, not a boolean", condition, out)
	}
	return verdict, nil
}

func asInt(in any) (int64, error) {
	switch v := in.(type) {
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case float64:
		return int64(v), nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("asInt: %q is not an integer", v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("asInt: cannot convert %T", in)
}

func asFloat(in any) (float64, error) {
	switch v := in.(type) {
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case float64:
		return v, nil
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("asFloat: %q is not a number", v)
		}
		return f, nil
	}
	return 0, fmt.Errorf("asFloat: cannot convert %T", in)
}

// isNil is true for nil and for typed nil pointers, maps and slices, which
// JSON decoding and providers hand over.
func isNil(in any) bool {
	if in == nil {
		return true
	}
	v := reflect.ValueOf(in)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

func defaultValue(in, fallback any) any {
	if isNil(in) {
		return fallback
	}
	return in
}
