package server

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testOIDCUser is who the test provider logs in.
type testOIDCUser struct {
	Sub, Email    string
	EmailVerified bool
	Groups        []string
}

// oidcGrant is an authorization code the provider handed out.
type oidcGrant struct {
	user        testOIDCUser
	nonce       string
	challenge   string
	redirectURI string
	audience    string
}

// testOIDCProvider is an OIDC provider on 127.0.0.1 for tests: discovery,
// a JWKS with one RSA key, an /authorize that approves at once (with
// PKCE S256 required) and a /token that returns a signed ID token.
type testOIDCProvider struct {
	t                      *testing.T
	srv                    *httptest.Server
	key                    *rsa.PrivateKey
	clientID, clientSecret string

	mu       sync.Mutex
	user     testOIDCUser // who /authorize approves next
	audience string       // the ID token's aud when set (default clientID)
	codes    map[string]oidcGrant
}

func newTestOIDCProvider(t *testing.T, clientID, clientSecret string) *testOIDCProvider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &testOIDCProvider{t: t, key: key, clientID: clientID, clientSecret: clientSecret, codes: map[string]oidcGrant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /keys", p.keys)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(p.srv.Close)
	return p
}

func (p *testOIDCProvider) issuer() string { return p.srv.URL }

// next sets who logs in next and the audience of the ID tokens ("" for
// the client ID).
func (p *testOIDCProvider) next(user testOIDCUser, audience string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user, p.audience = user, audience
}

func (p *testOIDCProvider) discovery(w http.ResponseWriter, _ *http.Request) {
	iss := p.issuer()
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                iss,
		"authorization_endpoint":                iss + "/authorize",
		"token_endpoint":                        iss + "/token",
		"jwks_uri":                              iss + "/keys",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func (p *testOIDCProvider) keys(w http.ResponseWriter, _ *http.Request) {
	enc := base64.RawURLEncoding
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "alg": "RS256", "use": "sig", "kid": "test-key",
		"n": enc.EncodeToString(p.key.N.Bytes()),
		"e": enc.EncodeToString(big.NewInt(int64(p.key.E)).Bytes()),
	}}})
}

func (p *testOIDCProvider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("response_type") != "code":
		http.Error(w, "response_type must be code", http.StatusBadRequest)
		return
	case q.Get("client_id") != p.clientID:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		http.Error(w, "PKCE S256 is required", http.StatusBadRequest)
		return
	case q.Get("nonce") == "" || q.Get("state") == "":
		http.Error(w, "nonce and state are required", http.StatusBadRequest)
		return
	case !strings.Contains(" "+q.Get("scope")+" ", " openid "):
		http.Error(w, "scope openid is required", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Host == "" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	code, err := randomToken()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p.mu.Lock()
	p.codes[code] = oidcGrant{user: p.user, nonce: q.Get("nonce"), challenge: q.Get("code_challenge"),
		redirectURI: q.Get("redirect_uri"), audience: p.audience}
	p.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (p *testOIDCProvider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.clientID || secret != p.clientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	code := r.PostForm.Get("code")
	p.mu.Lock()
	grant, ok := p.codes[code]
	delete(p.codes, code)
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case r.PostForm.Get("grant_type") != "authorization_code" || !ok:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	case r.PostForm.Get("redirect_uri") != grant.redirectURI:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "redirect_uri differs"})
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != grant.challenge:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
		return
	}
	aud := grant.audience
	if aud == "" {
		aud = p.clientID
	}
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": p.issuer(), "sub": grant.user.Sub, "aud": aud, "email": grant.user.Email, "email_verified": grant.user.EmailVerified, "groups": grant.user.Groups,
		"nonce": grant.nonce, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	tok.Header["kid"] = "test-key"
	signed, err := tok.SignedString(p.key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "opaque-" + code, "token_type": "Bearer",
		"expires_in": 3600, "id_token": signed})
}
