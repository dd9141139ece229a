package resourceactions

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/internal/opserr"
)

var now = time.Date(2026, 12, 7, 14, 30, 5, 0, time.UTC)

// object reads a manifest written for a test.
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	// Through JSON, as the API server's objects come: numbers are int64.
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

const (
	deployment       = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3\n  template: {metadata: {labels: {app: web}}}\n"
	pausedDeployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {paused: true, replicas: 2}\n"
	statefulSet      = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec: {replicas: 1, template: {spec: {}}}\n"
	daemonSet        = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: shop}\nspec: {template: {spec: {}}}\n"
	cronJob          = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: report, namespace: shop, uid: cj-uid}\nspec:\n  schedule: '0 * * * *'\n  jobTemplate:\n    metadata: {labels: {team: data}, annotations: {owner: ana}}\n    spec: {backoffLimit: 2, template: {spec: {restartPolicy: Never, containers: [{name: r, image: busybox}]}}}\n"
	suspendedCronJob = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: report, namespace: shop}\nspec: {suspend: true, schedule: '0 * * * *', jobTemplate: {spec: {template: {spec: {}}}}}\n"
	configMap        = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\n"
	// A canary Rollout in the middle of an update, paused at a step.
	updatingRollout = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web, namespace: shop, generation: 2}\nspec:\n  strategy: {canary: {steps: [{setWeight: 50}, {pause: {}}]}}\n" +
		"status: {currentPodHash: new, stableRS: old, observedGeneration: '2', currentStepIndex: 1, pauseConditions: [{reason: CanaryPauseStep, startTime: '2026-12-07T14:00:00Z'}]}\n"
	abortedRollout = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web, namespace: shop, generation: 2}\nspec:\n  strategy: {canary: {steps: [{setWeight: 50}]}}\n" +
		"status: {currentPodHash: new, stableRS: old, observedGeneration: '2', abort: true}\n"
	stableRollout = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web, namespace: shop, generation: 1}\nspec:\n  strategy: {blueGreen: {activeService: web}}\n" +
		"status: {currentPodHash: old, stableRS: old, observedGeneration: '1'}\n"
	// A blue-green Rollout updating under a v0.9 controller (observedGeneration a hash).
	oldControllerBlueGreen = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web, namespace: shop, generation: 4}\nspec:\n  strategy: {blueGreen: {activeService: web}}\n" +
		"status: {currentPodHash: new, stableRS: old, observedGeneration: 7f9c8d}\n"
)

// summary is "name" or "name (disabled)" per action, with parameters.
func summary(actions []Action) []string {
	var out []string
	for _, a := range actions {
		s := a.Name
		for _, p := range a.Params {
			s += " " + p.Name + "=" + p.Default
		}
		if a.Disabled {
			s += " (disabled)"
		}
		out = append(out, s)
	}
	return out
}

