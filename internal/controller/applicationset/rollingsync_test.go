package applicationset

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// rsApp is an app of a RollingSync's table tests.
type rsApp struct {
	name, env string
	sync      v1alpha1.SyncStatusCode
	health    v1alpha1.HealthStatusCode
	phase     v1alpha1.OperationPhase
	started   time.Time
	operation bool
}

func (a rsApp) app() v1alpha1.Application {
	app := v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Labels: map[string]string{"env": a.env}}}
	app.Status.Sync.Status, app.Status.Health.Status = a.sync, a.health
	app.Status.Sync.Revision = "r1"
	if a.phase != "" {
		app.Status.OperationState = &v1alpha1.OperationState{Phase: a.phase, StartedAt: metav1.NewTime(a.started)}
	}
	if a.operation {
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	}
	return app
}

func TestProgress(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	now := metav1.NewTime(t0.Add(time.Minute))
	was := func(app, status string) v1alpha1.ApplicationSetApplicationStatus {
		return v1alpha1.ApplicationSetApplicationStatus{Application: app, Status: status, LastTransitionTime: &metav1.Time{Time: t0}, TargetRevisions: []string{"r1"}}
	}
	const (
		outOfSync = v1alpha1.SyncStatusCodeOutOfSync
		synced    = v1alpha1.SyncStatusCodeSynced
		healthy   = v1alpha1.HealthStatusHealthy
		missing   = v1alpha1.HealthStatusMissing
	)
	inEnv := func(envs ...string) v1alpha1.ApplicationSetRolloutStep {
		return v1alpha1.ApplicationSetRolloutStep{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: envs}}}
	}
	twoSteps := []v1alpha1.ApplicationSetRolloutStep{inEnv("dev"), inEnv("prod")}
	withMax := func(v intstr.IntOrString) []v1alpha1.ApplicationSetRolloutStep {
		s := inEnv("dev")
		s.MaxUpdate = &v
		return []v1alpha1.ApplicationSetRolloutStep{s}
	}
	for name, tc := range map[string]struct {
		steps        []v1alpha1.ApplicationSetRolloutStep
		apps         []rsApp
		prev         []v1alpha1.ApplicationSetApplicationStatus
		want         map[string]string // app → status
		wantSteps    map[string]string
		wantSyncs    []string
		wantRollout  string // RolloutProgressing message
		wantComplete bool
	}{
		"new apps wait, and the first step's go Pending and sync": {
			steps: twoSteps, apps: []rsApp{{name: "d", env: "dev", sync: outOfSync, health: missing}, {name: "p", env: "prod", sync: outOfSync, health: missing}},
			want: map[string]string{"d": statusPending, "p": statusWaiting}, wantSteps: map[string]string{"d": "1", "p": "2"},
			wantSyncs: []string{"d"}, wantRollout: "ApplicationSet is performing rollout of step 1",
		},
		"the second step waits while the first syncs": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{was("d", statusPending), was("p", statusWaiting)},
			apps: []rsApp{{name: "d", env: "dev", sync: outOfSync, health: missing, phase: v1alpha1.OperationRunning, started: t0.Add(time.Second)},
				{name: "p", env: "prod", sync: outOfSync, health: missing}},
			want: map[string]string{"d": statusProgressing, "p": statusWaiting}, wantRollout: "ApplicationSet is performing rollout of step 1",
		},
		"a failed sync of the first step holds the second": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{was("d", statusPending), was("p", statusWaiting)},
			apps: []rsApp{{name: "d", env: "dev", sync: outOfSync, health: missing, phase: v1alpha1.OperationFailed, started: t0.Add(time.Second)},
				{name: "p", env: "prod", sync: outOfSync, health: missing}},
			want: map[string]string{"d": statusPending, "p": statusWaiting}, wantRollout: "ApplicationSet is performing rollout of step 1",
		},
		"a Pending app whose sync failed syncs again at new revisions": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{{Application: "d", Status: statusPending,
				LastTransitionTime: &metav1.Time{Time: t0}, TargetRevisions: []string{"r0"}}},
			apps: []rsApp{{name: "d", env: "dev", sync: outOfSync, health: missing, phase: v1alpha1.OperationFailed, started: t0.Add(time.Second)}},
			want: map[string]string{"d": statusPending}, wantSyncs: []string{"d"},
		},
		"the second step syncs once the first is Healthy": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{was("d", statusProgressing), was("p", statusWaiting)},
			apps: []rsApp{{name: "d", env: "dev", sync: synced, health: healthy, phase: v1alpha1.OperationSucceeded, started: t0.Add(time.Second)},
				{name: "p", env: "prod", sync: outOfSync, health: missing}},
			want: map[string]string{"d": statusHealthy, "p": statusPending}, wantSyncs: []string{"p"}, wantRollout: "ApplicationSet is performing rollout of step 2",
		},
		"a Pending app whose sync succeeded goes Progressing": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{was("d", statusPending)},
			apps: []rsApp{{name: "d", env: "dev", sync: synced, health: v1alpha1.HealthStatusProgressing, phase: v1alpha1.OperationSucceeded, started: t0}},
			want: map[string]string{"d": statusProgressing},
		},
		"an older sync does not count for a Pending app": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{was("d", statusPending)},
			apps: []rsApp{{name: "d", env: "dev", sync: outOfSync, health: healthy, phase: v1alpha1.OperationSucceeded, started: t0.Add(-time.Hour)}},
			want: map[string]string{"d": statusPending}, wantSyncs: []string{"d"},
		},
		"an app with an operation requested is not synced again": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{was("d", statusPending)},
			apps: []rsApp{{name: "d", env: "dev", sync: outOfSync, health: missing, operation: true}},
			want: map[string]string{"d": statusPending},
		},
		"all Healthy completes the rollout": {
			steps: twoSteps, apps: []rsApp{{name: "d", env: "dev", sync: synced, health: healthy}, {name: "p", env: "prod", sync: synced, health: healthy}},
			want: map[string]string{"d": statusHealthy, "p": statusHealthy}, wantComplete: true,
		},
		"a Healthy app with changes waits and, its step free, syncs": {
			steps: twoSteps, prev: []v1alpha1.ApplicationSetApplicationStatus{was("d", statusHealthy)},
			apps: []rsApp{{name: "d", env: "dev", sync: outOfSync, health: healthy}},
			want: map[string]string{"d": statusPending}, wantSyncs: []string{"d"},
		},
		"an app no step selects waits at step -1 and never syncs": {
			steps: twoSteps, apps: []rsApp{{name: "x", env: "qa", sync: outOfSync, health: missing}},
			want: map[string]string{"x": statusWaiting}, wantSteps: map[string]string{"x": "-1"}, wantComplete: true,
		},
		"maxUpdate 1 syncs one app of the step at a time": {
			steps: withMax(intstr.FromInt32(1)), apps: []rsApp{{name: "a", env: "dev", sync: outOfSync}, {name: "b", env: "dev", sync: outOfSync}},
			want: map[string]string{"a": statusPending, "b": statusWaiting}, wantSyncs: []string{"a"},
		},
		"maxUpdate 0 syncs none": {
			steps: withMax(intstr.FromInt32(0)), apps: []rsApp{{name: "a", env: "dev", sync: outOfSync}},
			want: map[string]string{"a": statusWaiting},
		},
		"maxUpdate 10% of two apps is still one": {
			steps: withMax(intstr.FromString("10%")), apps: []rsApp{{name: "a", env: "dev", sync: outOfSync}, {name: "b", env: "dev", sync: outOfSync}},
			want: map[string]string{"a": statusPending, "b": statusWaiting}, wantSyncs: []string{"a"},
		},
		"maxUpdate counts the apps already updating": {
			steps: withMax(intstr.FromInt32(1)), prev: []v1alpha1.ApplicationSetApplicationStatus{was("a", statusProgressing)},
			apps: []rsApp{{name: "a", env: "dev", sync: synced, health: v1alpha1.HealthStatusProgressing}, {name: "b", env: "dev", sync: outOfSync}},
			want: map[string]string{"a": statusProgressing, "b": statusWaiting},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var apps []v1alpha1.Application
			var plan []planned
			for _, a := range tc.apps {
				apps = append(apps, a.app())
				plan = append(plan, planned{app: a.app()})
			}
			got := progress(tc.steps, stepsOf(tc.steps, plan), tc.prev, apps, now)
			for _, st := range got.statuses {
				if want := tc.want[st.Application]; st.Status != want {
					t.Errorf("%s: %s (%s), want %s", st.Application, st.Status, st.Message, want)
				}
				if want, ok := tc.wantSteps[st.Application]; ok && st.Step != want {
					t.Errorf("%s: step %s, want %s", st.Application, st.Step, want)
				}
			}
			if len(got.statuses) != len(tc.apps) {
				t.Errorf("%d statuses for %d apps", len(got.statuses), len(tc.apps))
			}
			if !slices.Equal(got.syncs, tc.wantSyncs) {
				t.Errorf("syncs %v, want %v", got.syncs, tc.wantSyncs)
			}
			if tc.wantRollout != "" && (got.progressing.Message != tc.wantRollout || got.progressing.Status != "True") {
				t.Errorf("RolloutProgressing %+v, want %q", got.progressing, tc.wantRollout)
			}
			if tc.wantComplete && (got.progressing.Status != "False" || got.progressing.Reason != ReasonRolloutComplete) {
				t.Errorf("RolloutProgressing %+v, want complete", got.progressing)
			}
		})
	}
}

