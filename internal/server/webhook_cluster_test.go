package server

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
			if h.getApp(name).Annotations[v1alpha1.AnnotationRefresh] != "" {
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

	// A payload beyond the limit is refused by its length.
	big := make([]byte, defaultWebhookMaxBytes+1)
	wantError(t, h.do(http.MethodPost, "/api/webhook", "", big, "X-GitHub-Event", "push",
		"X-Hub-Signature-256", "sha256="+sign("gh-secret", big)), http.StatusRequestEntityTooLarge)
}

// With only GitHub's secret set, pushes of the providers without one are
// refused before their body is read, whatever they carry, and refresh
// nothing; without any secret the same pushes refresh their apps.
func TestWebhooksOfProvidersWithoutASecretAreRefused(t *testing.T) {
	h := startServer(t)
	h.setSecretKey(keyGitHubSecret, "gh-secret")
	h.createApp("gitlab", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://gitlab.com/g/repo.git", Path: "a", TargetRevision: "v1"})
	h.createApp("gogs", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://gogs.example.com/org/repo.git", Path: "a", TargetRevision: "main"})
	h.createApp("bitbucket", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://bitbucket.org/team/app", Path: "a", TargetRevision: "dev"})
	h.createApp("bbs", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://bbs.example.com/scm/p/app.git", Path: "a", TargetRevision: "main"})
	pushes := map[string]struct {
		body    string
		headers []string
		key     string
	}{
		"gitlab":    {gitlabPush, []string{"X-Gitlab-Event", "Tag Push Hook", "X-Gitlab-Token", "gh-secret"}, keyGitLabSecret},
		"gogs":      {gogsPush, []string{"X-Gogs-Event", "push", "X-Gogs-Signature", sign("gh-secret", []byte(gogsPush))}, keyGogsSecret},
		"bitbucket": {bbPush, []string{"X-Event-Key", "repo:push", "X-Hook-UUID", "{uuid-1}"}, keyBitbucketUUID},
		"bbs": {bbsPush, []string{"X-Event-Key", "repo:refs_changed",
			"X-Hub-Signature", "sha256=" + sign("gh-secret", []byte(bbsPush))}, keyBitbucketServerSecret},
	}
	for name, p := range pushes {
		r := h.do(http.MethodPost, "/api/webhook", "", []byte(p.body), p.headers...)
		wantError(t, r, http.StatusUnauthorized)
		if !strings.Contains(string(r.body), p.key) {
			t.Errorf("%s: the refusal %s does not name %s", name, r.body, p.key)
		}
	}
	if got := h.refresh.refreshed(); len(got) != 0 {
		t.Fatalf("refreshed %v after refused webhooks", got)
	}
	for name := range pushes {
		if a := h.getApp(name).Annotations[v1alpha1.AnnotationRefresh]; a != "" {
			t.Errorf("app %s annotated %q after a refused webhook", name, a)
		}
	}

	h.setSecretKey(keyGitHubSecret, "")
	for name, p := range pushes {
		if r := h.do(http.MethodPost, "/api/webhook", "", []byte(p.body), p.headers...); r.status != http.StatusOK {
			t.Fatalf("%s without any secret: %d %s", name, r.status, r.body)
		}
	}
	if got, want := h.refresh.refreshed(), []string{"bbs", "bitbucket", "gitlab", "gogs"}; !slices.Equal(got, want) {
		t.Errorf("without any secret refreshed %v, want %v", got, want)
	}
}

// Unsigned payloads posted at once while GitHub's secret is set: only a
// few are read at a time, the others are refused at once with 503, none
// is accepted, and the heap grows by a bounded amount, not by the sum of
// the payloads.
func TestUnverifiedWebhookPayloadsAreBounded(t *testing.T) {
	h := startServer(t)
	h.setSecretKey(keyGitHubSecret, "gh-secret")
	const posts = 40
	payload := make([]byte, defaultWebhookMaxBytes) // shared by every post
	copy(payload, githubPush)

	// The heap is sampled for what the server holds, not for garbage the
	// collector has not reached yet: a busy machine lets the slots turn
	// over many times between two collections.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := before.HeapAlloc
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 12000; i++ { // a minute at most
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}()

	type result struct {
		status     int
		retryAfter string
		took       time.Duration
		err        error
	}
	results := make([]result, posts)
	client := &http.Client{Timeout: 30 * time.Second, Transport: h.http.Transport}
	var wg sync.WaitGroup
	for i := range posts {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, h.url+"/api/webhook", bytes.NewReader(payload))
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("X-GitHub-Event", "push")
			req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
			start := time.Now()
			resp, err := client.Do(req)
			results[i].took = time.Since(start)
			if err != nil {
				results[i].err = err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results[i].status, results[i].retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		})
	}
	wg.Wait()
	close(stop)
	<-sampled

	refused := 0
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("post %d: %v", i, r.err)
		case r.status == http.StatusServiceUnavailable:
			refused++
			if r.took > 2*time.Second || r.retryAfter == "" {
				t.Errorf("post %d refused after %s with Retry-After %q, want at once with one", i, r.took, r.retryAfter)
			}
		case r.status != http.StatusUnauthorized:
			t.Errorf("post %d: status %d, want 401 or 503", i, r.status)
		}
	}
	if refused == 0 {
		t.Errorf("none of %d concurrent unsigned posts was refused for want of a slot", posts)
	}
	growth := int64(peak) - int64(before.HeapAlloc)
	t.Logf("%d of %d posts refused at once; heap grew by %d MiB at most", refused, posts, growth>>20)
	if limit := int64(defaultWebhookUnverifiedReads+4) * defaultWebhookMaxBytes; growth > limit {
		t.Errorf("the heap grew by %d MiB during %d unsigned posts of %d MiB, more than %d MiB",
			growth>>20, posts, defaultWebhookMaxBytes>>20, limit>>20)
	}
	if got := h.refresh.refreshed(); len(got) != 0 {
		t.Errorf("refreshed %v after unsigned posts", got)
	}
}
