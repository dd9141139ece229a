package server

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"sigs.k8s.io/yaml"
)

// Keys of argocd-cm for single sign-on, as Argo CD names them.
const (
	keyURL        = "url"
	keyOIDCConfig = "oidc.config"

	// oidcStateCookie carries a login's state, nonce, PKCE verifier and
	// return URL from /auth/login to /auth/callback, sealed with a key
	// derived from the server's secret key.
	oidcStateCookie = "skiff.oidc"
	oidcStateTTL    = 5 * time.Minute
	// oidcCallbackPath is where the provider sends the browser back.
	oidcCallbackPath = "/auth/callback"
)

// defaultOIDCScopes are Argo CD's requestedScopes default.
var defaultOIDCScopes = []string{"openid", "profile", "email", "groups"}

// oidcConfig is argocd-cm's oidc.config (Argo CD's OIDCConfig), with
// $references to argocd-secret resolved.
type oidcConfig struct {
	Name                   string         `json:"name"`
	Issuer                 string         `json:"issuer"`
	ClientID               string         `json:"clientID"`
	ClientSecret           string         `json:"clientSecret"`
	RequestedScopes        []string       `json:"requestedScopes"`
	RequestedIDTokenClaims map[string]any `json:"requestedIDTokenClaims"`
	LogoutURL              string         `json:"logoutURL"`
}

// parseOIDCConfig reads oidc.config from argocd-cm data: nil without one.
// clientID and clientSecret may be "$key", a key of argocd-secret (Argo
// CD's form; "$secret:key" naming another Secret is not supported).
func parseOIDCConfig(cm map[string]string, secret map[string][]byte) (*oidcConfig, error) {
	raw := strings.TrimSpace(cm[keyOIDCConfig])
	if raw == "" {
		return nil, nil
	}
	var c oidcConfig
	if err := yaml.UnmarshalStrict([]byte(raw), &c); err != nil {
		return nil, fmt.Errorf("%s: %w", keyOIDCConfig, err)
	}
	var err error
	if c.ClientID, err = resolveSecretRef(c.ClientID, secret); err != nil {
		return nil, fmt.Errorf("%s: clientID: %w", keyOIDCConfig, err)
	}
	if c.ClientSecret, err = resolveSecretRef(c.ClientSecret, secret); err != nil {
		return nil, fmt.Errorf("%s: clientSecret: %w", keyOIDCConfig, err)
	}
	c.Issuer = strings.TrimSpace(c.Issuer)
	switch {
	case c.Issuer == "":
		return nil, fmt.Errorf("%s: issuer is required", keyOIDCConfig)
	case c.ClientID == "":
		return nil, fmt.Errorf("%s: clientID is required", keyOIDCConfig)
	}
	if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s: issuer %q is not an http(s) URL", keyOIDCConfig, c.Issuer)
	}
	if c.Name == "" {
		c.Name = "SSO"
	}
	if len(c.RequestedScopes) == 0 {
		c.RequestedScopes = defaultOIDCScopes
	}
	hasOpenID := false
	for _, s := range c.RequestedScopes {
		hasOpenID = hasOpenID || s == oidc.ScopeOpenID
	}
	if !hasOpenID {
		c.RequestedScopes = append([]string{oidc.ScopeOpenID}, c.RequestedScopes...)
	}
	return &c, nil
}

// resolveSecretRef returns v, or the argocd-secret key it names as "$key".
func resolveSecretRef(v string, secret map[string][]byte) (string, error) {
	key, ok := strings.CutPrefix(strings.TrimSpace(v), "$")
	if !ok {
		return v, nil
	}
	if key == "" || strings.Contains(key, ":") {
		return "", fmt.Errorf("%q: only $<key of %s> references are supported", v, SecretName)
	}
	value, ok := secret[key]
	if !ok {
		return "", fmt.Errorf("%s has no key %q", SecretName, key)
	}
	return strings.TrimSpace(string(value)), nil
}

