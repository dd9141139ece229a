package main

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// healthyRollout is Rollout 0 of the strategy as a controller leaves it
// once its current template is rolled out.
func healthyRollout(t *testing.T, strategy string) *v1alpha1.Rollout {
	t.Helper()
	ro, err := rolloutObject(strategy, 0)
	if err != nil {
		t.Fatal(err)
	}
	hash := rollout.PodTemplateHash(&ro.Spec.Template, nil)
	ro.Status.Phase = v1alpha1.RolloutPhaseHealthy
	ro.Status.CurrentPodHash, ro.Status.StableRS = hash, hash
	ro.Status.AvailableReplicas = replicas
	if strategy == "bluegreen" {
		ro.Status.BlueGreen.ActiveSelector = hash
	}
	return ro
}

func TestRolloutDone(t *testing.T) {
	tests := map[string]struct {
		strategy string
		change   func(ro *v1alpha1.Rollout)
		want     bool
	}{
		"a Healthy canary on its template is done":     {strategy: "canary", change: func(*v1alpha1.Rollout) {}, want: true},
		"a Healthy blue-green on its template is done": {strategy: "bluegreen", change: func(*v1alpha1.Rollout) {}, want: true},
		"a Progressing Rollout is not done": {strategy: "canary", want: false,
			change: func(ro *v1alpha1.Rollout) { ro.Status.Phase = v1alpha1.RolloutPhaseProgressing }},
		"a Rollout whose stable ReplicaSet is the old one is not done": {strategy: "canary", want: false,
			change: func(ro *v1alpha1.Rollout) { ro.Status.StableRS = "old" }},
		"a Rollout with one of two replicas available is not done": {strategy: "canary", want: false,
			change: func(ro *v1alpha1.Rollout) { ro.Status.AvailableReplicas = 1 }},
		"a blue-green whose active Service is on the old revision is not done": {strategy: "bluegreen", want: false,
			change: func(ro *v1alpha1.Rollout) { ro.Status.BlueGreen.ActiveSelector = "old" }},
		"a Rollout still Healthy on the old template right after an update is not done": {strategy: "canary", want: false,
			change: func(ro *v1alpha1.Rollout) { ro.Spec.Template.Spec.Containers[0].Image = imageV2 }},
		"a Rollout no controller has seen is not done": {strategy: "canary", want: false,
			change: func(ro *v1alpha1.Rollout) { ro.Status = v1alpha1.RolloutStatus{} }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := healthyRollout(t, tc.strategy)
			tc.change(ro)
			if got := rolloutDone(ro); got != tc.want {
				t.Errorf("rolloutDone = %v, want %v (status %+v)", got, tc.want, ro.Status)
			}
		})
	}
}

func TestDeploymentDone(t *testing.T) {
	rolledOut := appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: replicas, AvailableReplicas: replicas}
	tests := map[string]struct {
		change func(s *appsv1.DeploymentStatus)
		want   bool
	}{
		"every replica updated and available is done": {change: func(*appsv1.DeploymentStatus) {}, want: true},
		"a generation the controller has not seen is not done": {want: false,
			change: func(s *appsv1.DeploymentStatus) { s.ObservedGeneration = 1 }},
		"one replica still on the old template is not done": {want: false,
			change: func(s *appsv1.DeploymentStatus) { s.UpdatedReplicas = 1 }},
		"an updated replica not yet available is not done": {want: false,
			change: func(s *appsv1.DeploymentStatus) { s.AvailableReplicas = 1 }},
		"an old pod left beside the new ones is not done": {want: false,
			change: func(s *appsv1.DeploymentStatus) { s.Replicas = replicas + 1 }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := deployment(0)
			if err != nil {
				t.Fatal(err)
			}
			d.Generation, d.Status = 2, rolledOut
			tc.change(&d.Status)
			if got := deploymentDone(d); got != tc.want {
				t.Errorf("deploymentDone = %v, want %v (status %+v)", got, tc.want, d.Status)
			}
		})
	}
}
