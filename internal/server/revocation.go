package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RevokedSessionsSecretName is the Secret of Skiff's namespace that keeps
// the IDs of logged-out session tokens (key) with their expiry (value, Unix
// seconds) until they expire. Every replica reads it through the cache of
// the namespace's Secrets, so a logout holds everywhere and across
// restarts.
const RevokedSessionsSecretName = "skiff-revoked-sessions"

// maxRevokedSessions bounds the Secret (a Secret holds at most 1 MiB; an
// entry takes about 60 bytes). Beyond it the entries that expire first are
// dropped: those tokens would soon stop working anyway.
const maxRevokedSessions = 10000

// revocationBackoff retries a write that lost a race with another
// replica's logout.
var revocationBackoff = wait.Backoff{Steps: 8, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.5}

// parseRevoked reads the Secret's data: token ID → expiry. An unreadable
// expiry keeps the ID revoked for good rather than letting it back in.
func parseRevoked(data map[string][]byte) map[string]time.Time {
	out := make(map[string]time.Time, len(data))
	for id, v := range data {
		exp := time.Unix(1<<40, 0)
		if sec, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			exp = time.Unix(sec, 0)
		}
		out[id] = exp
	}
	return out
}

// addRevoked returns data with id revoked until exp, without the entries
// that expired by now and, past limit entries, without those expiring
// first.
func addRevoked(data map[string][]byte, id string, exp, now time.Time, limit int) map[string][]byte {
	entries := parseRevoked(data)
	entries[id] = exp
	ids := make([]string, 0, len(entries))
	for k, e := range entries {
		if e.After(now) {
			ids = append(ids, k)
		}
	}
	if len(ids) > limit {
		slices.SortFunc(ids, func(a, b string) int { return entries[b].Compare(entries[a]) }) // latest expiry first
		ids = ids[:limit]
	}
	out := make(map[string][]byte, len(ids))
	for _, k := range ids {
		out[k] = []byte(strconv.FormatInt(entries[k].Unix(), 10))
	}
	return out
}

// storeRevoked adds a logged-out token to the Secret, creating it when
// missing; a write that races another replica's is retried.
func (s *Server) storeRevoked(ctx context.Context, claims *sessionClaims) error {
	if claims.ExpiresAt == nil {
		return fmt.Errorf("session %s has no expiry", claims.ID)
	}
	key := types.NamespacedName{Namespace: s.Namespace, Name: RevokedSessionsSecretName}
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err := retry.OnError(revocationBackoff, retriable, func() error {
		var secret corev1.Secret
		err := s.APIReader.Get(ctx, key, &secret)
		if apierrors.IsNotFound(err) {
			secret = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{"app.kubernetes.io/name": key.Name, "app.kubernetes.io/part-of": "argocd"}}}
			secret.Data = addRevoked(nil, claims.ID, claims.ExpiresAt.Time, s.now(), maxRevokedSessions)
			return s.Client.Create(ctx, &secret)
		}
		if err != nil {
			return err
		}
		secret.Data = addRevoked(secret.Data, claims.ID, claims.ExpiresAt.Time, s.now(), maxRevokedSessions)
		return s.Client.Update(ctx, &secret)
	})
	if err != nil {
		return fmt.Errorf("storing the logout in %s: %w", RevokedSessionsSecretName, err)
	}
	return nil
}

// revokedSessions returns the logged-out token IDs of the Secret, read
// from s.Settings (the cache) and parsed once per version.
func (s *Server) revokedSessions(ctx context.Context) (map[string]time.Time, error) {
	var secret corev1.Secret
	err := s.Settings.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: RevokedSessionsSecretName}, &secret)
	if client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading %s: %w", RevokedSessionsSecretName, err)
	}
	version := string(secret.UID) + "/" + secret.ResourceVersion
	s.revokedMu.Lock()
	defer s.revokedMu.Unlock()
	if s.revoked == nil || s.revokedVersion != version {
		s.revoked, s.revokedVersion = parseRevoked(secret.Data), version
	}
	return s.revoked, nil
}