// safeReturnURL checks a return_url: a path on this server ("/" when
// empty); anything that could leave it (a scheme, a host, "//", "\") is
// refused.
func safeReturnURL(raw string) (string, bool) {
	if raw == "" {
		return "/", true
	}
	if len(raw) > 2048 || !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") || strings.ContainsAny(raw, "\\") {
		return "", false
	}
	for _, r := range raw {
		if r < 0x20 || r == 0x7f {
			return "", false
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "", false
	}
	return raw, true
}

// oidcProviders caches the provider's discovery document per issuer.
type oidcProviders struct {
	mu     sync.Mutex
	byName map[string]*oidc.Provider
}

// oidcHTTPClient is the client for the provider: OIDCHTTPClient or one
// with a timeout.
func (s *Server) oidcHTTPClient() *http.Client {
	if s.OIDCHTTPClient != nil {
		return s.OIDCHTTPClient
	}
	return &http.Client{Timeout: 15 * time.Second}
}

// oidcProvider discovers (once per issuer) the provider of c.
func (s *Server) oidcProvider(ctx context.Context, c *oidcConfig) (*oidc.Provider, error) {
	s.oidc.mu.Lock()
	defer s.oidc.mu.Unlock()
	if p, ok := s.oidc.byName[c.Issuer]; ok {
		return p, nil
	}
	// The key set it keeps fetches with this context: not the request's.
	dctx, cancel := context.WithTimeout(oidc.ClientContext(context.WithoutCancel(ctx), s.oidcHTTPClient()), 15*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, c.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discovering the OIDC provider %s: %w", c.Issuer, err)
	}
	if s.oidc.byName == nil {
		s.oidc.byName = map[string]*oidc.Provider{}
	}
	s.oidc.byName[c.Issuer] = p
	return p, nil
}

// oauth2Config is the authorization code flow's configuration.
func oauth2Config(c *oidcConfig, p *oidc.Provider, baseURL string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Endpoint:     p.Endpoint(),
		RedirectURL:  strings.TrimSuffix(baseURL, "/") + oidcCallbackPath,
		Scopes:       c.RequestedScopes,
	}
}

// oidcState is what the state cookie carries.
type oidcState struct {
	State     string `json:"s"`
	Nonce     string `json:"n"`
	Verifier  string `json:"v"`
	ReturnURL string `json:"r"`
	Expires   int64  `json:"e"`
}

// stateAEAD derives the state cookie's cipher from the signing key.
func stateAEAD(signKey []byte) (cipher.AEAD, error) {
	key := sha256.Sum256(append([]byte("skiff oidc state cookie\x00"), signKey...))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealState encrypts and authenticates st for the cookie.
func sealState(signKey []byte, st oidcState) (string, error) {
	aead, err := stateAEAD(signKey)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(oidcStateCookie))), nil
}

// openState checks and decrypts a state cookie that has not expired.
func openState(signKey []byte, value string, now time.Time) (*oidcState, error) {
	data, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return nil, errors.New("malformed login state")
	}
	aead, err := stateAEAD(signKey)
	if err != nil {
		return nil, err
	}
	if len(data) < aead.NonceSize() {
		return nil, errors.New("malformed login state")
	}
	plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(oidcStateCookie))
	if err != nil {
		return nil, errors.New("login state was not issued by this server")
	}
	var st oidcState
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, errors.New("malformed login state")
	}
	if now.Unix() > st.Expires {
		return nil, errors.New("login took too long: start again")
	}
	return &st, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func stateCookie(value string, expires time.Time, secure bool) *http.Cookie {
	c := &http.Cookie{Name: oidcStateCookie, Value: value, Path: "/auth", HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteLaxMode, Expires: expires}
	if value == "" {
		c.MaxAge = -1
		c.Expires = time.Unix(0, 0)
	}
	return c
}

