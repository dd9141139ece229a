package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

func TestParseOIDCConfig(t *testing.T) {
	secret := map[string][]byte{"oidc.clientSecret": []byte("s3cret\n"), "oidc.clientID": []byte("skiff")}
	for _, tc := range []struct {
		name, config string
		want         *oidcConfig
		wantErr      string
	}{
		{name: "absent"},
		{name: "blank", config: "  \n"},
		{name: "literal secret and defaults",
			config: "name: Okta\nissuer: https://idp.example.com\nclientID: skiff\nclientSecret: plain\n",
			want: &oidcConfig{Name: "Okta", Issuer: "https://idp.example.com", ClientID: "skiff", ClientSecret: "plain",
				RequestedScopes: defaultOIDCScopes}},
		{name: "secret references",
			config: "issuer: https://idp.example.com/\nclientID: $oidc.clientID\nclientSecret: $oidc.clientSecret\nrequestedScopes: [email]\nlogoutURL: https://idp.example.com/logout\n",
			want: &oidcConfig{Name: "SSO", Issuer: "https://idp.example.com/", ClientID: "skiff", ClientSecret: "s3cret",
				RequestedScopes: []string{"openid", "email"}, LogoutURL: "https://idp.example.com/logout"}},
		{name: "requested ID token claims",
			config: "issuer: https://idp.example.com\nclientID: skiff\nrequestedIDTokenClaims: {groups: {essential: true}}\n",
			want: &oidcConfig{Name: "SSO", Issuer: "https://idp.example.com", ClientID: "skiff", RequestedScopes: defaultOIDCScopes,
				RequestedIDTokenClaims: map[string]any{"groups": map[string]any{"essential": true}}}},
		{name: "missing secret key", config: "issuer: https://idp.example.com\nclientID: skiff\nclientSecret: $oidc.other\n",
			wantErr: `argocd-secret has no key "oidc.other"`},
		{name: "other secret", config: "issuer: https://idp.example.com\nclientID: skiff\nclientSecret: $my-secret:key\n",
			wantErr: "only $<key of argocd-secret> references"},
		{name: "no issuer", config: "clientID: skiff\n", wantErr: "issuer is required"},
		{name: "no client", config: "issuer: https://idp.example.com\n", wantErr: "clientID is required"},
		{name: "issuer not a URL", config: "issuer: idp.example.com\nclientID: skiff\n", wantErr: "not an http(s) URL"},
		{name: "unknown field", config: "issuer: https://idp.example.com\nclientID: skiff\nclientSecrett: x\n", wantErr: "clientSecrett"},
		{name: "not YAML", config: "issuer: [\n", wantErr: "oidc.config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := map[string]string{}
			if tc.config != "" {
				cm[keyOIDCConfig] = tc.config
			}
			got, err := parseOIDCConfig(cm, secret)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && !equalOIDCConfig(*got, *tc.want)) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func equalOIDCConfig(a, b oidcConfig) bool {
	ca, cb := a.RequestedIDTokenClaims, b.RequestedIDTokenClaims
	a.RequestedIDTokenClaims, b.RequestedIDTokenClaims = nil, nil
	if len(ca) != len(cb) {
		return false
	}
	for k := range ca {
		if _, ok := cb[k]; !ok {
			return false
		}
	}
	return a.Name == b.Name && a.Issuer == b.Issuer && a.ClientID == b.ClientID && a.ClientSecret == b.ClientSecret &&
		a.LogoutURL == b.LogoutURL && slices.Equal(a.RequestedScopes, b.RequestedScopes)
}

func TestSafeReturnURL(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                "/",
		"/":                               "/",
		"/applications":                   "/applications",
		"/applications/guestbook?tab=x#y": "/applications/guestbook?tab=x#y",
	} {
		if got, ok := safeReturnURL(raw); !ok || got != want {
			t.Errorf("safeReturnURL(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{
		"https://evil.example/", "//evil.example/x", "/\\evil.example", "\\\\evil.example", "evil.example",
		"javascript:alert(1)", "/a\nb", "/a\tb", "http:/evil.example", strings.Repeat("/a", 1100),
	} {
		if got, ok := safeReturnURL(raw); ok {
			t.Errorf("safeReturnURL(%q) = %q, want refused", raw, got)
		}
	}
}

func TestParseScopes(t *testing.T) {
	for v, want := range map[string][]string{
		"":                {"groups"},
		"[]":              {"groups"},
		"[groups]":        {"groups"},
		"[groups, email]": {"groups", "email"},
		`["email","sub"]`: {"email", "sub"},
		"groups":          {"groups"},
	} {
		if got := parseScopes(v); !slices.Equal(got, want) {
			t.Errorf("parseScopes(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestStateCookieIsSealed(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_700_000_000, 0)
	sealed, err := sealState(key, oidcState{State: "s", Nonce: "n", Verifier: "v", ReturnURL: "/x", Expires: now.Add(time.Minute).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "/x") {
		t.Errorf("state cookie %q shows its content", sealed)
	}
	st, err := openState(key, sealed, now)
	if err != nil || st.State != "s" || st.Nonce != "n" || st.Verifier != "v" || st.ReturnURL != "/x" {
		t.Fatalf("openState = %+v, %v", st, err)
	}
	if _, err := openState(key, sealed, now.Add(2*time.Minute)); err == nil {
		t.Error("an expired state was accepted")
	}
	if _, err := openState([]byte("another key"), sealed, now); err == nil {
		t.Error("a state sealed with another key was accepted")
	}
	if _, err := openState(key, sealed[:len(sealed)-2]+"AA", now); err == nil {
		t.Error("a tampered state was accepted")
	}
	if _, err := openState(key, "!!", now); err == nil {
		t.Error("garbage was accepted")
	}
}

// setConfig sets keys of argocd-cm; an empty value deletes one.
func (h *harness) setConfig(data map[string]string) {
	h.t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: ConfigMapName}}
	err := h.k8s.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	if err != nil && !apierrors.IsNotFound(err) {
		h.t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	for k, v := range data {
		if v == "" {
			delete(cm.Data, k)
		} else {
			cm.Data[k] = v
		}
	}
	if apierrors.IsNotFound(err) {
		err = h.k8s.Create(ctx, cm)
	} else {
		err = h.k8s.Update(ctx, cm)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// browser is an HTTP client with a cookie jar that follows the SSO
// redirects (to the provider and back to /auth/callback) and stops at
// any other.
func (h *harness) browser() *http.Client {
	h.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: h.http.Transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if req.URL.Path == "/authorize" || req.URL.Path == oidcCallbackPath {
				return nil
			}
			return http.ErrUseLastResponse
		}}
}

// get sends GET path with c and returns the answer.
func (h *harness) get(c *http.Client, path string) response {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.send(c, req)
}

// sessionCookieOf is c's Skiff session cookie, "" without one.
func (h *harness) sessionCookieOf(c *http.Client) string {
	u, err := url.Parse(h.url)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == CookieName {
			return ck.Value
		}
	}
	return ""
}

// ssoLogin logs c in through the provider and returns the final answer
// (a redirect to return_url on success).
func (h *harness) ssoLogin(c *http.Client, returnURL string) response {
	h.t.Helper()
	return h.get(c, "/auth/login?return_url="+url.QueryEscape(returnURL))
}

func TestSSOLogin(t *testing.T) {
	h := startServer(t)
	provider := newTestOIDCProvider(t, "skiff-client", "skiff-client-secret")
	h.setSecretKey("oidc.clientSecret", "skiff-client-secret")

	// Without oidc.config there is no SSO.
	r := h.do(http.MethodGet, "/api/v1/settings", "", nil)
	if r.status != http.StatusOK || strings.Contains(string(r.body), "oidcConfig") {
		t.Fatalf("settings without SSO: %d %s", r.status, r.body)
	}
	wantError(t, h.get(h.browser(), "/auth/login"), http.StatusNotFound)

	h.setConfig(map[string]string{
		keyURL: h.url,
		keyOIDCConfig: "name: Test IdP\nissuer: " + provider.issuer() + "\nclientID: skiff-client\n" +
			"clientSecret: $oidc.clientSecret\nrequestedScopes: [openid, profile, email, groups]\n",
	})
	h.setRBAC(map[string]string{"policy.csv": "g, devs, role:admin\n", "policy.default": "role:readonly"})
	src := v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "guestbook", TargetRevision: "HEAD"}
	h.createApp("guestbook", "default", nil, src)
	h.createApp("other", "default", nil, src)

	// The login page learns of SSO from the settings, which hold no secret.
	r = h.do(http.MethodGet, "/api/v1/settings", "", nil)
	var settings settingsResponse
	r.json(t, &settings)
	if r.status != http.StatusOK || settings.URL != h.url || settings.OIDCConfig == nil ||
		settings.OIDCConfig.Name != "Test IdP" || settings.OIDCConfig.Issuer != provider.issuer() {
		t.Fatalf("settings: %d %s", r.status, r.body)
	}
	if strings.Contains(strings.ToLower(string(r.body)), "secret") {
		t.Errorf("settings show a secret: %s", r.body)
	}

	t.Run("a group member logs in and may sync", func(t *testing.T) {
		provider.next(testOIDCUser{Sub: "u-1", Email: "alice@example.com", EmailVerified: true, Groups: []string{"devs", "qa"}}, "")
		b := h.browser()
		r := h.ssoLogin(b, "/applications/guestbook?tab=tree")
		if r.status != http.StatusFound || r.header.Get("Location") != "/applications/guestbook?tab=tree" {
			t.Fatalf("SSO login: %d %s %s", r.status, r.header.Get("Location"), r.body)
		}
		if h.sessionCookieOf(b) == "" {
			t.Fatal("no session cookie after SSO login")
		}
		r = h.get(b, "/api/v1/session/userinfo")
		var info userInfo
		r.json(t, &info)
		if r.status != http.StatusOK || !info.LoggedIn || info.Username != "alice@example.com" ||
			info.Iss != provider.issuer() || !slices.Equal(info.Groups, []string{"devs", "qa"}) {
			t.Fatalf("userinfo: %d %s", r.status, r.body)
		}
		token := h.sessionCookieOf(b)
		r = h.do(http.MethodPost, "/api/v1/applications/guestbook/sync", token, map[string]any{})
		if r.status != http.StatusOK {
			t.Fatalf("sync by a devs member: %d %s", r.status, r.body)
		}
		if op := h.getApp("guestbook").Operation; op == nil || op.InitiatedBy.Username != "alice@example.com" {
			t.Errorf("operation %+v, want one initiated by alice@example.com", op)
		}
		// No local password to change.
		wantError(t, h.do(http.MethodPut, "/api/v1/account/password", token,
			map[string]string{"currentPassword": "x", "newPassword": "long-enough-password"}), http.StatusBadRequest)
	})

	t.Run("a user outside the group gets the default role", func(t *testing.T) {
		provider.next(testOIDCUser{Sub: "u-2", Email: "bob@example.com", Groups: []string{"ops"}}, "")
		b := h.browser()
		if r := h.ssoLogin(b, ""); r.status != http.StatusFound || r.header.Get("Location") != "/" {
			t.Fatalf("SSO login: %d %s %s", r.status, r.header.Get("Location"), r.body)
		}
		token := h.sessionCookieOf(b)
		if r := h.do(http.MethodGet, "/api/v1/applications/other", token, nil); r.status != http.StatusOK {
			t.Fatalf("readonly get: %d %s", r.status, r.body)
		}
		wantError(t, h.do(http.MethodPost, "/api/v1/applications/other/sync", token, map[string]any{}), http.StatusForbidden)
	})

	// The RBAC subject is the sub, as in Argo CD; local account names are
	// the local accounts' alone, whatever the provider says.
	canSync := func(t *testing.T, user testOIDCUser) string {
		t.Helper()
		provider.next(user, "")
		b := h.browser()
		if r := h.ssoLogin(b, "/"); r.status != http.StatusFound {
			t.Fatalf("SSO login of %+v: %d %s", user, r.status, r.body)
		}
		r := h.do(http.MethodGet, "/api/v1/account/can-i/applications/sync/default/guestbook", h.sessionCookieOf(b), nil)
		var out struct{ Value string }
		r.json(t, &out)
		if r.status != http.StatusOK {
			t.Fatalf("can-i of %+v: %d %s", user, r.status, r.body)
		}
		return out.Value
	}
	t.Run("an SSO user named admin is not the local admin", func(t *testing.T) {
		for _, user := range []testOIDCUser{
			{Sub: "admin"},
			{Sub: "admin", Email: "admin", EmailVerified: true},
			{Sub: "u-4", Email: "admin", EmailVerified: true},
			{Sub: "u-5", Groups: []string{"admin"}},
		} {
			if got := canSync(t, user); got != "no" {
				t.Errorf("SSO user %+v may sync: %s, want no (the default readonly role)", user, got)
			}
		}
	})
	t.Run("an email is a subject only when verified and scopes name it", func(t *testing.T) {
		h.setRBAC(map[string]string{"policy.csv": "g, dave@example.com, role:admin\ng, u-6, role:admin\n", "policy.default": "role:readonly"})
		if got := canSync(t, testOIDCUser{Sub: "u-6", Email: "someone@example.com"}); got != "yes" {
			t.Errorf("the sub named in the policy may sync: %s, want yes", got)
		}
		dave := testOIDCUser{Sub: "u-7", Email: "dave@example.com", EmailVerified: true}
		if got := canSync(t, dave); got != "no" {
			t.Errorf("an email without scopes [email]: %s, want no", got)
		}
		h.setRBAC(map[string]string{"policy.csv": "g, dave@example.com, role:admin\n", "policy.default": "role:readonly",
			"scopes": "[groups, email]"})
		if got := canSync(t, dave); got != "yes" {
			t.Errorf("a verified email with scopes [groups, email]: %s, want yes", got)
		}
		dave.EmailVerified = false
		if got := canSync(t, dave); got != "no" {
			t.Errorf("an unverified email with scopes [groups, email]: %s, want no", got)
		}
		h.setRBAC(map[string]string{"policy.csv": "g, devs, role:admin\n", "policy.default": "role:readonly"})
	})

	t.Run("a bad state makes no session", func(t *testing.T) {
		provider.next(testOIDCUser{Sub: "u-1", Email: "alice@example.com", Groups: []string{"devs"}}, "")
		b := h.browser()
		b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		r := h.get(b, "/auth/login")
		if r.status != http.StatusFound {
			t.Fatalf("login: %d %s", r.status, r.body)
		}
		// The provider's answer, with the state changed.
		resp, err := b.Get(r.header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || back.Path != oidcCallbackPath {
			t.Fatalf("provider redirect %q: %v", resp.Header.Get("Location"), err)
		}
		q := back.Query()
		q.Set("state", "forged")
		wantError(t, h.get(b, oidcCallbackPath+"?"+q.Encode()), http.StatusBadRequest)
		if h.sessionCookieOf(b) != "" {
			t.Error("a session cookie after a bad state")
		}
		// The state cookie is gone too: the right state no longer works.
		wantError(t, h.get(b, back.RequestURI()), http.StatusBadRequest)
		// Without any login in progress.
		wantError(t, h.get(h.browser(), oidcCallbackPath+"?code=x&state=y"), http.StatusBadRequest)
		// The provider's refusal is shown.
		r = h.get(h.browser(), oidcCallbackPath+"?error=access_denied&error_description=nope")
		wantError(t, r, http.StatusUnauthorized)
		if !strings.Contains(string(r.body), "access_denied") {
			t.Errorf("provider error not shown: %s", r.body)
		}
	})

	t.Run("an ID token for another audience is refused", func(t *testing.T) {
		provider.next(testOIDCUser{Sub: "u-1", Email: "alice@example.com", Groups: []string{"devs"}}, "another-client")
		b := h.browser()
		r := h.ssoLogin(b, "/")
		wantError(t, r, http.StatusUnauthorized)
		if !strings.Contains(string(r.body), "audience") {
			t.Errorf("error %s does not name the audience", r.body)
		}
		if h.sessionCookieOf(b) != "" {
			t.Error("a session cookie for another audience's token")
		}
	})

	t.Run("open redirects are refused", func(t *testing.T) {
		for _, ret := range []string{"https://evil.example/", "//evil.example/", "/\\evil.example"} {
			b := h.browser()
			wantError(t, h.ssoLogin(b, ret), http.StatusBadRequest)
			if h.sessionCookieOf(b) != "" {
				t.Errorf("return_url %q: a session cookie", ret)
			}
		}
	})

	t.Run("removing oidc.config ends SSO sessions", func(t *testing.T) {
		provider.next(testOIDCUser{Sub: "u-3", Email: "carol@example.com", Groups: []string{"devs"}}, "")
		b := h.browser()
		if r := h.ssoLogin(b, "/"); r.status != http.StatusFound {
			t.Fatalf("SSO login: %d %s", r.status, r.body)
		}
		admin := h.login("admin", h.password)
		h.setConfig(map[string]string{keyOIDCConfig: ""})
		wantError(t, h.get(b, "/api/v1/session/userinfo"), http.StatusUnauthorized)
		if r := h.do(http.MethodGet, "/api/v1/session/userinfo", admin, nil); r.status != http.StatusOK {
			t.Errorf("local session after removing SSO: %d %s", r.status, r.body)
		}
		wantError(t, h.get(h.browser(), "/auth/login"), http.StatusNotFound)
	})
}
