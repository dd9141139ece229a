// Package scm reaches the APIs of GitHub (REST v3) and GitLab (v4) for the
// ApplicationSet scmProvider and pullRequest generators: it lists
// repositories, branches, paths and pull requests, and leaves filtering
// and parameters to package appset. A token comes from the Secret key the
// generator's tokenRef names; it is sent only to the generator's API host
// and never appears in an error. A Policy says which API hosts a
// generator may name at all (by default only GitHub's and gitlab.com's),
// whether the generators run, and which Secrets a tokenRef may read.
package scm

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Limits on what one generation reads.
const (
	defaultTimeout = 30 * time.Second
	// maxBody bounds one response.
	maxBody = 16 << 20
	// maxPages bounds one listing (100 items a page).
	maxPages = 100
	perPage  = "100"
)

// Client reaches GitHub and GitLab for the generators.
type Client struct {
	// Secrets reads a key of a Secret in Skiff's namespace, for tokenRef.
	Secrets func(name, key string) (string, error)
	// Timeout bounds each request; 0 is 30 seconds.
	Timeout time.Duration
	// Policy is what the server allows; the zero Policy allows the public
	// hosts' APIs only.
	Policy Policy
}

// The transports every generation shares, so that connections are reused
// rather than left idle per call.
var (
	secureTransport   = http.DefaultTransport.(*http.Transport).Clone()
	insecureTransport = func() *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the generator's insecure: true asks for it
		return t
	}()
)

// errNotFound is a 404, which some calls read as "none".
var errNotFound = errors.New("not found")

// api is one provider's API with its token.
type api struct {
	ctx  context.Context
	http *http.Client
	// base ends with "/"; paths are relative to it.
	base *url.URL
	// name is the provider, for messages: GitHub or GitLab.
	name   string
	token  string
	header func(h http.Header)
	// tokenFrom names the token's Secret key, for a 401.
	tokenFrom string
}

// newAPI checks the generator's api (apiURL, defaultAPI when empty)
// against the policy, then reads the token and readies the client for the
// API at base.
func (c Client) newAPI(ctx context.Context, name, apiURL, defaultAPI, base string, ref *v1alpha1.SecretRef, insecure bool) (*api, error) {
	if err := c.Policy.allows(name, apiURL, defaultAPI); err != nil {
		return nil, err
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s: api %q is not an http(s) URL", name, base)
	}
	a := &api{ctx: ctx, base: u, name: name}
	if ref != nil {
		if c.Secrets == nil {
			return nil, fmt.Errorf("%s: tokenRef: Secrets are not available here", name)
		}
		token, err := c.Secrets(ref.SecretName, ref.Key)
		if err != nil {
			return nil, fmt.Errorf("%s: tokenRef: %w", name, err)
		}
		a.token = strings.TrimSpace(token)
		a.tokenFrom = fmt.Sprintf("Secret %s key %s", ref.SecretName, ref.Key)
	}
	transport := secureTransport
	if insecure {
		transport = insecureTransport
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	a.http = &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: a.sameHost}
	return a, nil
}

// sameHost follows redirects only on the API's host, where the token may
// go.
func (a *api) sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("too many redirects")
	}
	if req.URL.Scheme != a.base.Scheme || req.URL.Host != a.base.Host {
		return fmt.Errorf("redirected to %s://%s, not followed so that the token stays with %s", req.URL.Scheme, req.URL.Host, a.base.Host)
	}
	return nil
}

// get reads one JSON answer at u into out (unless nil) and says where the
// next page is (nil when last).
func (a *api) get(u *url.URL, out any) (next *url.URL, err error) {
	return a.do(http.MethodGet, u, out)
}

// head asks whether u exists, without its body.
func (a *api) head(u *url.URL) error {
	_, err := a.do(http.MethodHead, u, nil)
	return err
}

func (a *api) do(method string, u *url.URL, out any) (next *url.URL, err error) {
	req, err := http.NewRequestWithContext(a.ctx, method, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	req.Header.Set("User-Agent", "skiff")
	if a.header != nil {
		a.header(req.Header)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", a.name, a.mask(err.Error()))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: reading the answer: %s", a.name, method, u.EscapedPath(), a.mask(err.Error()))
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("%s: %s %s: the answer is over %d MiB", a.name, method, u.EscapedPath(), maxBody>>20)
	}
	if err := a.status(resp, method, u, body); err != nil {
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, fmt.Errorf("%s: GET %s: the answer is not the JSON expected: %w", a.name, u.EscapedPath(), err)
		}
	}
	return a.nextPage(resp, u)
}

