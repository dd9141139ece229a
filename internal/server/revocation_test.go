package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/testwait"
)

func TestAddRevoked(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	unix := func(d time.Duration) []byte { return fmt.Appendf(nil, "%d", now.Add(d).Unix()) }
	tests := map[string]struct {
		data  map[string][]byte
		limit int
		want  map[string][]byte
	}{
		"the first logout makes the first entry": {
			limit: 10,
			want:  map[string][]byte{"new": unix(time.Hour)},
		},
		"entries that have not expired are kept": {
			data:  map[string][]byte{"a": unix(time.Minute)},
			limit: 10,
			want:  map[string][]byte{"a": unix(time.Minute), "new": unix(time.Hour)},
		},
		"expired entries are dropped": {
			data:  map[string][]byte{"old": unix(-time.Second), "now": unix(0), "a": unix(time.Minute)},
			limit: 10,
			want:  map[string][]byte{"a": unix(time.Minute), "new": unix(time.Hour)},
		},
		"beyond the limit the entries expiring first are dropped": {
			data:  map[string][]byte{"soon": unix(time.Minute), "later": unix(2 * time.Hour), "mid": unix(30 * time.Minute)},
			limit: 3,
			want:  map[string][]byte{"later": unix(2 * time.Hour), "mid": unix(30 * time.Minute), "new": unix(time.Hour)},
		},
		"an unreadable expiry keeps its ID revoked": {
			data:  map[string][]byte{"odd": []byte("tomorrow")},
			limit: 10,
			want:  map[string][]byte{"odd": fmt.Appendf(nil, "%d", int64(1)<<40), "new": unix(time.Hour)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := addRevoked(tc.data, "new", now.Add(time.Hour), now, tc.limit)
			if !maps.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("addRevoked = %q, want %q", got, tc.want)
			}
		})
	}
}

// withSettingsCache makes a Server read its settings as in production:
// through a cache of the ConfigMaps and Secrets of its namespace.
func withSettingsCache(t *testing.T, ns string) func(*Server) {
	return func(s *Server) {
		s.Settings = startCache(t, cache.Options{Scheme: s.Client.Scheme(), Mapper: s.Client.RESTMapper(),
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {}, &corev1.Secret{}: {}}})
	}
}

// waitRefused asks GET userinfo with token until it is refused (401), for
// at most 10 s; any answer but 200 or 401 fails at once.
func (h *harness) waitRefused(token string) {
	h.t.Helper()
	testwait.Eventually(h.t, "a logged-out token to be refused", func() error {
		switch r := h.do(http.MethodGet, "/api/v1/session/userinfo", token, nil); r.status {
		case http.StatusUnauthorized:
			return nil
		case http.StatusOK:
			return errors.New("still accepted")
		default:
			h.t.Fatalf("a logged-out token: %d %s, want 401", r.status, r.body)
			return nil
		}
	}, testwait.Timeout(10*time.Second), testwait.Interval(50*time.Millisecond))
}

// A logout survives a restart: the next Server on the same cluster
// refuses the token, and still takes the sessions nobody logged out.
func TestLogoutHoldsAcrossRestart(t *testing.T) {
	h := startServer(t)
	out, kept := h.login("admin", h.password), h.login("admin", h.password)
	if r := h.do(http.MethodDelete, "/api/v1/session", out, nil); r.status != http.StatusOK {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, "/api/v1/session/userinfo", out, nil), http.StatusUnauthorized)

	h.stop()
	next := h.replica()
	r := next.do(http.MethodGet, "/api/v1/session/userinfo", out, nil)
	wantError(t, r, http.StatusUnauthorized)
	if r := next.do(http.MethodGet, "/api/v1/session/userinfo", kept, nil); r.status != http.StatusOK {
		t.Fatalf("a session not logged out, after the restart: %d %s", r.status, r.body)
	}
}

// Two replicas reading their settings through their caches: a logout on
// either is refused on both within a bounded time, and logouts racing on
// both replicas all land in the one Secret.
func TestLogoutReachesEveryReplica(t *testing.T) {
	a := startServerWith(t, Options{}, func(s *Server) { withSettingsCache(t, s.Namespace)(s) })
	b := a.replica(withSettingsCache(t, a.ns))

	token := a.login("admin", a.password)
	if r := b.do(http.MethodGet, "/api/v1/session/userinfo", token, nil); r.status != http.StatusOK {
		t.Fatalf("a session of replica a on replica b: %d %s", r.status, r.body)
	}
	if r := a.do(http.MethodDelete, "/api/v1/session", token, nil); r.status != http.StatusOK {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	b.waitRefused(token)

	// Racing logouts, half on each replica.
	tokens := make([]string, 8)
	for i := range tokens {
		tokens[i] = a.login("admin", a.password)
	}
	var wg sync.WaitGroup
	statuses := make([]int, len(tokens))
	for i, tok := range tokens {
		on := []*harness{a, b}[i%2]
		wg.Go(func() { statuses[i] = on.do(http.MethodDelete, "/api/v1/session", tok, nil).status })
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Fatalf("logout %d: status %d", i, st)
		}
	}
	for _, tok := range tokens {
		a.waitRefused(tok)
		b.waitRefused(tok)
	}
	var secret corev1.Secret
	if err := a.k8s.Get(context.Background(), types.NamespacedName{Namespace: a.ns, Name: RevokedSessionsSecretName}, &secret); err != nil {
		t.Fatal(err)
	}
	if n := len(secret.Data); n != len(tokens)+1 {
		t.Errorf("%s holds %d token IDs, want %d", RevokedSessionsSecretName, n, len(tokens)+1)
	}
}
