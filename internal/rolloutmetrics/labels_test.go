package rolloutmetrics

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func withConditions(conds ...v1alpha1.RolloutCondition) *v1alpha1.Rollout {
	return &v1alpha1.Rollout{Status: v1alpha1.RolloutStatus{Conditions: conds}}
}

func progressing(reason string) v1alpha1.RolloutCondition {
	return v1alpha1.RolloutCondition{Type: v1alpha1.RolloutProgressing, Status: corev1.ConditionTrue, Reason: reason}
}

func TestRolloutPhaseReadsTheConditionsAsArgoRolloutsDoes(t *testing.T) {
	tests := map[string]struct {
		rollout *v1alpha1.Rollout
		want    string
	}{
		"a rollout without conditions is Progressing": {
			rollout: withConditions(), want: PhaseProgressing},
		"a new ReplicaSet available is Completed": {
			rollout: withConditions(progressing("NewReplicaSetAvailable")), want: PhaseCompleted},
		"a paused rollout is Paused": {
			rollout: withConditions(progressing("RolloutPaused")), want: PhasePaused},
		"a missed progress deadline is Timeout": {
			rollout: withConditions(progressing("ProgressDeadlineExceeded")), want: PhaseTimeout},
		"an aborted rollout is Abort": {
			rollout: withConditions(progressing("RolloutAborted")), want: PhaseAbort},
		"a ReplicaSet that could not be created is Error": {
			rollout: withConditions(progressing("ReplicaSetCreateError")), want: PhaseError},
		"a reason with no phase of its own is Progressing": {
			rollout: withConditions(progressing("ReplicaSetUpdated")), want: PhaseProgressing},
		"an invalid spec wins over the Progressing condition": {
			rollout: withConditions(progressing("NewReplicaSetAvailable"),
				v1alpha1.RolloutCondition{Type: v1alpha1.InvalidSpec, Status: corev1.ConditionTrue, Reason: "InvalidSpec"}),
			want: PhaseInvalidSpec},
		"an InvalidSpec condition that is false does not count": {
			rollout: withConditions(progressing("NewReplicaSetAvailable"),
				v1alpha1.RolloutCondition{Type: v1alpha1.InvalidSpec, Status: corev1.ConditionFalse}),
			want: PhaseCompleted},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RolloutPhase(tc.rollout); got != tc.want {
				t.Errorf("RolloutPhase = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStrategyIsNamedAsArgoRolloutsNamesIt(t *testing.T) {
	tests := map[string]struct {
		strategy v1alpha1.RolloutStrategy
		want     string
	}{
		"blue-green is blueGreen": {
			strategy: v1alpha1.RolloutStrategy{BlueGreen: &v1alpha1.BlueGreenStrategy{}}, want: "blueGreen"},
		"canary is canary": {
			strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{}}, want: "canary"},
		"no strategy is none": {want: "none"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := &v1alpha1.Rollout{Spec: v1alpha1.RolloutSpec{Strategy: tc.strategy}}
			if got := Strategy(ro); got != tc.want {
				t.Errorf("Strategy = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMetricTypeNamesTheProvider(t *testing.T) {
	tests := map[string]struct {
		provider v1alpha1.MetricProvider
		want     string
	}{
		"a prometheus metric is Prometheus": {
			provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{}}, want: "Prometheus"},
		"a web metric is Web": {
			provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{}}, want: "Web"},
		"a job metric is Job": {
			provider: v1alpha1.MetricProvider{Job: &v1alpha1.JobMetric{}}, want: "Job"},
		"a plugin metric is RpcPlugin": {
			provider: v1alpha1.MetricProvider{Plugin: map[string]runtime.RawExtension{"acme/metric": {}}}, want: "RpcPlugin"},
		"a metric naming no provider is Unknown Provider": {want: "Unknown Provider"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := MetricType(v1alpha1.Metric{Name: "m", Provider: tc.provider}); got != tc.want {
				t.Errorf("MetricType = %q, want %q", got, tc.want)
			}
		})
	}
}
