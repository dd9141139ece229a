package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestAssess(t *testing.T) {
	tests := map[string]struct {
		obj  *unstructured.Unstructured
		want Result
	}{
		"a nil object is missing": {
			obj:  nil,
			want: Result{Status: Missing},
		},
		"an object without content is missing": {
			obj:  &unstructured.Unstructured{},
			want: Result{Status: Missing},
		},
		"numbers built by hand as float64 are read like int64": {
			obj: object(map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "generation": 2.0},
				"spec":     map[string]any{"replicas": 3.0},
				"status": map[string]any{
					"observedGeneration": 2.0, "replicas": 3.0,
					"updatedReplicas": 3.0, "availableReplicas": 1.0,
				},
			}),
			want: Result{Status: Progressing, Message: "Waiting for rollout to finish: 1 of 3 updated replicas are available..."},
		},
		"numbers built by hand as int are read like int64": {
			obj: object(map[string]any{
				"apiVersion": "apps/v1", "kind": "ReplicaSet",
				"metadata": map[string]any{"name": "web"},
				"spec":     map[string]any{"replicas": 2},
				"status":   map[string]any{"availableReplicas": 2},
			}),
			want: Result{Status: Healthy},
		},
		"a deployment without spec.replicas wants the default of one": {
			obj: object(map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web"},
				"status":   map[string]any{},
			}),
			want: Result{Status: Progressing, Message: "Waiting for rollout to finish: 0 out of 1 new replicas have been updated..."},
		},
		"a pod without restartPolicy is treated as Always": {
			obj: object(map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "web"},
				"status": map[string]any{
					"phase": "Pending",
					"containerStatuses": []any{map[string]any{
						"name":  "web",
						"state": map[string]any{"waiting": map[string]any{"reason": "ErrImagePull", "message": "not found"}},
					}},
				},
			}),
			want: Result{Status: Degraded, Message: "not found"},
		},
		"a pod waiting while containers are created is not degraded": {
			obj: object(map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "web"},
				"status": map[string]any{
					"phase": "Pending",
					"containerStatuses": []any{map[string]any{
						"name":  "web",
						"state": map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}},
					}},
				},
			}),
			want: Result{Status: Progressing},
		},
		"a rollout observedGeneration stored as a number is compared too": {
			obj: object(map[string]any{
				"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
				"metadata": map[string]any{"name": "web", "generation": int64(3)},
				"status":   map[string]any{"observedGeneration": int64(2), "phase": "Healthy"},
			}),
			want: Result{Status: Progressing, Message: "Waiting for rollout spec update to be observed"},
		},
		"a rollout observedGeneration ahead of the generation counts as observed": {
			obj: object(map[string]any{
				"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
				"metadata": map[string]any{"name": "web", "generation": int64(3)},
				"status":   map[string]any{"observedGeneration": "1234", "phase": "Healthy"},
			}),
			want: Result{Status: Healthy},
		},
		"a rollout with an unrecognised phase is unknown": {
			obj: object(map[string]any{
				"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
				"metadata": map[string]any{"name": "web", "generation": int64(1)},
				"status":   map[string]any{"observedGeneration": "1", "phase": "Sideways", "message": "?"},
			}),
			want: Result{Status: Unknown, Message: "?"},
		},
		"a v1 autoscaler with a malformed conditions annotation is unknown": {
			obj: object(map[string]any{
				"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
				"metadata": map[string]any{
					"name":        "web",
					"annotations": map[string]any{hpaConditionsAnnotation: "{not json"},
				},
			}),
			want: Result{Status: Unknown, Message: "cannot read autoscaling.alpha.kubernetes.io/conditions annotation: invalid character 'n' looking for beginning of object key string"},
		},
		"a kind in a group with rules but without one of its own is judged generically": {
			obj: object(map[string]any{
				"apiVersion": "apps/v1", "kind": "ControllerRevision",
				"metadata": map[string]any{"name": "web-1"},
				"revision": int64(1),
			}),
			want: Result{Status: Healthy},
		},
		"a malformed conditions list is skipped rather than trusted": {
			obj: object(map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w"},
				"status":   map[string]any{"conditions": []any{"Ready", map[string]any{"type": "Ready", "status": "False"}}},
			}),
			want: Result{Status: Degraded},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Assess(tc.obj); got != tc.want {
				t.Errorf("Assess() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestIsWorse(t *testing.T) {
	tests := map[string]struct {
		current, candidate v1alpha1.HealthStatusCode
		want               bool
	}{
		"suspended is worse than healthy":                  {current: Healthy, candidate: Suspended, want: true},
		"progressing is worse than suspended":              {current: Suspended, candidate: Progressing, want: true},
		"missing is worse than progressing":                {current: Progressing, candidate: Missing, want: true},
		"degraded is worse than missing":                   {current: Missing, candidate: Degraded, want: true},
		"unknown is worse than degraded":                   {current: Degraded, candidate: Unknown, want: true},
		"healthy is not worse than degraded":               {current: Degraded, candidate: Healthy, want: false},
		"a status is not worse than itself":                {current: Progressing, candidate: Progressing, want: false},
		"an unrecognised status ranks as unknown":          {current: Degraded, candidate: "Sideways", want: true},
		"an unrecognised status is not worse than unknown": {current: Unknown, candidate: "Sideways", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsWorse(tc.current, tc.candidate); got != tc.want {
				t.Errorf("IsWorse(%s, %s) = %v, want %v", tc.current, tc.candidate, got, tc.want)
			}
		})
	}
}

