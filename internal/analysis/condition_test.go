package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestEvaluateResult(t *testing.T) {
	tests := map[string]struct {
		success, failure string
		result           any
		want             v1alpha1.AnalysisPhase
		wantErr          string
	}{
		"a metric without conditions passes any value":                    {result: 42.0, want: v1alpha1.AnalysisPhaseSuccessful},
		"a true success condition passes":                                 {success: "result > 0.9", result: 0.95, want: v1alpha1.AnalysisPhaseSuccessful},
		"a false success condition without a failure condition fails":     {success: "result > 0.9", result: 0.5, want: v1alpha1.AnalysisPhaseFailed},
		"a true failure condition fails":                                  {failure: "result > 5", result: 6.0, want: v1alpha1.AnalysisPhaseFailed},
		"a false failure condition without a success condition passes":    {failure: "result > 5", result: 1.0, want: v1alpha1.AnalysisPhaseSuccessful},
		"both conditions false is inconclusive":                           {success: "result > 10", failure: "result < 1", result: 5.0, want: v1alpha1.AnalysisPhaseInconclusive},
		"both conditions true fails: failure wins":                        {success: "result > 1", failure: "result > 2", result: 5.0, want: v1alpha1.AnalysisPhaseFailed},
		"only the success condition true passes":                          {success: "result > 1", failure: "result > 10", result: 5.0, want: v1alpha1.AnalysisPhaseSuccessful},
		"an array result can be indexed":                                  {success: "result[0] >= 0.95", result: []float64{0.97, 0.1}, want: v1alpha1.AnalysisPhaseSuccessful},
		"all() over an array result":                                      {success: "all(result, {# < 1})", result: []float64{0.5, 0.9}, want: v1alpha1.AnalysisPhaseSuccessful},
		"asInt parses a string result":                                    {success: "asInt(result) == 3", result: "3", want: v1alpha1.AnalysisPhaseSuccessful},
		"asFloat parses a string result":                                  {success: "asFloat(result) < 0.5", result: "0.25", want: v1alpha1.AnalysisPhaseSuccessful},
		"asInt of a non-number is an error":                               {success: "asInt(result) == 3", result: "three", want: v1alpha1.AnalysisPhaseError, wantErr: "not an integer"},
		"isNaN sees a NaN result":                                         {failure: "isNaN(result)", result: math.NaN(), want: v1alpha1.AnalysisPhaseFailed},
		"isInf sees an infinite result":                                   {failure: "isInf(result)", result: math.Inf(1), want: v1alpha1.AnalysisPhaseFailed},
		"isNil sees a missing result":                                     {failure: "isNil(result)", result: nil, want: v1alpha1.AnalysisPhaseFailed},
		"default replaces a missing result":                               {success: "default(result, 0) == 0", result: nil, want: v1alpha1.AnalysisPhaseSuccessful},
		"default keeps a present result":                                  {success: "default(result, 0) == 7", result: 7.0, want: v1alpha1.AnalysisPhaseSuccessful},
		"a boolean result can be the condition":                           {success: "result == true", result: true, want: v1alpha1.AnalysisPhaseSuccessful},
		"a map result can be read by key":                                 {success: "result.ok == true", result: map[string]any{"ok": true}, want: v1alpha1.AnalysisPhaseSuccessful},
		"a condition that is not a boolean is an error":                   {success: "result + 1", result: 1.0, want: v1alpha1.AnalysisPhaseError, wantErr: "not a boolean"},
		"a condition that does not parse is an error":                     {success: "result >", result: 1.0, want: v1alpha1.AnalysisPhaseError, wantErr: "evaluating condition"},
		"a failure condition that does not parse is an error too":         {success: "true", failure: "result ===", result: 1.0, want: v1alpha1.AnalysisPhaseError, wantErr: "evaluating condition"},
		"comparing an array with a number is an error, not a false value": {success: "result > 1", result: []float64{1, 2}, want: v1alpha1.AnalysisPhaseError, wantErr: "evaluating condition"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			metric := v1alpha1.Metric{Name: "m", SuccessCondition: tc.success, FailureCondition: tc.failure}
			got, err := EvaluateResult(metric, tc.result)
			if got != tc.want {
				t.Errorf("phase = %s, want %s (err %v)", got, tc.want, err)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
