package server

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
)

// Keys of argocd-secret holding webhook secrets (Argo CD's names).
const (
	keyGitHubSecret          = "webhook.github.secret"
	keyGitLabSecret          = "webhook.gitlab.secret"
	keyBitbucketUUID         = "webhook.bitbucket.uuid"
	keyBitbucketServerSecret = "webhook.bitbucketserver.secret"
	keyGogsSecret            = "webhook.gogs.secret"

	defaultWebhookMaxBytes = 10 << 20
)

// push is what a push event says: the repository's URLs, the branches and
// tags it moved, and the default branch when the provider tells.
type push struct {
	Provider      string
	RepoURLs      []string
	Revisions     []string // short names: "main", "v1.2.0"
	DefaultBranch string
}

var (
	errUnauthorized = errors.New("webhook signature or secret does not match")
	errIgnored      = errors.New("not a push event")
)

// verifyHMAC checks a hex HMAC signature (with an optional "sha256=" or
// "sha1=" prefix naming the hash) of body against secret.
func verifyHMAC(secret, signature string, body []byte, defaultHash string) bool {
	algo, sig := defaultHash, signature
	if a, rest, ok := strings.Cut(signature, "="); ok {
		algo, sig = a, rest
	}
	var newHash func() hash.Hash
	switch algo {
	case "sha256":
		newHash = sha256.New
	case "sha1":
		newHash = sha1.New
	default:
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) == 0 {
		return false
	}
	mac := hmac.New(newHash, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// equalSecret compares a shared token in constant time.
func equalSecret(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// parseWebhook identifies the provider from the headers, verifies the
// signature or token when argocd-secret configures one, and reads the push.
// Without a configured secret, events are accepted as Argo CD accepts them.
func parseWebhook(h http.Header, body []byte, secrets map[string][]byte) (*push, error) {
	secret := func(key string) string { return string(secrets[key]) }
	switch {
	case h.Get("X-Gogs-Event") != "":
		if s := secret(keyGogsSecret); s != "" && !verifyHMAC(s, h.Get("X-Gogs-Signature"), body, "sha256") {
			return nil, errUnauthorized
		}
		if h.Get("X-Gogs-Event") != "push" {
			return nil, errIgnored
		}
		return parseGitHubLike("gogs", body)
	case h.Get("X-GitHub-Event") != "":
		if s := secret(keyGitHubSecret); s != "" {
			sig := h.Get("X-Hub-Signature-256")
			if sig == "" || !strings.HasPrefix(sig, "sha256=") || !verifyHMAC(s, sig, body, "sha256") {
				return nil, errUnauthorized
			}
		}
		if h.Get("X-GitHub-Event") != "push" {
			return nil, errIgnored
		}
		return parseGitHubLike("github", body)
	case h.Get("X-Gitlab-Event") != "":
		if s := secret(keyGitLabSecret); s != "" && !equalSecret(h.Get("X-Gitlab-Token"), s) {
			return nil, errUnauthorized
		}
		if e := h.Get("X-Gitlab-Event"); e != "Push Hook" && e != "Tag Push Hook" && e != "System Hook" {
			return nil, errIgnored
		}
		return parseGitLab(body)
	case h.Get("X-Hook-UUID") != "" || h.Get("X-Event-Key") == "repo:push":
		if s := secret(keyBitbucketUUID); s != "" && !equalSecret(h.Get("X-Hook-UUID"), s) {
			return nil, errUnauthorized
		}
		if h.Get("X-Event-Key") != "repo:push" {
			return nil, errIgnored
		}
		return parseBitbucketCloud(body)
	case h.Get("X-Event-Key") != "":
		if s := secret(keyBitbucketServerSecret); s != "" && !verifyHMAC(s, h.Get("X-Hub-Signature"), body, "sha256") {
			return nil, errUnauthorized
		}
		if h.Get("X-Event-Key") != "repo:refs_changed" {
			return nil, errIgnored
		}
		return parseBitbucketServer(body)
	}
	return nil, fmt.Errorf("unknown webhook: no GitHub, GitLab, Bitbucket or Gogs event header")
}

// shortRef turns refs/heads/x and refs/tags/x into x.
func shortRef(ref string) string {
	if s, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return s
	}
	if s, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		return s
	}
	return ref
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// parseGitHubLike reads a GitHub (or Gogs/Gitea) push payload.
func parseGitHubLike(provider string, body []byte) (*push, error) {
	var p struct {
		Ref        string `json:"ref"`
		Repository struct {
			HTMLURL       string `json:"html_url"`
			CloneURL      string `json:"clone_url"`
			SSHURL        string `json:"ssh_url"`
			GitURL        string `json:"git_url"`
			DefaultBranch string `json:"default_branch"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("invalid %s payload: %w", provider, err)
	}
	r := p.Repository
	return &push{Provider: provider, RepoURLs: nonEmpty(r.HTMLURL, r.CloneURL, r.SSHURL, r.GitURL),
		Revisions: nonEmpty(shortRef(p.Ref)), DefaultBranch: r.DefaultBranch}, nil
}

func parseGitLab(body []byte) (*push, error) {
	var p struct {
		Ref     string `json:"ref"`
		Project struct {
			WebURL        string `json:"web_url"`
			HTTPURL       string `json:"git_http_url"`
			SSHURL        string `json:"git_ssh_url"`
			DefaultBranch string `json:"default_branch"`
		} `json:"project"`
		Repository struct {
			Homepage string `json:"homepage"`
			HTTPURL  string `json:"git_http_url"`
			SSHURL   string `json:"git_ssh_url"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("invalid gitlab payload: %w", err)
	}
	return &push{Provider: "gitlab",
		RepoURLs: nonEmpty(p.Project.WebURL, p.Project.HTTPURL, p.Project.SSHURL,
			p.Repository.Homepage, p.Repository.HTTPURL, p.Repository.SSHURL),
		Revisions: nonEmpty(shortRef(p.Ref)), DefaultBranch: p.Project.DefaultBranch}, nil
}

func parseBitbucketCloud(body []byte) (*push, error) {
	var p struct {
		Repository struct {
			FullName string `json:"full_name"`
			Links    struct {
				HTML struct {
					Href string `json:"href"`
				} `json:"html"`
			} `json:"links"`
			MainBranch struct {
				Name string `json:"name"`
			} `json:"mainbranch"`
		} `json:"repository"`
		Push struct {
			Changes []struct {
				New *struct {
					Name string `json:"name"`
				} `json:"new"`
				Old *struct {
					Name string `json:"name"`
				} `json:"old"`
			} `json:"changes"`
		} `json:"push"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("invalid bitbucket payload: %w", err)
	}
	out := &push{Provider: "bitbucket", RepoURLs: nonEmpty(p.Repository.Links.HTML.Href),
		DefaultBranch: p.Repository.MainBranch.Name}
	if p.Repository.FullName != "" {
		out.RepoURLs = append(out.RepoURLs, "git@bitbucket.org:"+p.Repository.FullName+".git")
	}
	for _, c := range p.Push.Changes {
		switch {
		case c.New != nil:
			out.Revisions = append(out.Revisions, c.New.Name)
		case c.Old != nil: // a deleted branch or tag
			out.Revisions = append(out.Revisions, c.Old.Name)
		}
	}
	return out, nil
}

func parseBitbucketServer(body []byte) (*push, error) {
	var p struct {
		Repository struct {
			Links struct {
				Clone []struct {
					Href string `json:"href"`
				} `json:"clone"`
				Self []struct {
					Href string `json:"href"`
				} `json:"self"`
			} `json:"links"`
		} `json:"repository"`
		Changes []struct {
			Ref struct {
				ID string `json:"id"`
			} `json:"ref"`
			RefID string `json:"refId"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("invalid bitbucket server payload: %w", err)
	}
	out := &push{Provider: "bitbucketserver"}
	for _, c := range p.Repository.Links.Clone {
		out.RepoURLs = append(out.RepoURLs, c.Href)
	}
	for _, c := range p.Changes {
		ref := c.Ref.ID
		if ref == "" {
			ref = c.RefID
		}
		if ref != "" {
			out.Revisions = append(out.Revisions, shortRef(ref))
		}
	}
	return out, nil
}

// handleWebhook refreshes the apps a push touched.
func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request) {
	limit := s.Options.WebhookMaxBytes
	if limit <= 0 {
		limit = defaultWebhookMaxBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "webhook payload too large or unreadable")
		return
	}
	st, err := s.loadSettings(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	ev, err := parseWebhook(r.Header, body, st.secret)
	switch {
	case errors.Is(err, errUnauthorized):
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	case errors.Is(err, errIgnored):
		writeJSON(w, http.StatusOK, map[string]any{"refreshed": []string{}, "message": "event ignored"})
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	refreshed, err := s.refreshFor(r.Context(), ev)
	if err != nil {
		s.internalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"refreshed": refreshed})
}
