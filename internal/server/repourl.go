package server

import (
	"net/url"
	"path"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// repoKey reduces a git URL to host and path, lower case, so that the
// spellings a webhook sends (web page, HTTPS clone, scp-like or ssh:// SSH)
// and an Application's spelling compare equal, as Argo CD's webhook
// matching ignores scheme, user, port, case and a ".git" suffix. A file://
// URL keeps its path (local repositories in tests and demos).
func repoKey(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ""
	}
	var host, p string
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return strings.ToLower(strings.TrimSuffix(strings.TrimRight(s, "/"), ".git"))
		}
		if strings.EqualFold(u.Scheme, "file") {
			return "file://" + strings.TrimSuffix(path.Clean("/"+u.Path), ".git")
		}
		host, p = u.Hostname(), u.Path
	} else if at, rest, ok := strings.Cut(s, ":"); ok && !strings.Contains(at, "/") {
		// scp-like: [user@]host:path
		host, p = at, rest
		if i := strings.LastIndex(host, "@"); i >= 0 {
			host = host[i+1:]
		}
	} else {
		return strings.ToLower(strings.TrimSuffix(strings.TrimRight(s, "/"), ".git"))
	}
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(p, ".git")
	return strings.ToLower(host + "/" + strings.Trim(p, "/"))
}

// sameRepo reports whether an app's repoURL is one of the pushed URLs.
func sameRepo(appURL string, pushed []string) bool {
	key := repoKey(appURL)
	if key == "" {
		return false
	}
	for _, u := range pushed {
		if repoKey(u) == key {
			return true
		}
	}
	return false
}

// revisionMatches reports whether a push of revisions touches an app that
// tracks targetRevision: the same branch or tag (with or without refs/…),
// or HEAD / empty when the default branch moved. When the provider does not
// say which branch is the default, HEAD matches every push: refreshing once
// too often is cheaper than missing a change.
func revisionMatches(targetRevision string, revisions []string, defaultBranch string) bool {
	target := shortRef(strings.TrimSpace(targetRevision))
	for _, rev := range revisions {
		if target == "" || target == "HEAD" {
			if defaultBranch == "" || rev == defaultBranch {
				return true
			}
			continue
		}
		if rev == target {
			return true
		}
	}
	return false
}

// touchedSource returns the repoURL of the first git source of app that the
// push touched, or "" when none is. Helm chart sources never match.
func touchedSource(app *v1alpha1.Application, ev *push) string {
	for _, src := range app.Spec.GetSources() {
		if src.Chart != "" {
			continue
		}
		if sameRepo(src.RepoURL, ev.RepoURLs) && revisionMatches(src.TargetRevision, ev.Revisions, ev.DefaultBranch) {
			return src.RepoURL
		}
	}
	return ""
}
