package crds_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/discovery"

	"github.com/skiffcd/skiff/internal/crds"
)

// The API server must serve every kind under the names Argo CD and Argo
// Rollouts users type: kubectl get app, appset, ro, at, cat, ar.
func TestInstallServesArgoKindsUnderTheirShortNames(t *testing.T) {
	installed(t)
	// A second install (every `skiff server --install-crds` start) must succeed too.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cluster.Config, time.Minute); err != nil {
		t.Fatalf("installing again: %v", err)
	}

	disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := disc.ServerResourcesForGroupVersion("argoproj.io/v1alpha1")
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	type served struct {
		kind       string
		namespaced bool
		shortNames []string
	}
	got := map[string]served{}
	for _, r := range list.APIResources {
		got[r.Name] = served{r.Kind, r.Namespaced, r.ShortNames}
	}
	tests := map[string]struct {
		resource   string
		want       served
		subsources []string
	}{
		"Application is namespaced with app and apps": {
			resource: "applications", want: served{"Application", true, []string{"app", "apps"}}},
		"AppProject is namespaced with appproj and appprojs": {
			resource: "appprojects", want: served{"AppProject", true, []string{"appproj", "appprojs"}}},
		"Rollout has ro and status and scale subresources": {
			resource: "rollouts", want: served{"Rollout", true, []string{"ro"}},
			subsources: []string{"rollouts/status", "rollouts/scale"}},
		"AnalysisTemplate has at": {
			resource: "analysistemplates", want: served{"AnalysisTemplate", true, []string{"at"}}},
		"ClusterAnalysisTemplate is cluster scoped with cat": {
			resource: "clusteranalysistemplates", want: served{"ClusterAnalysisTemplate", false, []string{"cat"}}},
		"ApplicationSet has appset and appsets and a status subresource": {
			resource: "applicationsets", want: served{"ApplicationSet", true, []string{"appset", "appsets"}},
			subsources: []string{"applicationsets/status"}},
		"AnalysisRun has ar and a status subresource": {
			resource: "analysisruns", want: served{"AnalysisRun", true, []string{"ar"}},
			subsources: []string{"analysisruns/status"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, ok := got[tc.resource]
			if !ok {
				t.Fatalf("%s not served; served: %v", tc.resource, got)
			}
			if s.kind != tc.want.kind || s.namespaced != tc.want.namespaced || !slices.Equal(s.shortNames, tc.want.shortNames) {
				t.Errorf("%s served as %+v, want %+v", tc.resource, s, tc.want)
			}
			for _, sub := range tc.subsources {
				if _, ok := got[sub]; !ok {
					t.Errorf("subresource %s not served", sub)
				}
			}
		})
	}
	// Applications keep their status in the main resource, as in Argo CD.
	if _, ok := got["applications/status"]; ok {
		t.Errorf("applications/status is served; Argo CD has no status subresource")
	}
}
