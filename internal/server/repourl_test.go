package server

import (
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestRepoKey(t *testing.T) {
	tests := map[string]struct {
		a, b string
		same bool
	}{
		"https with and without .git":            {a: "https://github.com/org/repo.git", b: "https://github.com/org/repo", same: true},
		"web page and clone URL":                 {a: "https://github.com/Org/Repo", b: "https://github.com/org/repo.git", same: true},
		"scp-like SSH and HTTPS":                 {a: "git@github.com:org/repo.git", b: "https://github.com/org/repo", same: true},
		"ssh:// with a port and HTTPS":           {a: "ssh://git@github.com:22/org/repo.git", b: "https://github.com/org/repo/", same: true},
		"host case and credentials are ignored":  {a: "https://user:token@GitHub.com/org/repo", b: "http://github.com/org/repo", same: true},
		"different repositories differ":          {a: "https://github.com/org/repo", b: "https://github.com/org/repo2", same: false},
		"different hosts differ":                 {a: "https://github.com/org/repo", b: "https://gitlab.com/org/repo", same: false},
		"a subgroup is part of the path":         {a: "https://gitlab.com/group/sub/repo.git", b: "git@gitlab.com:group/sub/repo.git", same: true},
		"file URLs compare by path":              {a: "file:///tmp/repo/", b: "file:///tmp/repo.git", same: true},
		"file URLs of different paths differ":    {a: "file:///tmp/a", b: "file:///tmp/b", same: false},
		"a path is not a prefix match":           {a: "https://github.com/org/repo", b: "https://github.com/org/repo/sub", same: false},
		"surrounding space is ignored":           {a: " https://github.com/org/repo ", b: "https://github.com/org/repo", same: true},
		"an empty URL never matches":             {a: "", b: "", same: false},
		"bitbucket scp-like and web page":        {a: "git@bitbucket.org:team/app.git", b: "https://bitbucket.org/team/app", same: true},
		"bitbucket server clone URLs with ports": {a: "ssh://git@bbs.example.com:7999/proj/app.git", b: "https://bbs.example.com/scm/proj/app.git", same: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := sameRepo(tc.a, []string{tc.b}); got != tc.same {
				t.Errorf("sameRepo(%q, %q) = %v (keys %q, %q), want %v", tc.a, tc.b, got, repoKey(tc.a), repoKey(tc.b), tc.same)
			}
		})
	}
}

func TestRevisionMatches(t *testing.T) {
	tests := map[string]struct {
		target        string
		pushed        []string
		defaultBranch string
		want          bool
	}{
		"the tracked branch was pushed":                   {target: "main", pushed: []string{"main"}, defaultBranch: "main", want: true},
		"another branch was pushed":                       {target: "main", pushed: []string{"feature"}, defaultBranch: "main"},
		"a full ref is compared by its short name":        {target: "refs/heads/release", pushed: []string{"release"}, want: true},
		"a tracked tag was pushed":                        {target: "v1.2.0", pushed: []string{"v1.2.0"}, want: true},
		"HEAD follows the default branch":                 {target: "HEAD", pushed: []string{"main"}, defaultBranch: "main", want: true},
		"an empty revision follows the default branch":    {target: "", pushed: []string{"trunk"}, defaultBranch: "trunk", want: true},
		"HEAD ignores pushes to other branches":           {target: "HEAD", pushed: []string{"feature"}, defaultBranch: "main"},
		"HEAD matches when the default branch is unknown": {target: "HEAD", pushed: []string{"feature"}, want: true},
		"one of several pushed refs is enough":            {target: "dev", pushed: []string{"main", "dev"}, defaultBranch: "main", want: true},
		"a commit SHA never matches a push":               {target: "0123456789abcdef0123456789abcdef01234567", pushed: []string{"main"}, defaultBranch: "main"},
		"nothing pushed matches nothing":                  {target: "HEAD", defaultBranch: "main"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := revisionMatches(tc.target, tc.pushed, tc.defaultBranch); got != tc.want {
				t.Errorf("revisionMatches(%q, %v, %q) = %v, want %v", tc.target, tc.pushed, tc.defaultBranch, got, tc.want)
			}
		})
	}
}

func TestTouchedSource(t *testing.T) {
	ev := &push{RepoURLs: []string{"https://github.com/org/repo", "git@github.com:org/repo.git"}, Revisions: []string{"main"}, DefaultBranch: "main"}
	tests := map[string]struct {
		app  v1alpha1.ApplicationSpec
		want string
	}{
		"a single source on the pushed branch": {
			app:  v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo.git", TargetRevision: "HEAD"}},
			want: "https://github.com/org/repo.git",
		},
		"a single source on another branch": {
			app: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo.git", TargetRevision: "dev"}},
		},
		"the second of several sources": {
			app: v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{
				{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"},
				{RepoURL: "git@github.com:org/repo.git", TargetRevision: "main", Ref: "values"},
			}},
			want: "git@github.com:org/repo.git",
		},
		"a Helm chart source never matches": {
			app: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Chart: "x", TargetRevision: "main"}},
		},
		"an app without sources": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: tc.app}
			if got := touchedSource(app, ev); got != tc.want {
				t.Errorf("touchedSource = %q, want %q", got, tc.want)
			}
		})
	}
}