func TestWorst(t *testing.T) {
	tests := map[string]struct {
		results []Result
		want    Result
	}{
		"no results is healthy": {
			want: Result{Status: Healthy},
		},
		"one result is itself": {
			results: []Result{{Status: Progressing, Message: "a"}},
			want:    Result{Status: Progressing, Message: "a"},
		},
		"the worst status wins with its message": {
			results: []Result{
				{Status: Healthy},
				{Status: Degraded, Message: "broken"},
				{Status: Progressing, Message: "waiting"},
				{Status: Suspended},
			},
			want: Result{Status: Degraded, Message: "broken"},
		},
		"among equals the first wins": {
			results: []Result{
				{Status: Progressing, Message: "first"},
				{Status: Progressing, Message: "second"},
			},
			want: Result{Status: Progressing, Message: "first"},
		},
		"missing outranks progressing but not degraded": {
			results: []Result{{Status: Progressing}, {Status: Missing}},
			want:    Result{Status: Missing},
		},
		"unknown outranks everything": {
			results: []Result{{Status: Degraded}, {Status: Unknown, Message: "?"}, {Status: Missing}},
			want:    Result{Status: Unknown, Message: "?"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Worst(tc.results...); got != tc.want {
				t.Errorf("Worst() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func object(content map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: content}
}

func TestRollsUp(t *testing.T) {
	tests := map[string]struct {
		group, kind string
		status      v1alpha1.HealthStatusCode
		scripted    bool
		want        bool
	}{
		"a Deployment counts towards its app's health":           {group: "apps", kind: "Deployment", status: Degraded, want: true},
		"a Rollout counts towards its app's health":              {group: "argoproj.io", kind: "Rollout", status: Degraded, want: true},
		"a child Application does not (app of apps)":             {group: "argoproj.io", kind: "Application", status: Degraded, want: false},
		"an Application kind of another group counts as usual":   {group: "example.com", kind: "Application", status: Degraded, want: true},
		"an ApplicationSet counts, as Argo CD judges it as well": {group: "argoproj.io", kind: "ApplicationSet", status: Degraded, want: true},
		"a child Application counts once argocd-cm restores its health check": {
			group: "argoproj.io", kind: "Application", status: Degraded, scripted: true, want: true},
		"a Missing child Application does not count even then": {
			group: "argoproj.io", kind: "Application", status: Missing, scripted: true, want: false},
		"an Unknown child Application does not count even then": {
			group: "argoproj.io", kind: "Application", status: Unknown, scripted: true, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RollsUp(tc.group, tc.kind, tc.status, tc.scripted); got != tc.want {
				t.Errorf("RollsUp(%q, %q, %s, %v) = %v, want %v", tc.group, tc.kind, tc.status, tc.scripted, got, tc.want)
			}
		})
	}
}

func TestAwaited(t *testing.T) {
	obj := func(apiVersion, kind string, annotations map[string]any) *unstructured.Unstructured {
		return object(map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "x", "annotations": annotations}})
	}
	ignored := map[string]any{AnnotationIgnoreHealthCheck: "true"}
	tests := map[string]struct {
		obj      *unstructured.Unstructured
		scripted bool
		want     bool
	}{
		"a Deployment holds its wave":                        {obj: obj("apps/v1", "Deployment", nil), want: true},
		"a Deployment annotated ignore-healthcheck does not": {obj: obj("apps/v1", "Deployment", ignored), want: false},
		"ignore-healthcheck other than true is not the annotation": {
			obj: obj("apps/v1", "Deployment", map[string]any{AnnotationIgnoreHealthCheck: "false"}), want: true},
		"a child Application does not, as in Argo CD since v1.8": {obj: obj("argoproj.io/v1alpha1", "Application", nil), want: false},
		"a child Application does once argocd-cm restores its health check": {
			obj: obj("argoproj.io/v1alpha1", "Application", nil), scripted: true, want: true},
		"an annotated child Application does not even then": {
			obj: obj("argoproj.io/v1alpha1", "Application", ignored), scripted: true, want: false},
		"a health script for another kind holds its wave as before": {
			obj: obj("example.com/v1", "Gate", nil), scripted: true, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Awaited(tc.obj, tc.scripted); got != tc.want {
				t.Errorf("Awaited = %v, want %v", got, tc.want)
			}
			j := Judge{Scripted: func(gk schema.GroupKind) bool { return tc.scripted && gk == tc.obj.GroupVersionKind().GroupKind() }}
			if got := j.Awaited(tc.obj); got != tc.want {
				t.Errorf("Judge.Awaited = %v, want %v", got, tc.want)
			}
		})
	}
}
