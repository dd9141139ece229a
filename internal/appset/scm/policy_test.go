package scm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestPolicyAllows(t *testing.T) {
	tests := map[string]struct {
		allowed     []string
		api         string
		wantErr     string // "" when allowed
		defaultsAPI string // default: GitHub's
	}{
		"no api is GitHub's public API, allowed by default": {},
		"no api is gitlab.com, allowed by default": {
			defaultsAPI: "https://gitlab.com",
		},
		"the public API named is allowed by default": {
			api: "https://api.github.com/",
		},
		"gitlab.com's API named with its version is allowed by default": {
			api: "https://gitlab.com/api/v4/", defaultsAPI: "https://gitlab.com",
		},
		"another host is refused by default, the setting named": {
			api:     "https://git.example.com",
			wantErr: "GitHub: api https://git.example.com is not allowed: the server's --appset-allowed-scm-providers lists the SCM APIs generators may reach (default: https://api.github.com, https://gitlab.com)",
		},
		"a listed host is allowed": {
			allowed: []string{"https://git.example.com/"}, api: "https://git.example.com",
		},
		"a listed host is allowed with the api/v3 the client adds": {
			allowed: []string{"https://ghe.example.com"}, api: "https://ghe.example.com/api/v3",
		},
		"a host differing in case is the same host": {
			allowed: []string{"https://Git.Example.com"}, api: "https://git.example.com",
		},
		"a list replaces the defaults": {
			allowed: []string{"https://git.example.com"},
			wantErr: "api https://api.github.com is not allowed",
		},
		"another port is another API": {
			allowed: []string{"https://git.example.com"}, api: "https://git.example.com:8443",
			wantErr: "is not allowed",
		},
		"http is not https": {
			allowed: []string{"https://git.example.com"}, api: "http://git.example.com",
			wantErr: "is not allowed",
		},
		"another path on the host is another API": {
			allowed: []string{"https://example.com/gitlab"}, api: "https://example.com/other",
			wantErr: "is not allowed",
		},
		"a listed host in the user part hides another host": {
			allowed: []string{"https://git.example.com"}, api: "https://git.example.com@evil.example",
			wantErr: `is not an http(s) URL`,
		},
		"a host that only starts like a listed one is refused": {
			allowed: []string{"https://git.example.com"}, api: "https://git.example.com.evil.example",
			wantErr: "is not allowed",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			def := tc.defaultsAPI
			if def == "" {
				def = "https://api.github.com"
			}
			err := Policy{AllowedAPIs: tc.allowed}.allows("GitHub", tc.api, def)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestPolicyCheck(t *testing.T) {
	if err := (Policy{AllowedAPIs: []string{"https://git.example.com", "http://10.0.0.1:8080/gitlab"}}).Check(); err != nil {
		t.Errorf("URLs refused: %v", err)
	}
	err := Policy{AllowedAPIs: []string{"https://git.example.com", "git.example.com"}}.Check()
	if err == nil || !strings.Contains(err.Error(), `--appset-allowed-scm-providers: api "git.example.com" is not an http(s) URL`) {
		t.Errorf("error %v, want one naming the setting and the value", err)
	}
}

// TestPolicyRefusesBeforeAnyRequest checks that a generator whose api the
// policy refuses, or whose kind is off, reads no token and sends nothing.
func TestPolicyRefusesBeforeAnyRequest(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeJSON(w, http.StatusOK, []any{})
	}))
	defer srv.Close()
	tokenRef := &v1alpha1.SecretRef{SecretName: "scm-token", Key: "token"}
	tests := map[string]struct {
		policy  Policy
		wantErr string
	}{
		"the default policy refuses a fake API": {
			wantErr: "is not allowed: the server's --appset-allowed-scm-providers",
		},
		"a list without the API refuses it": {
			policy: Policy{AllowedAPIs: []string{"https://git.example.com"}}, wantErr: "is not allowed",
		},
		"generators turned off refuse even an allowed API": {
			policy: Policy{AllowedAPIs: []string{srv.URL}, Disabled: true}, wantErr: "turned off on this server (--appset-enable-scm-providers=false)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls.Store(0)
			var secretsRead atomic.Int32
			c := Client{Policy: tc.policy, Secrets: func(name, key string) (string, error) {
				secretsRead.Add(1)
				return testToken, nil
			}}
			_, prErr := c.PullRequests(t.Context(), &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "acme", Repo: "shop", API: srv.URL, TokenRef: tokenRef}})
			_, scmErr := c.Provider(t.Context(), &v1alpha1.SCMProviderGenerator{Gitlab: &v1alpha1.SCMProviderGeneratorGitlab{Group: "acme", API: srv.URL, TokenRef: tokenRef}})
			for _, err := range []error{prErr, scmErr} {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("the API got %d requests", n)
			}
			if n := secretsRead.Load(); n != 0 {
				t.Errorf("the token's Secret was read %d times", n)
			}
		})
	}
	// The same client with the API listed reaches it: the refusals above
	// are the policy's.
	c := Client{Policy: allowing(srv.URL), Secrets: testSecrets}
	if _, err := c.PullRequests(t.Context(), &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "acme", Repo: "shop", API: srv.URL, TokenRef: tokenRef}}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Errorf("the allowed API got %d requests, want 1", calls.Load())
	}
}

// labelledSecret is a client.Reader holding skiff/scm-token with labels.
type labelledSecret struct {
	client.Reader
	labels map[string]string
}

func (r labelledSecret) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s := obj.(*corev1.Secret)
	s.Labels = r.labels
	s.Data = map[string][]byte{"token": []byte(testToken)}
	return nil
}

func TestTokenRefStrictMode(t *testing.T) {
	scmCreds := map[string]string{SCMCredsLabel: SCMCredsType}
	repoCreds := map[string]string{SCMCredsLabel: "repo-creds"}
	tests := map[string]struct {
		strict  bool
		labels  map[string]string
		wantErr string
	}{
		"off, an unlabelled Secret is read":           {},
		"strict, a Secret labelled scm-creds is read": {strict: true, labels: scmCreds},
		"strict, an unlabelled Secret is refused": {
			strict: true, wantErr: "the Secret scm-token is not labelled argocd.argoproj.io/secret-type: scm-creds, which the server's --appset-tokenref-strict-mode asks of tokenRef Secrets",
		},
		"strict, a Secret of another type is refused": {
			strict: true, labels: repoCreds, wantErr: "is not labelled argocd.argoproj.io/secret-type: scm-creds",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := Policy{TokenRefStrict: tc.strict}.Client(t.Context(), labelledSecret{labels: tc.labels}, "skiff")
			got, err := c.Secrets("scm-token", "token")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), testToken) {
					t.Fatalf("error %v, want one containing %q and not the token", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != testToken {
				t.Errorf("got %q, %v; want the token", got, err)
			}
		})
	}
}
