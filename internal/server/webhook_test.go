package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"testing"
)

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

const (
	githubPush = `{"ref":"refs/heads/main","repository":{"html_url":"https://github.com/org/repo","clone_url":"https://github.com/org/repo.git","ssh_url":"git@github.com:org/repo.git","default_branch":"main"}}`
	gitlabPush = `{"ref":"refs/tags/v1","project":{"web_url":"https://gitlab.com/g/repo","git_http_url":"https://gitlab.com/g/repo.git","git_ssh_url":"git@gitlab.com:g/repo.git","default_branch":"main"}}`
	bbPush     = `{"repository":{"full_name":"team/app","links":{"html":{"href":"https://bitbucket.org/team/app"}}},"push":{"changes":[{"new":{"name":"dev","type":"branch"}}]}}`
	bbsPush    = `{"repository":{"links":{"clone":[{"href":"https://bbs.example.com/scm/p/app.git","name":"http"},{"href":"ssh://git@bbs.example.com:7999/p/app.git","name":"ssh"}]}},"changes":[{"ref":{"id":"refs/heads/main","displayId":"main","type":"BRANCH"}}]}`
	gogsPush   = `{"ref":"refs/heads/main","repository":{"html_url":"https://gogs.example.com/org/repo","clone_url":"https://gogs.example.com/org/repo.git","ssh_url":"git@gogs.example.com:org/repo.git","default_branch":"main"}}`
)

// parseWebhook runs a webhook's checks in the handler's order: what the
// headers prove, then the body's signature and content.
func parseWebhook(h http.Header, body []byte, secrets map[string][]byte) (*push, error) {
	src, err := identifyWebhook(h)
	if err != nil {
		return nil, err
	}
	hmacSecret, _, err := src.authorize(h, secrets)
	if err != nil {
		return nil, err
	}
	return src.parse(h, body, hmacSecret)
}