// ssoSettings returns the OIDC configuration and the external URL, or
// answers the error itself.
func (s *Server) ssoSettings(w http.ResponseWriter, r *http.Request) (*settings, bool) {
	st, err := s.loadSettings(r.Context())
	if err != nil {
		s.internalError(w, err)
		return nil, false
	}
	switch {
	case st.oidcErr != nil:
		s.Log.Error("api server: SSO configuration", "error", st.oidcErr)
		writeError(w, http.StatusInternalServerError, "SSO is misconfigured: "+st.oidcErr.Error())
		return nil, false
	case st.oidc == nil:
		writeError(w, http.StatusNotFound, "SSO is not configured: "+ConfigMapName+" has no "+keyOIDCConfig)
		return nil, false
	case st.url == "":
		writeError(w, http.StatusInternalServerError, "SSO is misconfigured: "+ConfigMapName+" has no url (the external URL the redirect URI is built from)")
		return nil, false
	}
	return st, true
}

// handleSSOLogin starts the authorization code flow (with PKCE) at the
// provider; state, nonce and verifier wait in a sealed cookie.
func (s *Server) handleSSOLogin(w http.ResponseWriter, r *http.Request) {
	returnURL, ok := safeReturnURL(r.URL.Query().Get("return_url"))
	if !ok {
		writeError(w, http.StatusBadRequest, "return_url must be a path on this server")
		return
	}
	st, ok := s.ssoSettings(w, r)
	if !ok {
		return
	}
	provider, err := s.oidcProvider(r.Context(), st.oidc)
	if err != nil {
		s.Log.Error("api server: SSO login", "error", err)
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	state, err := randomToken()
	if err != nil {
		s.internalError(w, err)
		return
	}
	nonce, err := randomToken()
	if err != nil {
		s.internalError(w, err)
		return
	}
	ls := oidcState{State: state, Nonce: nonce, Verifier: oauth2.GenerateVerifier(), ReturnURL: returnURL,
		Expires: s.now().Add(oidcStateTTL).Unix()}
	sealed, err := sealState(st.signKey, ls)
	if err != nil {
		s.internalError(w, err)
		return
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce), oauth2.S256ChallengeOption(ls.Verifier)}
	if len(st.oidc.RequestedIDTokenClaims) > 0 {
		claims, err := json.Marshal(map[string]any{"id_token": st.oidc.RequestedIDTokenClaims})
		if err != nil {
			writeError(w, http.StatusInternalServerError, "SSO is misconfigured: requestedIDTokenClaims: "+err.Error())
			return
		}
		opts = append(opts, oauth2.SetAuthURLParam("claims", string(claims)))
	}
	http.SetCookie(w, stateCookie(sealed, s.now().Add(oidcStateTTL), r.TLS != nil))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, oauth2Config(st.oidc, provider, st.url).AuthCodeURL(state, opts...), http.StatusFound)
}

// oidcClaims are the ID token claims Skiff uses.
type oidcClaims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"` // true, or "true" from some providers
	Groups        any    `json:"groups"`         // a list, or one string
	// FederatedClaims are Dex's: the user's ID at the upstream provider.
	FederatedClaims struct {
		UserID string `json:"user_id"`
	} `json:"federated_claims"`
}

// userID names the user as Argo CD does: Dex's federated user ID, else
// the subject. Unlike the email, the provider vouches that it is unique.
func (c oidcClaims) userID() string {
	if c.FederatedClaims.UserID != "" {
		return c.FederatedClaims.UserID
	}
	return c.Subject
}

// emailVerified reports whether the provider says it checked the email.
func (c oidcClaims) emailVerified() bool {
	switch v := c.EmailVerified.(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true")
	}
	return false
}

