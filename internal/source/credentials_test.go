package source

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// secret builds an Argo CD repository Secret with its values in Data.
func secret(name, secretType string, data map[string]string) corev1.Secret {
	s := corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: map[string]string{secretTypeLabel: secretType}},
		Data:       map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestCredentialsForURL(t *testing.T) {
	tests := map[string]struct {
		secrets []corev1.Secret
		repoURL string
		want    Credentials
	}{
		"no secrets gives anonymous access": {
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{},
		},
		"repository secret with the exact URL wins over a repo-creds template": {
			secrets: []corev1.Secret{
				secret("template", "repo-creds", map[string]string{"url": "https://git.example.com/org", "password": "template"}),
				secret("repo", "repository", map[string]string{"url": "https://git.example.com/org/repo", "username": "u", "password": "exact"}),
			},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{Username: "u", Password: "exact"},
		},
		"repository URL matches despite .git suffix, trailing slash and host case": {
			secrets: []corev1.Secret{
				secret("repo", "repository", map[string]string{"url": "https://Git.Example.COM/org/repo.git/", "password": "p"}),
			},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{Password: "p"},
		},
		"path case matters because servers may be case sensitive": {
			secrets: []corev1.Secret{
				secret("repo", "repository", map[string]string{"url": "https://git.example.com/Org/Repo", "password": "p"}),
			},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{},
		},
		"the longest repo-creds prefix wins": {
			secrets: []corev1.Secret{
				secret("host", "repo-creds", map[string]string{"url": "https://git.example.com", "password": "host"}),
				secret("org", "repo-creds", map[string]string{"url": "https://git.example.com/org/", "password": "org"}),
				secret("other-org", "repo-creds", map[string]string{"url": "https://git.example.com/other", "password": "other"}),
			},
			repoURL: "https://git.example.com/org/repo.git",
			want:    Credentials{Password: "org"},
		},
		"repo-creds prefix never matches another host": {
			secrets: []corev1.Secret{
				secret("host", "repo-creds", map[string]string{"url": "https://git.example.com", "password": "host"}),
			},
			repoURL: "https://git.example.com.evil.io/org/repo",
			want:    Credentials{},
		},
		"repository secret without credentials inherits them from repo-creds": {
			secrets: []corev1.Secret{
				secret("template", "repo-creds", map[string]string{"url": "https://git.example.com/org", "username": "bot", "password": "token"}),
				secret("repo", "repository", map[string]string{"url": "https://git.example.com/org/repo", "insecure": "true"}),
			},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{Username: "bot", Password: "token", Insecure: true},
		},
		"secrets of other types and without the label are ignored": {
			secrets: []corev1.Secret{
				secret("cluster", "cluster", map[string]string{"url": "https://git.example.com/org/repo", "password": "cluster"}),
				{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}, Data: map[string][]byte{"url": []byte("https://git.example.com/org/repo"), "password": []byte("x")}},
			},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{},
		},
		"every supported key is read, including the custom CA": {
			secrets: []corev1.Secret{
				secret("repo", "repository", map[string]string{
					"url": "https://git.example.com/org/repo", "username": "u", "password": "p", "sshPrivateKey": "key",
					"insecure": "true", "tlsClientCertData": "cert", "tlsClientCertKey": "ckey", "tlsCACertData": "ca",
				}),
			},
			repoURL: "https://git.example.com/org/repo",
			want: Credentials{
				Username: "u", Password: "p", SSHPrivateKey: "key", Insecure: true,
				TLSClientCertData: "cert", TLSClientCertKey: "ckey", CAData: []byte("ca"),
			},
		},
		"StringData is read and overrides Data": {
			secrets: []corev1.Secret{{
				ObjectMeta: metav1.ObjectMeta{Name: "repo", Labels: map[string]string{secretTypeLabel: "repository"}},
				Data:       map[string][]byte{"password": []byte("old")},
				StringData: map[string]string{"url": "https://git.example.com/org/repo", "password": "new"},
			}},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{Password: "new"},
		},
		"insecure other than true is false": {
			secrets: []corev1.Secret{
				secret("repo", "repository", map[string]string{"url": "https://git.example.com/org/repo", "insecure": "yes"}),
			},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{},
		},
		"scp-like and ssh:// spellings of an SSH URL match": {
			secrets: []corev1.Secret{
				secret("creds", "repo-creds", map[string]string{"url": "ssh://git@git.example.com/org", "sshPrivateKey": "key"}),
			},
			repoURL: "git@git.example.com:org/repo.git",
			want:    Credentials{SSHPrivateKey: "key"},
		},
		"duplicate repository secrets resolve by name, not list order": {
			secrets: []corev1.Secret{
				secret("b", "repository", map[string]string{"url": "https://git.example.com/org/repo", "password": "b"}),
				secret("a", "repository", map[string]string{"url": "https://git.example.com/org/repo", "password": "a"}),
			},
			repoURL: "https://git.example.com/org/repo",
			want:    Credentials{Password: "a"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := CredentialsForURL(tc.secrets, tc.repoURL)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CredentialsForURL (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCredentialsNeverPrintSecrets(t *testing.T) {
	creds := Credentials{
		Username: "user-value", Password: "password-value", SSHPrivateKey: "ssh-key-value",
		TLSClientCertData: "cert-value", TLSClientCertKey: "cert-key-value", CAData: []byte("ca-value"),
	}
	for _, format := range []string{"%s", "%v", "%+v", "%#v"} {
		out := fmt.Sprintf(format, creds)
		for _, secret := range []string{"user-value", "password-value", "ssh-key-value", "cert-value", "cert-key-value", "ca-value"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s prints %q: %s", format, secret, out)
			}
		}
		if !strings.Contains(out, "password:set") {
			t.Errorf("%s output %q does not say a password is set", format, out)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	tests := map[string]struct {
		a, b string
		same bool
	}{
		"trailing slash and .git suffix":     {a: "https://git.example.com/org/repo.git/", b: "https://git.example.com/org/repo", same: true},
		"host and scheme case":               {a: "HTTPS://GIT.example.com/org/repo", b: "https://git.example.com/org/repo", same: true},
		"default port":                       {a: "https://git.example.com:443/org/repo", b: "https://git.example.com/org/repo", same: true},
		"HTTP credentials":                   {a: "https://user:pass@git.example.com/org/repo", b: "https://git.example.com/org/repo", same: true},
		"scp-like SSH":                       {a: "git@git.example.com:org/repo.git", b: "ssh://git@git.example.com/org/repo", same: true},
		"file URL and local path":            {a: "file:///srv/git/repo", b: "/srv/git/repo/", same: true},
		"path case differs":                  {a: "https://git.example.com/Org/repo", b: "https://git.example.com/org/repo", same: false},
		"other port":                         {a: "https://git.example.com:8443/org/repo", b: "https://git.example.com/org/repo", same: false},
		"SSH user selects another identity":  {a: "ssh://alice@git.example.com/org/repo", b: "ssh://git@git.example.com/org/repo", same: false},
		"HTTP and HTTPS are different hosts": {a: "http://git.example.com/org/repo", b: "https://git.example.com/org/repo", same: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, b := normalizeURL(tc.a), normalizeURL(tc.b)
			if (a == b) != tc.same {
				t.Errorf("normalizeURL(%q) = %q, normalizeURL(%q) = %q; want same=%t", tc.a, a, tc.b, b, tc.same)
			}
			if (repoKey(tc.a) == repoKey(tc.b)) != tc.same {
				t.Errorf("repoKey disagrees with normalizeURL")
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"HTTP user and password are dropped": {in: "https://user:pass@git.example.com/org/repo", want: "https://git.example.com/org/repo"},
		"HTTP token as user name is dropped": {in: "https://ghp_token@git.example.com/org/repo", want: "https://git.example.com/org/repo"},
		"SSH keeps the user but not a password": {
			in: "ssh://git:pass@git.example.com/org/repo", want: "ssh://git@git.example.com/org/repo",
		},
		"scp-like is unchanged": {in: "git@git.example.com:org/repo", want: "git@git.example.com:org/repo"},
		"unparseable URL still loses its credentials": {
			in: "https://user:p%zz@git.example.com/org/repo", want: "https://git.example.com/org/repo",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := redactURL(tc.in); got != tc.want {
				t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