func TestParseWebhook(t *testing.T) {
	secrets := map[string][]byte{
		keyGitHubSecret:          []byte("gh-secret"),
		keyGitLabSecret:          []byte("gl-token"),
		keyBitbucketUUID:         []byte("{uuid-1}"),
		keyBitbucketServerSecret: []byte("bbs-secret"),
		keyGogsSecret:            []byte("gogs-secret"),
	}
	githubOnly := map[string][]byte{keyGitHubSecret: []byte("gh-secret")}
	tests := map[string]struct {
		headers   map[string]string
		body      string
		secrets   map[string][]byte
		wantErr   error
		wantURL   string
		wantRevs  []string
		wantDefBr string
	}{
		"a GitHub push with the right signature": {
			headers: map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign("gh-secret", []byte(githubPush))},
			body:    githubPush, secrets: secrets,
			wantURL: "git@github.com:org/repo.git", wantRevs: []string{"main"}, wantDefBr: "main",
		},
		"a GitHub push with a wrong signature": {
			headers: map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign("other", []byte(githubPush))},
			body:    githubPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a GitHub push without a signature while a secret is set": {
			headers: map[string]string{"X-GitHub-Event": "push"},
			body:    githubPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a GitHub push with only the SHA-1 signature while a secret is set": {
			headers: map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature": "sha1=00"},
			body:    githubPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a GitHub push signed over another body": {
			headers: map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign("gh-secret", []byte(githubPush+" "))},
			body:    githubPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a GitHub push without a configured secret is accepted": {
			headers: map[string]string{"X-GitHub-Event": "push"},
			body:    githubPush,
			wantURL: "https://github.com/org/repo", wantRevs: []string{"main"}, wantDefBr: "main",
		},
		"a GitHub ping is ignored after its signature is checked": {
			headers: map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": "sha256=" + sign("gh-secret", []byte(`{}`))},
			body:    `{}`, secrets: secrets, wantErr: errIgnored,
		},
		"a GitLab tag push with the right token": {
			headers: map[string]string{"X-Gitlab-Event": "Tag Push Hook", "X-Gitlab-Token": "gl-token"},
			body:    gitlabPush, secrets: secrets,
			wantURL: "git@gitlab.com:g/repo.git", wantRevs: []string{"v1"}, wantDefBr: "main",
		},
		"a GitLab push with a wrong token": {
			headers: map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "nope"},
			body:    gitlabPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a Bitbucket Cloud push with the right hook UUID": {
			headers: map[string]string{"X-Event-Key": "repo:push", "X-Hook-UUID": "{uuid-1}"},
			body:    bbPush, secrets: secrets,
			wantURL: "git@bitbucket.org:team/app.git", wantRevs: []string{"dev"},
		},
		"a Bitbucket Cloud push without the hook UUID": {
			headers: map[string]string{"X-Event-Key": "repo:push"},
			body:    bbPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a Bitbucket Server push with the right signature": {
			headers: map[string]string{"X-Event-Key": "repo:refs_changed", "X-Hub-Signature": "sha256=" + sign("bbs-secret", []byte(bbsPush))},
			body:    bbsPush, secrets: secrets,
			wantURL: "ssh://git@bbs.example.com:7999/p/app.git", wantRevs: []string{"main"},
		},
		"a Bitbucket Server push with a wrong signature": {
			headers: map[string]string{"X-Event-Key": "repo:refs_changed", "X-Hub-Signature": "sha256=00"},
			body:    bbsPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a Gogs push with the right signature": {
			headers: map[string]string{"X-Gogs-Event": "push", "X-Gogs-Signature": sign("gogs-secret", []byte(gogsPush))},
			body:    gogsPush, secrets: secrets,
			wantURL: "https://gogs.example.com/org/repo.git", wantRevs: []string{"main"}, wantDefBr: "main",
		},
		"a Gogs push with a wrong signature": {
			headers: map[string]string{"X-Gogs-Event": "push", "X-Gogs-Signature": sign("x", []byte(gogsPush))},
			body:    gogsPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a Gogs push without a signature": {
			headers: map[string]string{"X-Gogs-Event": "push"},
			body:    gogsPush, secrets: secrets, wantErr: errUnauthorized,
		},
		"a GitLab push is refused while only GitHub has a secret": {
			headers: map[string]string{"X-Gitlab-Event": "Push Hook"},
			body:    gitlabPush, secrets: githubOnly, wantErr: errNoSecret,
		},
		"a GitLab push with any token is refused while only GitHub has a secret": {
			headers: map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "gh-secret"},
			body:    gitlabPush, secrets: githubOnly, wantErr: errNoSecret,
		},
		"a Gogs push is refused while only GitHub has a secret": {
			headers: map[string]string{"X-Gogs-Event": "push", "X-Gogs-Signature": sign("gh-secret", []byte(gogsPush))},
			body:    gogsPush, secrets: githubOnly, wantErr: errNoSecret,
		},
		"a Bitbucket Cloud push is refused while only GitHub has a secret": {
			headers: map[string]string{"X-Event-Key": "repo:push", "X-Hook-UUID": "{any}"},
			body:    bbPush, secrets: githubOnly, wantErr: errNoSecret,
		},
		"a Bitbucket Server push is refused while only GitHub has a secret": {
			headers: map[string]string{"X-Event-Key": "repo:refs_changed"},
			body:    bbsPush, secrets: githubOnly, wantErr: errNoSecret,
		},
		"a GitHub push signed with the only secret is accepted": {
			headers: map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign("gh-secret", []byte(githubPush))},
			body:    githubPush, secrets: githubOnly,
			wantURL: "git@github.com:org/repo.git", wantRevs: []string{"main"}, wantDefBr: "main",
		},
		"a GitLab push without any secret is accepted": {
			headers: map[string]string{"X-Gitlab-Event": "Push Hook"},
			body:    gitlabPush,
			wantURL: "git@gitlab.com:g/repo.git", wantRevs: []string{"v1"}, wantDefBr: "main",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			ev, err := parseWebhook(h, []byte(tc.body), tc.secrets)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(ev.RepoURLs, tc.wantURL) {
				t.Errorf("repo URLs %v do not contain %s", ev.RepoURLs, tc.wantURL)
			}
			if !slices.Equal(ev.Revisions, tc.wantRevs) || ev.DefaultBranch != tc.wantDefBr {
				t.Errorf("revisions %v default %q, want %v default %q", ev.Revisions, ev.DefaultBranch, tc.wantRevs, tc.wantDefBr)
			}
		})
	}
}

