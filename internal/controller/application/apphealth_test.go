package application

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/health"
)

func TestAppHealth(t *testing.T) {
	deployment := func(status v1alpha1.HealthStatusCode, msg string) v1alpha1.ResourceStatus {
		return v1alpha1.ResourceStatus{Group: "apps", Kind: "Deployment", Name: "web", Health: &v1alpha1.HealthStatus{Status: status, Message: msg}}
	}
	child := func(status v1alpha1.HealthStatusCode, msg string) v1alpha1.ResourceStatus {
		return v1alpha1.ResourceStatus{Group: "argoproj.io", Kind: "Application", Name: "child", Health: &v1alpha1.HealthStatus{Status: status, Message: msg}}
	}
	// ignored is a Degraded Job annotated ignore-healthcheck, as
	// resourceStatuses lists it.
	failedJob := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "migrate", "annotations": map[string]any{health.AnnotationIgnoreHealthCheck: "true"}},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "True", "message": "BackoffLimitExceeded"}}}}}
	ignored := v1alpha1.ResourceStatus{Group: "batch", Kind: "Job", Name: "migrate", Health: resourceHealth(health.Judge{}, failedJob)}
	tests := map[string]struct {
		resources []v1alpha1.ResourceStatus
		// childHealthChecked: argocd-cm has a health script for Applications.
		childHealthChecked bool
		wantStatus         v1alpha1.HealthStatusCode
		wantMessage        string
	}{
		"a resource annotated ignore-healthcheck has no health and does not count": {
			resources:  []v1alpha1.ResourceStatus{deployment(v1alpha1.HealthStatusHealthy, ""), ignored},
			wantStatus: v1alpha1.HealthStatusHealthy,
		},
		"a degraded child Application makes its parent degraded once argocd-cm restores the Application health check": {
			resources:          []v1alpha1.ResourceStatus{deployment(v1alpha1.HealthStatusHealthy, ""), child(v1alpha1.HealthStatusDegraded, "child failed")},
			childHealthChecked: true,
			wantStatus:         v1alpha1.HealthStatusDegraded,
			wantMessage:        "child failed",
		},
		"a missing child Application does not count even then": {
			resources:          []v1alpha1.ResourceStatus{deployment(v1alpha1.HealthStatusHealthy, ""), child(v1alpha1.HealthStatusMissing, "")},
			childHealthChecked: true,
			wantStatus:         v1alpha1.HealthStatusHealthy,
		},
		"the worst resource gives the app its health and message": {
			resources:   []v1alpha1.ResourceStatus{deployment(v1alpha1.HealthStatusHealthy, ""), deployment(v1alpha1.HealthStatusDegraded, "deadline exceeded")},
			wantStatus:  v1alpha1.HealthStatusDegraded,
			wantMessage: "deadline exceeded",
		},
		"a degraded child Application does not make its parent degraded": {
			resources:  []v1alpha1.ResourceStatus{deployment(v1alpha1.HealthStatusHealthy, ""), child(v1alpha1.HealthStatusDegraded, "child failed")},
			wantStatus: v1alpha1.HealthStatusHealthy,
		},
		"a parent of child Applications only is healthy whatever they are": {
			resources:  []v1alpha1.ResourceStatus{child(v1alpha1.HealthStatusProgressing, ""), child(v1alpha1.HealthStatusMissing, "")},
			wantStatus: v1alpha1.HealthStatusHealthy,
		},
		"a resource waiting to be pruned does not count": {
			resources: []v1alpha1.ResourceStatus{deployment(v1alpha1.HealthStatusHealthy, ""), func() v1alpha1.ResourceStatus {
				rs := deployment(v1alpha1.HealthStatusDegraded, "old")
				rs.RequiresPruning = true
				return rs
			}()},
			wantStatus: v1alpha1.HealthStatusHealthy,
		},
	}
	now := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := appHealth(v1alpha1.HealthStatus{}, tc.resources, tc.childHealthChecked, now)
			if got.Status != tc.wantStatus || got.Message != tc.wantMessage {
				t.Errorf("appHealth() = %s %q, want %s %q", got.Status, got.Message, tc.wantStatus, tc.wantMessage)
			}
		})
	}
}
