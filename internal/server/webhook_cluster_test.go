package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestGitHubWebhook(t *testing.T) {
	h := startServer(t)
	h.setSecretKey(keyGitHubSecret, "gh-secret")
	repo := "https://github.com/org/repo.git"
	h.createApp("head", "default", nil, v1alpha1.ApplicationSource{RepoURL: repo, Path: "a", TargetRevision: "HEAD"})
	h.createApp("main-ssh", "default", nil, v1alpha1.ApplicationSource{RepoURL: "git@github.com:Org/repo.git", Path: "b", TargetRevision: "main"})
	h.createApp("dev", "default", nil, v1alpha1.ApplicationSource{RepoURL: repo, Path: "c", TargetRevision: "dev"})
	h.createApp("other-repo", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/other", Path: "d", TargetRevision: "main"})
	h.createApp("multi", "default", nil,
		v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"},
		v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", TargetRevision: "refs/heads/main", Ref: "values"})
	all := []string{"dev", "head", "main-ssh", "multi", "other-repo"}
	body := []byte(githubPush)

	annotated := func() []string {
		t.Helper()
		var out []string
		for _, name := range all {
			if h.getApp(name).Annotations[AnnotationRefresh] != "" {
				out = append(out, name)
			}
		}
		return out
	}

	// Wrong, missing or foreign signatures: 401 and nothing refreshed.
	for _, sig := range []string{"", "sha256=" + sign("wrong", body), "sha256=" + strings.Repeat("0", 64)} {
		headers := []string{"X-GitHub-Event", "push", "Content-Type", "application/json"}
		if sig != "" {
			headers = append(headers, "X-Hub-Signature-256", sig)
		}
		wantError(t, h.do(http.MethodPost, "/api/webhook", "", body, headers...), http.StatusUnauthorized)
	}
	if got := h.refresh.refreshed(); len(got) != 0 {
		t.Fatalf("refreshed %v after refused webhooks", got)
	}
	if got := annotated(); len(got) != 0 {
		t.Fatalf("apps %v annotated after refused webhooks", got)
	}

	// A ping is answered without refreshing anything.
	ping := []byte(`{"zen":"x"}`)
	if r := h.do(http.MethodPost, "/api/webhook", "", ping, "X-GitHub-Event", "ping", "X-Hub-Signature-256", "sha256="+sign("gh-secret", ping)); r.status != http.StatusOK {
		t.Fatalf("ping: %d %s", r.status, r.body)
	}

	// A valid push to main refreshes the apps of that repo tracking main
	// (HEAD included), in any spelling of the URL, and no other.
	r := h.do(http.MethodPost, "/api/webhook", "", body, "X-GitHub-Event", "push", "X-Hub-Signature-256", "sha256="+sign("gh-secret", body))
	if r.status != http.StatusOK {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	want := []string{"head", "main-ssh", "multi"}
	if got := h.refresh.refreshed(); !slices.Equal(got, want) {
		t.Errorf("refreshed %v, want %v", got, want)
	}
	if got := annotated(); !slices.Equal(got, want) {
		t.Errorf("annotated %v, want %v", got, want)
	}

	// A payload beyond the limit is refused.
	big := make([]byte, defaultWebhookMaxBytes+1)
	wantError(t, h.do(http.MethodPost, "/api/webhook", "", big, "X-GitHub-Event", "push"), http.StatusRequestEntityTooLarge)
}