func TestSelects(t *testing.T) {
	for name, tc := range map[string]struct {
		expr   v1alpha1.ApplicationMatchExpression
		labels map[string]string
		want   bool
	}{
		"In holds for a listed value":    {v1alpha1.ApplicationMatchExpression{Key: "env", Operator: "In", Values: []string{"a", "b"}}, map[string]string{"env": "b"}, true},
		"In fails without the label":     {v1alpha1.ApplicationMatchExpression{Key: "env", Operator: "In", Values: []string{"a"}}, nil, false},
		"NotIn holds without the label":  {v1alpha1.ApplicationMatchExpression{Key: "env", Operator: "NotIn", Values: []string{"a"}}, nil, true},
		"NotIn fails for a listed value": {v1alpha1.ApplicationMatchExpression{Key: "env", Operator: "NotIn", Values: []string{"a"}}, map[string]string{"env": "a"}, false},
		"another operator never holds":   {v1alpha1.ApplicationMatchExpression{Key: "env", Operator: "Exists"}, map[string]string{"env": "a"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			step := v1alpha1.ApplicationSetRolloutStep{MatchExpressions: []v1alpha1.ApplicationMatchExpression{tc.expr}}
			if got := selects(step, tc.labels); got != tc.want {
				t.Errorf("selects %v, want %v", got, tc.want)
			}
		})
	}
}
