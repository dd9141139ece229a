package scm

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestAPIErrors(t *testing.T) {
	wrongToken := func(name, key string) (string, error) { return "wr0ng-t0ken", nil }
	tokenRef := &v1alpha1.SecretRef{SecretName: "scm-token", Key: "token"}
	tests := map[string]struct {
		gitlab   bool
		noToken  bool
		secrets  func(name, key string) (string, error)
		timeout  time.Duration
		api      string // default: the server's URL
		handler  http.HandlerFunc
		wantErr  string
		maxCalls int // 0: 1
	}{
		"a 401 names the token's Secret key, not the token": {
			secrets: wrongToken,
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
			},
			wantErr: "GitHub: GET /api/v3/repos/acme/shop/pulls: 401 Unauthorized: the token of Secret scm-token key token is not accepted (wrong or expired)",
		},
		"a 401 without a token asks for one": {
			noToken: true, gitlab: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "401 Unauthorized"})
			},
			wantErr: "GitLab: GET /api/v4/projects/acme%2Fshop/merge_requests: 401 Unauthorized: the API needs a token (tokenRef)",
		},
		"GitHub's rate limit (403, none remaining) says when it resets": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC).Unix(), 10))
				writeJSON(w, http.StatusForbidden, map[string]any{"message": "API rate limit exceeded for installation ID 1."})
			},
			wantErr: "403 Forbidden: rate limit exceeded; it resets at 2026-12-07T19:00:00Z",
		},
		"GitLab's rate limit (429) says when to retry": {
			gitlab: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(http.StatusTooManyRequests)
			},
			wantErr: "429 Too Many Requests: rate limit exceeded; retry after 30 seconds",
		},
		"a 403 that is no rate limit gives the API's message": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by personal access token"})
			},
			wantErr: "403 Forbidden: Resource not accessible by personal access token",
		},
		"a message that repeats the token is masked": {
			gitlab: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "token " + r.Header.Get("PRIVATE-TOKEN") + " broke us"})
			},
			wantErr: "500 Internal Server Error: token ******** broke us",
		},
		"a 404 of the repository is an error": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			},
			wantErr: "GitHub: GET /api/v3/repos/acme/shop/pulls: 404 Not Found: not found",
		},
		"a next page on another host is not followed": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", `<http://127.0.0.2:1/api/v3/repos/acme/shop/pulls?page=2>; rel="next"`)
				writeJSON(w, 200, []any{})
			},
			wantErr: "the next page is on http://127.0.0.2:1, not followed so that the token stays with 127.0.0.1",
		},
		"a redirect to another host is not followed": {
			gitlab: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://127.0.0.2:1/elsewhere", http.StatusFound)
			},
			wantErr: "redirected to http://127.0.0.2:1, not followed so that the token stays with 127.0.0.1",
		},
		"an endless listing stops after 100 pages": {
			gitlab: true, maxCalls: maxPages,
			handler: func(w http.ResponseWriter, r *http.Request) {
				page, _ := strconv.Atoi(r.URL.Query().Get("page"))
				w.Header().Set("X-Next-Page", strconv.Itoa(page+1))
				writeJSON(w, 200, []any{})
			},
			wantErr: "GitLab: GET /api/v4/projects/acme%2Fshop/merge_requests: more than 100 pages",
		},
		"an answer over 16 MiB is an error": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte("[" + strings.Repeat(" ", maxBody) + "]"))
			},
			wantErr: "GitHub: GET /api/v3/repos/acme/shop/pulls: the answer is over 16 MiB",
		},
		"an answer that is not the JSON expected is an error": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"not": "a list"})
			},
			wantErr: "the answer is not the JSON expected",
		},
		"a slow API times out": {
			timeout: 100 * time.Millisecond,
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			wantErr: "Client.Timeout exceeded",
		},
		"the token Secret's error is passed on": {
			secrets: func(name, key string) (string, error) { return "", fmt.Errorf("secrets %q not found", name) },
			handler: func(w http.ResponseWriter, r *http.Request) { t.Error("the API was called without the token") },
			wantErr: `GitHub: tokenRef: secrets "scm-token" not found`,
		},
		"an api that is not an http(s) URL is an error": {
			api:     "ftp://example.com",
			handler: func(w http.ResponseWriter, r *http.Request) { t.Error("the API was called") },
			wantErr: `GitLab: api "ftp://example.com" is not an http(s) URL`, gitlab: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				tc.handler(w, r)
			}))
			defer srv.Close()
			api := srv.URL
			if tc.api != "" {
				api = tc.api
			}
			ref := tokenRef
			if tc.noToken {
				ref = nil
			}
			gen := &v1alpha1.PullRequestGenerator{Github: &v1alpha1.PullRequestGeneratorGithub{Owner: "acme", Repo: "shop", API: api, TokenRef: ref}}
			if tc.gitlab {
				gen = &v1alpha1.PullRequestGenerator{GitLab: &v1alpha1.PullRequestGeneratorGitLab{Project: "acme/shop", API: api, TokenRef: ref}}
			}
			secrets := testSecrets
			if tc.secrets != nil {
				secrets = tc.secrets
			}
			_, err := Client{Secrets: secrets, Timeout: tc.timeout, Policy: allowing(api)}.PullRequests(t.Context(), gen)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			for _, secret := range []string{testToken, "wr0ng-t0ken"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows the token: %v", err)
				}
			}
			if n, most := int(calls.Load()), max(tc.maxCalls, 1); n > most {
				t.Errorf("%d calls, want at most %d", n, most)
			}
		})
	}
}
