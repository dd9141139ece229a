package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/mask"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
	"github.com/skiffcd/skiff/internal/testgit"
)

// Managed resources and manifests of an app rendered from a local git
// repository: a drifted ConfigMap is modified with a diff, a missing
// Secret has no live state, a resource git no longer has is to be pruned,
// and no Secret value shows anywhere.
func TestManagedResourcesAndManifests(t *testing.T) {
	h := startFullServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "p, alice, applications, get, default/other, allow\n"})
	ctx := context.Background()
	repo := testgit.New(t)
	sha := repo.Commit(testgit.Dir(t, "testdata/managed", "app"))
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "settings"}, Data: map[string]string{"value": "drifted"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "leftover"}, Data: map[string]string{"value": "old"}},
	} {
		if err := h.k8s.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	h.createApp("shop", "default", nil, v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"})
	h.setResources("shop", v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: h.ns, Name: "leftover", RequiresPruning: true})
	admin, alice := h.login("admin", h.password), h.login("alice", "alice-password")
	secretValues := []string{"s3cret", "czNjcmV0"}

	r := h.do(http.MethodGet, "/api/v1/applications/shop/managed-resources", admin, nil)
	if r.status != http.StatusOK {
		t.Fatalf("managed-resources: %d %s", r.status, r.body)
	}
	for _, v := range secretValues {
		if strings.Contains(string(r.body), v) {
			t.Fatalf("managed-resources show a Secret value: %s", r.body)
		}
	}
	var diffs struct{ Items []appops.ManagedResource }
	r.json(t, &diffs)
	byName := map[string]appops.ManagedResource{}
	for _, d := range diffs.Items {
		byName[d.Name] = d
	}
	if len(diffs.Items) != 3 {
		t.Fatalf("managed resources %+v, want settings, credentials and leftover", diffs.Items)
	}
	if d := byName["settings"]; !d.Modified || !strings.Contains(d.Diff, "drifted") || !strings.Contains(d.TargetState, `"desired"`) ||
		!strings.Contains(d.LiveState, `"drifted"`) || d.Namespace != h.ns || d.Group != "" {
		t.Errorf("settings %+v, want modified from drifted to desired", d)
	}
	if d := byName["credentials"]; !d.Modified || d.LiveState != "" || !strings.Contains(d.TargetState, mask.Placeholder) {
		t.Errorf("credentials %+v, want missing with a masked target", d)
	}
	if d := byName["leftover"]; !d.Modified || d.TargetState != "" || !strings.Contains(d.LiveState, `"old"`) {
		t.Errorf("leftover %+v, want only a live state", d)
	}

	for _, path := range []string{"/api/v1/applications/shop/manifests", "/api/v1/applications/shop/manifests?revision=" + sha} {
		r = h.do(http.MethodGet, path, admin, nil)
		var out struct {
			Manifests []string
			Revision  string
		}
		r.json(t, &out)
		if r.status != http.StatusOK || len(out.Manifests) != 2 || out.Revision != sha {
			t.Fatalf("%s: %d %s, want 2 manifests at %s", path, r.status, r.body, sha)
		}
		for _, v := range secretValues {
			if strings.Contains(string(r.body), v) {
				t.Fatalf("manifests show a Secret value: %s", r.body)
			}
		}
	}
	// A revision the repository does not have is the caller's mistake.
	r = h.do(http.MethodGet, "/api/v1/applications/shop/manifests?revision=no-such-branch", admin, nil)
	wantError(t, r, http.StatusBadRequest)
	if !strings.Contains(string(r.body), "no-such-branch") || !strings.Contains(string(r.body), "revision not found") {
		t.Errorf("manifests of an unknown revision: %s, want the revision named as not found", r.body)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/shop/managed-resources", alice, nil), http.StatusForbidden)
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/shop/manifests", alice, nil), http.StatusForbidden)
}

func TestUnknownRevision(t *testing.T) {
	notFound := fmt.Errorf("%w: no branch or tag has that name", source.ErrRevisionNotFound)
	tests := map[string]struct {
		err  error
		want bool
	}{
		"a revision that resolves to nothing": {
			err:  fmt.Errorf("rendering application shop: %w", &source.RepoError{Op: source.OpResolve, Repo: "https://git.example.com/r", Revision: "nope", Err: notFound}),
			want: true,
		},
		"a chart version the Helm repository does not list": {
			err:  fmt.Errorf("rendering application shop: chart \"web\" in https://charts.example.com: %w", fmt.Errorf("no version matches \"9.9.9\": %w", helmrepo.ErrVersionNotFound)),
			want: true,
		},
		"a commit the cache lost is ours": {
			err: &source.RepoError{Op: "checkout", Repo: "https://git.example.com/r", Revision: "0123", Err: notFound},
		},
		"a repository that cannot be reached is ours": {
			err: &source.RepoError{Op: "ls-remote", Repo: "https://git.example.com/r", Err: errors.New("connection refused")},
		},
		"an error of no repository": {err: errors.New("kustomize build failed")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := unknownRevision(tc.err); got != tc.want {
				t.Errorf("unknownRevision(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// The diffs of managed-resources add argocd-cm's ignoreDifferences to the
// app's, as the controller's comparisons do: a drift of a field they
// ignore is no modification.
func TestManagedResourcesIgnoreWhatArgoCDConfigMapIgnores(t *testing.T) {
	h := startFullServer(t, func(s *Server) {
		s.IgnoreDifferences = func() []v1alpha1.ResourceIgnoreDifferences {
			return []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"/data/value"}}}
		}
	})
	ctx := context.Background()
	repo := testgit.New(t)
	repo.Commit(testgit.Dir(t, "testdata/managed", "app"))
	drifted := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "settings"}, Data: map[string]string{"value": "drifted"}}
	if err := h.k8s.Create(ctx, drifted); err != nil {
		t.Fatal(err)
	}
	h.createApp("shop", "default", nil, v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"})
	r := h.do(http.MethodGet, "/api/v1/applications/shop/managed-resources", h.login("admin", h.password), nil)
	var diffs struct{ Items []appops.ManagedResource }
	r.json(t, &diffs)
	for _, d := range diffs.Items {
		if d.Name == "settings" {
			if d.Modified {
				t.Fatalf("settings is modified by a drift of an ignored field: %s", d.Diff)
			}
			return
		}
	}
	t.Fatalf("managed-resources %s: no settings", r.body)
}
