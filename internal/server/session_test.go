package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestSessions(t *testing.T) {
	key := []byte("key")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(func() time.Time { return now }, time.Hour)
	token, exp, err := s.issue(key, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(now.Add(time.Hour)) {
		t.Errorf("expiry %v, want %v", exp, now.Add(time.Hour))
	}
	noneToken, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.RegisteredClaims{Issuer: issuer, Subject: "admin", ID: "x",
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	otherIssuer, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Issuer: "someone", Subject: "admin", ID: "x",
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString(key)

	tests := map[string]struct {
		key     []byte
		token   string
		at      time.Duration
		wantErr string
	}{
		"a fresh token is valid":                 {key: key, token: token},
		"a token signed with another key fails":  {key: []byte("other"), token: token, wantErr: "signature is invalid"},
		"an expired token fails":                 {key: key, token: token, at: time.Hour + time.Second, wantErr: "expired"},
		"an unsigned token fails":                {key: key, token: noneToken, wantErr: "signing method"},
		"a token of another issuer fails":        {key: key, token: otherIssuer, wantErr: "issuer"},
		"garbage fails":                          {key: key, token: "not.a.token", wantErr: "malformed"},
		"a token cut short fails":                {key: key, token: token[:len(token)-5], wantErr: "signature"},
		"a valid token one second before expiry": {key: key, token: token, at: time.Hour - time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			saved := now
			now = now.Add(tc.at)
			defer func() { now = saved }()
			claims, err := s.verify(tc.key, tc.token)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if claims.Subject != "alice" {
				t.Errorf("subject %q", claims.Subject)
			}
		})
	}

	claims, err := s.verify(key, token)
	if err != nil {
		t.Fatal(err)
	}
	s.revoke(claims)
	if _, err := s.verify(key, token); err != errRevoked {
		t.Errorf("after revoke: %v, want %v", err, errRevoked)
	}
	now = now.Add(2 * time.Hour)
	s.revoke(&sessionClaims{RegisteredClaims: jwt.RegisteredClaims{ID: "later", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}})
	if _, ok := s.revoked[claims.ID]; ok {
		t.Error("an expired revoked token is still remembered")
	}
}

func TestTokenFrom(t *testing.T) {
	tests := map[string]struct {
		header, cookie, want string
	}{
		"a bearer header":                 {header: "Bearer abc", want: "abc"},
		"the scheme is case-insensitive":  {header: "bearer abc", want: "abc"},
		"the cookie":                      {cookie: "xyz", want: "xyz"},
		"the header wins over the cookie": {header: "Bearer abc", cookie: "xyz", want: "abc"},
		"basic auth is not a session":     {header: "Basic abc"},
		"basic auth falls back to cookie": {header: "Basic abc", cookie: "xyz", want: "xyz"},
		"nothing":                         {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			if tc.cookie != "" {
				r.AddCookie(&http.Cookie{Name: CookieName, Value: tc.cookie})
			}
			if got := tokenFrom(r); got != tc.want {
				t.Errorf("tokenFrom = %q, want %q", got, tc.want)
			}
		})
	}
}