func TestBuiltinDiscovery(t *testing.T) {
	tests := map[string]struct {
		manifest string
		want     []string
	}{
		"a Deployment may be restarted, paused and scaled from its replicas, not resumed": {deployment,
			[]string{"pause", "restart", "resume (disabled)", "scale replicas=3"}},
		"a paused Deployment may be resumed, not paused": {pausedDeployment,
			[]string{"pause (disabled)", "restart", "resume", "scale replicas=2"}},
		"a StatefulSet may be restarted and scaled": {statefulSet, []string{"restart", "scale replicas=1"}},
		"a DaemonSet may only be restarted":         {daemonSet, []string{"restart"}},
		"a CronJob offers create-job and suspend":   {cronJob, []string{"create-job", "suspend"}},
		"a suspended CronJob offers resume instead": {suspendedCronJob, []string{"create-job", "resume"}},
		"a paused updating Rollout may be aborted, paused, resumed, fully promoted, not retried": {updatingRollout,
			[]string{"abort", "pause", "promote-full", "restart", "resume", "retry (disabled)"}},
		"an aborted Rollout may be retried, not aborted or resumed": {abortedRollout,
			[]string{"abort (disabled)", "pause", "promote-full", "restart", "resume (disabled)", "retry"}},
		"a fully promoted Rollout may only be restarted": {stableRollout,
			[]string{"abort (disabled)", "pause (disabled)", "promote-full (disabled)", "restart", "resume (disabled)", "retry (disabled)"}},
		"a v0.9 controller's blue-green Rollout cannot be promoted fully": {oldControllerBlueGreen,
			[]string{"abort", "pause", "promote-full (disabled)", "restart", "resume (disabled)", "retry (disabled)"}},
		"a ConfigMap has no actions": {configMap, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			actions, err := Catalog{}.List(object(t, tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(actions); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("actions %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuiltinActionResults(t *testing.T) {
	tests := map[string]struct {
		manifest string
		action   string
		params   []Param
		// want are path=value lines of the result; created the created objects'.
		want    map[string]any
		created []map[string]any
	}{
		"restart stamps a Deployment's pod template with the time": {deployment, "restart", nil,
			map[string]any{"spec.template.metadata.annotations." + RestartedAtAnnotation: "2026-12-07T14:30:05Z", "spec.template.metadata.labels.app": "web"}, nil},
		"restart stamps a StatefulSet's pod template": {statefulSet, "restart", nil,
			map[string]any{"spec.template.metadata.annotations." + RestartedAtAnnotation: "2026-12-07T14:30:05Z"}, nil},
		"restart stamps a DaemonSet's pod template": {daemonSet, "restart", nil,
			map[string]any{"spec.template.metadata.annotations." + RestartedAtAnnotation: "2026-12-07T14:30:05Z"}, nil},
		"pause pauses a Deployment":    {deployment, "pause", nil, map[string]any{"spec.paused": true}, nil},
		"resume unpauses a Deployment": {pausedDeployment, "resume", nil, map[string]any{"spec.paused": false}, nil},
		"scale sets a Deployment's replicas": {deployment, "scale", []Param{{Name: "replicas", Value: "5"}},
			map[string]any{"spec.replicas": int64(5)}, nil},
		"scale sets a StatefulSet's replicas, to 0 too": {statefulSet, "scale", []Param{{Name: "replicas", Value: "0"}},
			map[string]any{"spec.replicas": int64(0)}, nil},
		"suspend suspends a CronJob":  {cronJob, "suspend", nil, map[string]any{"spec.suspend": true}, nil},
		"resume unsuspends a CronJob": {suspendedCronJob, "resume", nil, map[string]any{"spec.suspend": false}, nil},
		"create-job makes a Job of the template, owned by the CronJob and marked manual": {cronJob, "create-job", nil,
			map[string]any{"spec.schedule": "0 * * * *"},
			[]map[string]any{{"kind": "Job", "metadata.name": "report-202612071430", "metadata.namespace": "shop",
				"metadata.annotations." + InstantiateAnnotation: "manual", "metadata.annotations.owner": "ana",
				"metadata.labels.team": "data", "spec.backoffLimit": int64(2),
				"metadata.ownerReferences.0.kind": "CronJob", "metadata.ownerReferences.0.uid": "cj-uid",
				"metadata.ownerReferences.0.controller": true, "spec.template.spec.restartPolicy": "Never"}}},
		"a Rollout's abort sets status.abort as the kubectl plugin does": {updatingRollout, "abort", nil,
			map[string]any{"status.abort": true}, nil},
		"a Rollout's retry clears status.abort": {abortedRollout, "retry", nil, map[string]any{"status.abort": false}, nil},
		"a Rollout's resume clears its pause conditions": {updatingRollout, "resume", nil,
			map[string]any{"status.pauseConditions": nil, "status.currentStepIndex": int64(1)}, nil},
		"a Rollout's promote-full asks for a full promotion": {updatingRollout, "promote-full", nil,
			map[string]any{"status.promoteFull": true}, nil},
		"a Rollout's pause sets spec.paused": {updatingRollout, "pause", nil, map[string]any{"spec.paused": true}, nil},
		"a Rollout's restart sets spec.restartAt": {stableRollout, "restart", nil,
			map[string]any{"spec.restartAt": "2026-12-07T14:30:05Z"}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object(t, tc.manifest)
			changes, err := Catalog{}.Plan(obj, tc.action, tc.params, now)
			if err != nil {
				t.Fatal(err)
			}
			got, created, err := Apply(obj, changes)
			if err != nil {
				t.Fatal(err)
			}
			checkFields(t, got, tc.want)
			if len(created) != len(tc.created) {
				t.Fatalf("created %d objects, want %d", len(created), len(tc.created))
			}
			for i, want := range tc.created {
				checkFields(t, created[i], want)
			}
		})
	}
}

// checkFields checks dotted paths (numbers index lists) of obj.
func checkFields(t *testing.T, obj *unstructured.Unstructured, want map[string]any) {
	t.Helper()
	for path, value := range want {
		var cur any = obj.Object
		keys := strings.Split(path, ".")
		// Annotation keys hold dots: join what follows "annotations".
		for i, k := range keys {
			if k == "annotations" && i+1 < len(keys) {
				keys = append(keys[:i+1], strings.Join(keys[i+1:], "."))
				break
			}
		}
		for _, k := range keys {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[k]
			case []any:
				cur = nil
				if k == "0" && len(c) > 0 {
					cur = c[0]
				}
			default:
				cur = nil
			}
		}
		if f, ok := cur.(float64); ok {
			cur = int64(f)
		}
		if !reflect.DeepEqual(cur, value) {
			t.Errorf("%s = %#v, want %#v", path, cur, value)
		}
	}
}

func TestPlanRefusals(t *testing.T) {
	tests := map[string]struct {
		manifest, action string
		params           []Param
		kind             error
		message          string
	}{
		"an action the kind lacks is invalid":            {daemonSet, "scale", nil, opserr.ErrInvalid, `DaemonSet agent has no action "scale" (its actions: restart)`},
		"a disabled action is a conflict":                {deployment, "resume", nil, opserr.ErrConflict, "action resume is disabled for Deployment web"},
		"a retry of a Rollout not aborted is a conflict": {updatingRollout, "retry", nil, opserr.ErrConflict, "disabled"},
		"scale without replicas is invalid":              {deployment, "scale", nil, opserr.ErrInvalid, "scale needs the parameter replicas"},
		"scale to a negative number is invalid": {deployment, "scale", []Param{{Name: "replicas", Value: "-1"}}, opserr.ErrInvalid,
			`replicas "-1" is not a whole number`},
		"scale to words is invalid":              {statefulSet, "scale", []Param{{Name: "replicas", Value: "three"}}, opserr.ErrInvalid, "not a whole number"},
		"a kind without actions has none to run": {configMap, "restart", nil, opserr.ErrInvalid, `ConfigMap cfg has no action "restart"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Catalog{}.Plan(object(t, tc.manifest), tc.action, tc.params, now)
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %v, want %v containing %q", err, tc.kind, tc.message)
			}
		})
	}
}
