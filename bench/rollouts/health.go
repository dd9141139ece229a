package main

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
)

// rolloutDone says a Rollout is Healthy on the revision of its current
// template. It is the one rule for both controllers (skiff writes the status
// Argo Rollouts writes): phase Healthy, the stable ReplicaSet is the current
// one, every replica available and, for blue-green, the active Service on
// it. The current hash must be the template's (Argo Rollouts and skiff hash
// a template alike; takeover_test.go checks it), so that a Rollout still
// Healthy on the old revision right after an update does not count.
func rolloutDone(ro *v1alpha1.Rollout) bool {
	s := ro.Status
	if s.Phase != v1alpha1.RolloutPhaseHealthy || s.CurrentPodHash == "" || s.StableRS != s.CurrentPodHash {
		return false
	}
	if s.AvailableReplicas != ptr.Deref(ro.Spec.Replicas, 1) {
		return false
	}
	if ro.Spec.Strategy.BlueGreen != nil && s.BlueGreen.ActiveSelector != s.CurrentPodHash {
		return false
	}
	return s.CurrentPodHash == rollout.PodTemplateHash(&ro.Spec.Template, s.CollisionCount)
}

// deploymentDone says a Deployment has rolled out its current template:
// the controller saw this generation and every replica is updated and
// available, none of an older ReplicaSet left.
func deploymentDone(d *appsv1.Deployment) bool {
	s, want := d.Status, ptr.Deref(d.Spec.Replicas, 1)
	return s.ObservedGeneration == d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
}