// What the headers prove decides how the body is read: a matching token
// vouches for the sender (its body needs no slot), a signature leaves the
// body to check, and without any secret nothing vouches.
func TestAuthorizeWebhook(t *testing.T) {
	secrets := map[string][]byte{keyGitHubSecret: []byte("gh-secret"), keyGitLabSecret: []byte("gl-token")}
	tests := map[string]struct {
		headers      map[string]string
		secrets      map[string][]byte
		wantHMAC     string
		wantVerified bool
		wantErr      error
	}{
		"a GitLab token that matches vouches for the sender": {
			headers: map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "gl-token"},
			secrets: secrets, wantVerified: true,
		},
		"a GitLab token that does not match is refused before the body": {
			headers: map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "gl-tokens"},
			secrets: secrets, wantErr: errUnauthorized,
		},
		"a GitHub signature leaves the body to check": {
			headers: map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=00"},
			secrets: secrets, wantHMAC: "gh-secret",
		},
		"a GitHub push without a signature is refused before the body": {
			headers: map[string]string{"X-GitHub-Event": "push"},
			secrets: secrets, wantErr: errUnauthorized,
		},
		"a GitHub SHA-1 signature is refused before the body": {
			headers: map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha1=00"},
			secrets: secrets, wantErr: errUnauthorized,
		},
		"a Gogs push is refused while other providers have secrets": {
			headers: map[string]string{"X-Gogs-Event": "push", "X-Gogs-Signature": "00"},
			secrets: secrets, wantErr: errNoSecret,
		},
		"without any secret nothing vouches and nothing is checked": {
			headers: map[string]string{"X-Gogs-Event": "push"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			src, err := identifyWebhook(h)
			if err != nil {
				t.Fatal(err)
			}
			hmacSecret, verified, err := src.authorize(h, tc.secrets)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if hmacSecret != tc.wantHMAC || verified != tc.wantVerified {
				t.Errorf("authorize = %q, %v; want %q, %v", hmacSecret, verified, tc.wantHMAC, tc.wantVerified)
			}
		})
	}
}

func TestParseWebhookUnknownProvider(t *testing.T) {
	if _, err := parseWebhook(http.Header{}, []byte(`{}`), nil); err == nil || errors.Is(err, errUnauthorized) {
		t.Errorf("error = %v, want an unknown-provider error", err)
	}
}

func TestVerifyHMAC(t *testing.T) {
	body := []byte("payload")
	tests := map[string]struct {
		signature string
		want      bool
	}{
		"a prefixed SHA-256 signature":      {signature: "sha256=" + sign("s", body), want: true},
		"a bare hex signature":              {signature: sign("s", body), want: true},
		"a signature with another secret":   {signature: "sha256=" + sign("t", body)},
		"an unknown algorithm":              {signature: "md5=" + sign("s", body)},
		"a signature that is not hex":       {signature: "sha256=zz"},
		"an empty signature":                {signature: ""},
		"a truncated signature":             {signature: "sha256=" + sign("s", body)[:10]},
		"an upper-case hex signature works": {signature: "sha256=" + upper(sign("s", body)), want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := verifyHMAC("s", tc.signature, body, "sha256"); got != tc.want {
				t.Errorf("verifyHMAC = %v, want %v", got, tc.want)
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