func (c oidcClaims) groups() []string {
	var out []string
	switch g := c.Groups.(type) {
	case string:
		if g != "" {
			out = append(out, g)
		}
	case []any:
		for _, v := range g {
			if s, ok := v.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// handleSSOCallback finishes the flow: it checks the state, exchanges the
// code, verifies the ID token and issues Skiff's own session for it.
func (s *Server) handleSSOCallback(w http.ResponseWriter, r *http.Request) {
	secure := r.TLS != nil
	q := r.URL.Query()
	cookie, cookieErr := r.Cookie(oidcStateCookie)
	// The state is used once, whatever happens next.
	http.SetCookie(w, stateCookie("", time.Time{}, secure))
	if e := q.Get("error"); e != "" {
		msg := "the identity provider refused the login: " + e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		writeError(w, http.StatusUnauthorized, msg)
		return
	}
	if cookieErr != nil {
		writeError(w, http.StatusBadRequest, "no login in progress (or its cookie expired): start again at /auth/login")
		return
	}
	st, ok := s.ssoSettings(w, r)
	if !ok {
		return
	}
	ls, err := openState(st.signKey, cookie.Value, s.now())
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid login state: "+err.Error())
		return
	}
	state := q.Get("state")
	if state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(ls.State)) != 1 {
		writeError(w, http.StatusBadRequest, "invalid login state: the state parameter does not match")
		return
	}
	code := q.Get("code")
	if code == "" {
		writeError(w, http.StatusBadRequest, "the identity provider returned no code")
		return
	}
	provider, err := s.oidcProvider(r.Context(), st.oidc)
	if err != nil {
		s.Log.Error("api server: SSO callback", "error", err)
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(r.Context(), s.oidcHTTPClient()), 30*time.Second)
	defer cancel()
	token, err := oauth2Config(st.oidc, provider, st.url).Exchange(ctx, code, oauth2.VerifierOption(ls.Verifier))
	if err != nil {
		s.Log.Info("api server: SSO code exchange failed", "error", err)
		writeError(w, http.StatusUnauthorized, "exchanging the code at the identity provider failed: "+err.Error())
		return
	}
	rawID, _ := token.Extra("id_token").(string)
	if rawID == "" {
		writeError(w, http.StatusUnauthorized, "the identity provider returned no ID token")
		return
	}
	idToken, err := provider.Verifier(&oidc.Config{ClientID: st.oidc.ClientID, Now: s.now}).Verify(ctx, rawID)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "invalid ID token: "+err.Error())
		return
	}
	if subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(ls.Nonce)) != 1 {
		writeError(w, http.StatusUnauthorized, "invalid ID token: the nonce does not match")
		return
	}
	var claims oidcClaims
	if err := idToken.Claims(&claims); err != nil {
		writeError(w, http.StatusUnauthorized, "invalid ID token claims: "+err.Error())
		return
	}
	user := claims.userID()
	if user == "" {
		writeError(w, http.StatusUnauthorized, "the ID token names no subject")
		return
	}
	sessionToken, exp, err := s.sessions.issueClaims(st.signKey, sessionClaims{
		SSO: &ssoClaims{Issuer: st.oidc.Issuer, Subject: claims.Subject, UserID: user, Email: claims.Email,
			EmailVerified: claims.emailVerified(), Groups: claims.groups()},
	}, user)
	if err != nil {
		s.internalError(w, err)
		return
	}
	http.SetCookie(w, sessionCookie(sessionToken, exp, secure))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, ls.ReturnURL, http.StatusFound)
}

// settingsResponse is the unauthenticated part of Argo CD's
// GET /api/v1/settings: what a login page needs, no secret.
type settingsResponse struct {
	URL        string              `json:"url"`
	OIDCConfig *publicOIDCSettings `json:"oidcConfig,omitempty"`
}

type publicOIDCSettings struct {
	Name      string   `json:"name"`
	Issuer    string   `json:"issuer"`
	ClientID  string   `json:"clientID"`
	Scopes    []string `json:"scopes"`
	LoginPath string   `json:"loginPath"`
}

// handleSettings answers GET /api/v1/settings without a session.
func (s *Server) handleSettings(w http.ResponseWriter, r *http.Request) {
	st, err := s.loadSettings(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	out := settingsResponse{URL: st.url}
	if st.oidc != nil {
		out.OIDCConfig = &publicOIDCSettings{Name: st.oidc.Name, Issuer: st.oidc.Issuer, ClientID: st.oidc.ClientID,
			Scopes: st.oidc.RequestedScopes, LoginPath: "/auth/login"}
	}
	writeJSON(w, http.StatusOK, out)
}