// status turns an answer that is not 2xx into an error: not found,
// unauthorized, rate limited, or the API's message.
func (a *api) status(resp *http.Response, method string, u *url.URL, body []byte) error {
	if resp.StatusCode/100 == 2 {
		return nil
	}
	where := fmt.Sprintf("%s: %s %s: %s", a.name, method, u.EscapedPath(), resp.Status)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: %w", where, errNotFound)
	case resp.StatusCode == http.StatusUnauthorized && a.token == "":
		return fmt.Errorf("%s: the API needs a token (tokenRef)", where)
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s: the token of %s is not accepted (wrong or expired)", where, a.tokenFrom)
	case resp.StatusCode == http.StatusTooManyRequests ||
		resp.StatusCode == http.StatusForbidden && (resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != ""):
		return fmt.Errorf("%s: rate limit exceeded%s", where, resetsAt(resp.Header))
	}
	if msg := a.message(body); msg != "" {
		return fmt.Errorf("%s: %s", where, msg)
	}
	return errors.New(where)
}

// resetsAt says when a rate limit ends, from GitHub's X-RateLimit-Reset or
// GitLab's RateLimit-Reset (Unix seconds) or Retry-After (seconds).
func resetsAt(h http.Header) string {
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if s, err := strconv.ParseInt(h.Get(k), 10, 64); err == nil {
			return "; it resets at " + time.Unix(s, 0).UTC().Format(time.RFC3339)
		}
	}
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil {
		return fmt.Sprintf("; retry after %d seconds", s)
	}
	return ""
}

// message is the API's error message ({"message": ...} or GitLab's
// {"error": ...}), at most 200 characters, the token masked.
func (a *api) message(body []byte) string {
	var e struct {
		Message any `json:"message"`
		Error   any `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	msg := e.Message
	if msg == nil {
		msg = e.Error
	}
	if msg == nil {
		return ""
	}
	s := a.mask(fmt.Sprint(msg))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// mask hides the token in s.
func (a *api) mask(s string) string {
	if a.token == "" {
		return s
	}
	return strings.ReplaceAll(s, a.token, "********")
}

// linkNext finds rel="next" in a Link header.
var linkNext = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="?next"?`)

// nextPage is the next page of a listing: the Link header's rel="next"
// (GitHub, GitLab), else GitLab's X-Next-Page. A next page on another
// host is refused, so that the token stays with the API.
func (a *api) nextPage(resp *http.Response, u *url.URL) (*url.URL, error) {
	if m := linkNext.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
		next, err := u.Parse(m[1])
		if err != nil {
			return nil, fmt.Errorf("%s: GET %s: the next page's link %q: %w", a.name, u.EscapedPath(), m[1], err)
		}
		if next.Scheme != a.base.Scheme || next.Host != a.base.Host {
			return nil, fmt.Errorf("%s: GET %s: the next page is on %s://%s, not followed so that the token stays with %s", a.name, u.EscapedPath(), next.Scheme, next.Host, a.base.Host)
		}
		return next, nil
	}
	if page := resp.Header.Get("X-Next-Page"); page != "" {
		if _, err := strconv.Atoi(page); err != nil {
			return nil, fmt.Errorf("%s: GET %s: X-Next-Page %q is not a number", a.name, u.EscapedPath(), page)
		}
		next := *u
		q := next.Query()
		q.Set("page", page)
		next.RawQuery = q.Encode()
		return &next, nil
	}
	return nil, nil
}

// url is the API's URL of path (segments escaped already) with query.
func (a *api) url(path string, query url.Values) *url.URL {
	u := *a.base
	u.RawPath = strings.TrimSuffix(a.base.EscapedPath(), "/") + "/" + path
	u.Path, _ = url.PathUnescape(u.RawPath) // escaped by esc and escPath
	u.RawQuery = query.Encode()
	return &u
}

// list reads every page of the listing at path.
func list[T any](a *api, path string, query url.Values) ([]T, error) {
	if query == nil {
		query = url.Values{}
	}
	query.Set("per_page", perPage)
	var out []T
	u := a.url(path, query)
	for range maxPages {
		var items []T
		next, err := a.get(u, &items)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == nil {
			return out, nil
		}
		u = next
	}
	return nil, fmt.Errorf("%s: GET %s: more than %d pages", a.name, a.url(path, nil).EscapedPath(), maxPages)
}

// branchesOf reads a repository's default branch at base/{name}, or lists
// base when all; a 404 (an empty repository) or no default branch gives
// none.
func branchesOf[T any](a *api, base, defaultBranch string, all bool) ([]T, error) {
	var branches []T
	var err error
	switch {
	case all:
		branches, err = list[T](a, base, nil)
	case defaultBranch != "":
		var b T
		_, err = a.get(a.url(base+"/"+esc(defaultBranch), nil), &b)
		branches = []T{b}
	}
	switch {
	case errors.Is(err, errNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return branches, nil
}

// esc escapes one path segment; GitLab's IDs of the form "group/project"
// become one segment too.
func esc(s string) string { return url.PathEscape(s) }

// escPath escapes each segment of a path in a repository.
func escPath(p string) string {
	segments := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}

// apiBase is api with "/" at the end and suffix (api/v3/ or api/v4/)
// added unless there, or def when api is empty.
func apiBase(apiURL, suffix, def string) string {
	if apiURL == "" {
		return def
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	if strings.HasSuffix(apiURL, "/"+suffix) {
		return apiURL
	}
	return apiURL + suffix
}
