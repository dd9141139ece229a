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
	"time"
)

// Keys of argocd-secret holding webhook secrets (Argo CD's names).
const (
	keyGitHubSecret          = "webhook.github.secret"
	keyGitLabSecret          = "webhook.gitlab.secret"
	keyBitbucketUUID         = "webhook.bitbucket.uuid"
	keyBitbucketServerSecret = "webhook.bitbucketserver.secret"
	keyGogsSecret            = "webhook.gogs.secret"

	defaultWebhookMaxBytes = 10 << 20
	// defaultWebhookUnverifiedReads bounds the payloads read at once
	// before anything vouches for their sender: with the 10 MiB limit,
	// at most 40 MiB held for unauthenticated posts.
	defaultWebhookUnverifiedReads = 4
	// webhookReadTimeout bounds how long such a read may hold its slot.
	webhookReadTimeout = 10 * time.Second
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
	// errNoSecret refuses a provider without a secret while another has one.
	errNoSecret = errors.New("webhook provider has no secret")
	errIgnored  = errors.New("not a push event")
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

// webhookSecretKeys are the argocd-secret keys of every provider's secret.
var webhookSecretKeys = []string{keyGitHubSecret, keyGitLabSecret, keyBitbucketUUID, keyBitbucketServerSecret, keyGogsSecret}

// webhookSource is a webhook's provider and event as its headers tell
// them, and how the provider proves the sender: a token header compared
// with its secret, or an HMAC of the body under its secret.
type webhookSource struct {
	provider  string
	secretKey string // of argocd-secret
	header    string // the token or signature header
	token     bool   // header carries the secret itself, not an HMAC
	// sigPrefix is what a signature must start with ("" for none);
	// sigHash names the hash of a signature without a "<hash>=" prefix.
	sigPrefix, sigHash string
	push               bool // a push (other events are acknowledged and ignored)
}

// identifyWebhook tells the provider from the headers.
func identifyWebhook(h http.Header) (webhookSource, error) {
	switch {
	case h.Get("X-Gogs-Event") != "":
		return webhookSource{provider: "gogs", secretKey: keyGogsSecret, header: "X-Gogs-Signature", sigHash: "sha256",
			push: h.Get("X-Gogs-Event") == "push"}, nil
	case h.Get("X-GitHub-Event") != "":
		// Only the SHA-256 signature: SHA-1 is GitHub's legacy one.
		return webhookSource{provider: "github", secretKey: keyGitHubSecret, header: "X-Hub-Signature-256", sigPrefix: "sha256=",
			sigHash: "sha256", push: h.Get("X-GitHub-Event") == "push"}, nil
	case h.Get("X-Gitlab-Event") != "":
		e := h.Get("X-Gitlab-Event")
		return webhookSource{provider: "gitlab", secretKey: keyGitLabSecret, header: "X-Gitlab-Token", token: true,
			push: e == "Push Hook" || e == "Tag Push Hook" || e == "System Hook"}, nil
	case h.Get("X-Hook-UUID") != "" || h.Get("X-Event-Key") == "repo:push":
		return webhookSource{provider: "bitbucket", secretKey: keyBitbucketUUID, header: "X-Hook-UUID", token: true,
			push: h.Get("X-Event-Key") == "repo:push"}, nil
	case h.Get("X-Event-Key") != "":
		return webhookSource{provider: "bitbucketserver", secretKey: keyBitbucketServerSecret, header: "X-Hub-Signature",
			sigHash: "sha256", push: h.Get("X-Event-Key") == "repo:refs_changed"}, nil
	}
	return webhookSource{}, fmt.Errorf("unknown webhook: no GitHub, GitLab, Bitbucket or Gogs event header")
}

// authorize checks what the headers can prove before the body is read. A
// provider with a secret must send its token (checked here) or a
// signature (returned as the secret its HMAC must match). A provider
// without one is accepted as Argo CD accepts it only while no provider has
// a secret: once one has, the others would be a way around it. verified
// means the token matched.
func (src webhookSource) authorize(h http.Header, secrets map[string][]byte) (hmacSecret string, verified bool, err error) {
	secret := string(secrets[src.secretKey])
	if secret == "" {
		for _, key := range webhookSecretKeys {
			if len(secrets[key]) > 0 {
				return "", false, fmt.Errorf("%w: %s has no %s, and while %s is set webhooks without a secret are refused",
					errNoSecret, SecretName, src.secretKey, key)
			}
		}
		return "", false, nil
	}
	got := h.Get(src.header)
	switch {
	case src.token && equalSecret(got, secret):
		return "", true, nil
	case src.token || got == "" || !strings.HasPrefix(got, src.sigPrefix):
		return "", false, errUnauthorized
	}
	return secret, false, nil
}

// parse checks the body's signature against hmacSecret (when set) and
// reads the push.
func (src webhookSource) parse(h http.Header, body []byte, hmacSecret string) (*push, error) {
	if hmacSecret != "" && !verifyHMAC(hmacSecret, h.Get(src.header), body, src.sigHash) {
		return nil, errUnauthorized
	}
	if !src.push {
		return nil, errIgnored
	}
	switch src.provider {
	case "gitlab":
		return parseGitLab(body)
	case "bitbucket":
		return parseBitbucketCloud(body)
	case "bitbucketserver":
		return parseBitbucketServer(body)
	}
	return parseGitHubLike(src.provider, body)
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

// handleWebhook refreshes the apps a push touched. Whatever the headers
// can prove is checked before the body is read; a body read before anything
// vouches for its sender (to check its signature, or with no secret
// configured) takes one of a few slots and has a short deadline, so that
// unauthenticated posts cannot make the server hold many payloads at once.
func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request) {
	src, err := identifyWebhook(r.Header)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	st, err := s.loadSettings(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	hmacSecret, verified, err := src.authorize(r.Header, st.secret)
	if err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	limit := s.Options.WebhookMaxBytes
	if limit <= 0 {
		limit = defaultWebhookMaxBytes
	}
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("webhook payload of %d bytes is over the limit of %d", r.ContentLength, limit))
		return
	}
	if !verified {
		select {
		case s.webhookSlots <- struct{}{}:
			defer func() { <-s.webhookSlots }()
		default:
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "too many webhook payloads being read: try again later")
			return
		}
		// Not every ResponseWriter has deadlines (a test's recorder); the
		// server's ReadTimeout still holds then.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(webhookReadTimeout))
	}
	body, err := readWebhookBody(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "webhook payload too large or unreadable")
		return
	}
	ev, err := src.parse(r.Header, body, hmacSecret)
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
	sets, err := s.refreshAppSetsFor(r.Context(), ev)
	if err != nil {
		s.internalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"refreshed": refreshed, "refreshedApplicationSets": sets})
}

// readWebhookBody reads a payload: of a known length (at most the limit,
// checked before) in one allocation of that size, else growing as bytes
// come.
func readWebhookBody(body io.Reader, contentLength int64) ([]byte, error) {
	if contentLength < 0 {
		return io.ReadAll(body)
	}
	buf := make([]byte, contentLength)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}
