// Package server is Skiff's API server: the JSON API under /api/v1, local
// users and their sessions, optional OIDC single sign-on, RBAC in Argo
// CD's policy format and git webhooks, served on one port (TLS by default)
// as a Runnable of the controller manager, reading through the manager's
// client and caches.
//
// Files: server.go (listener, routes, authentication middleware),
// tls.go (the self-signed certificate), session.go (tokens and cookies),
// revocation.go (logged-out tokens, kept in a Secret for every replica),
// login.go (session endpoints), ratelimit.go (failed-login limits),
// accounts.go and settings.go (argocd-cm / argocd-secret), oidc.go
// (single sign-on: oidc.config, /auth/login, /auth/callback and the
// public /api/v1/settings), rbac.go (argocd-rbac-cm with casbin),
// applications.go (the API), appwrite.go (creating and updating apps),
// tree.go (an app's live resource tree), resources.go (diffs, manifests
// and live objects of an app), events.go (Kubernetes Events), stream.go
// (server-sent event streams of apps and Rollouts), rollouts.go (the
// Rollouts API), clusters.go (the clusters API), webhook.go (payloads and
// signatures), repourl.go (which apps a push touches), refresh.go (asking the controller to refresh).
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/crdschema"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/knowntypes"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/resourceactions"
	"github.com/skiffcd/skiff/internal/server/ui"
)

// The listener's request timeouts; event streams give each write its own
// deadline (stream.go). Variables so that a test can show a stream
// outliving them.
var (
	serverReadTimeout  = time.Minute
	serverWriteTimeout = 2 * time.Minute
)

// Options configure the listener.
type Options struct {
	// Addr is the listen address (":8080" by default).
	Addr string
	// Insecure serves plain HTTP (behind a TLS-terminating load balancer).
	Insecure bool
	// TLSCertFile and TLSKeyFile name a certificate; without them a
	// self-signed one is generated at start.
	TLSCertFile, TLSKeyFile string
	// Listener, when set, is used instead of listening on Addr (tests).
	Listener net.Listener
	// WebhookMaxBytes bounds a webhook payload (default 10 MiB).
	WebhookMaxBytes int64
	// WebhookUnverifiedReads bounds the webhook payloads read at once
	// before a token vouches for their sender (default 4); beyond it
	// webhooks are refused with 503.
	WebhookUnverifiedReads int
	// SessionDuration is how long a login lasts (default 24 h).
	SessionDuration time.Duration
	// MaxLoginFailures within LoginFailureWindow block a user name or
	// client address (defaults 5 and 5 minutes).
	MaxLoginFailures   int
	LoginFailureWindow time.Duration
}

// Server serves the API. Its fields are set before Start.
type Server struct {
	// Client reads and writes Applications and AppProjects and writes
	// argocd-secret at first start.
	Client client.Client
	// Settings reads argocd-cm, argocd-secret and argocd-rbac-cm, usually
	// from a cache of Skiff's namespace; nil means Client.
	Settings client.Reader
	// ArgoCDSettings is the live argocd-cm's parsed settings (tracking
	// method, instance label); nil means their defaults.
	ArgoCDSettings *argocdcm.Source
	// APIReader reads uncached: argocd-secret at first start, and a
	// Rollout's pods and runs (no pod informer); nil means Client.
	APIReader client.Reader
	// Namespace holds the configuration and the Applications.
	Namespace string
	// Refresher asks for an immediate comparison of apps a push touched.
	Refresher Refresher
	// Repo renders apps for their manifests and diffs; Dynamic and Mapper
	// read live objects of any kind; KubeVersion is the cluster's, for
	// Helm. Without Dynamic and Mapper the resource endpoints answer 503.
	Repo        *reposerver.Server
	Dynamic     dynamic.Interface
	Mapper      meta.RESTMapper
	KubeVersion string
	// Informers (the manager's cache) feed the event streams; nil turns
	// them off (503).
	Informers cache.Informers
	// Clusters resolves the destinations of the apps the API writes and
	// reads; nil means the in-cluster entry only.
	Clusters clusters.Registry
	// ClusterStates gives /api/v1/clusters the clusters' connection
	// states; nil leaves them Unknown.
	ClusterStates clusterops.States
	// CustomActions are argocd-cm's resource actions; nil means the
	// built-in ones only.
	CustomActions resourceactions.Custom
	// Health judges the resource tree's nodes; the zero Judge applies
	// the built-in rules only (argocd-cm's health scripts come from
	// argocdcm.Source.HealthJudge).
	Health health.Judge
	// IgnoreDifferences, when set, returns the rules the diffs add to every
	// app's spec.ignoreDifferences (argocd-cm's), as the controller does.
	IgnoreDifferences func() []v1alpha1.ResourceIgnoreDifferences
	// KnownTypeFields, when set, returns argocd-cm's knownTypeFields, which
	// the diffs compare with, as the controller does.
	KnownTypeFields func() []knowntypes.Field
	// Now is the clock; nil means time.Now.
	Now     func() time.Time
	Options Options
	// Log receives request errors; nil discards them.
	Log *slog.Logger
	// OIDCHTTPClient talks to the OIDC provider of argocd-cm's
	// oidc.config; nil means a client with a 15 s timeout.
	OIDCHTTPClient *http.Client

	initOnce           sync.Once
	sessions           *sessions
	userLimiter        *failureLimiter // local accounts' failed logins
	unknownUserLimiter *failureLimiter // those of names without an account
	ipLimiter          *failureLimiter
	bootstrapMu        sync.Mutex
	unsavedPassword    string // the generated admin password argocd-secret holds the hash of, until argocd-initial-admin-secret holds it
	settingsMu         sync.Mutex
	parsed             *settings // the settings of parsedVersion (argocd-cm/argocd-secret resourceVersions)
	parsedVersion      string
	revokedMu          sync.Mutex
	revoked            map[string]time.Time // the revocation Secret of revokedVersion (UID/resourceVersion)
	revokedVersion     string
	policyMu           sync.Mutex
	compiled           *policy
	compiledVersion    string
	streams            *streamHub
	webhookSlots       chan struct{} // one per webhook payload read unverified
	oidc               oidcProviders
	liveReadersMu      sync.Mutex
	liveReaders        map[string]*liveReader // registered clusters' clients, by server
	localSchemasOnce   sync.Once
	localSchemas       *crdschema.Source // the local cluster's CRD defaults, for diffs
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		if s.Settings == nil {
			s.Settings = s.Client
		}
		if s.APIReader == nil {
			s.APIReader = s.Client
		}
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		s.streams = newStreamHub()
		slots := s.Options.WebhookUnverifiedReads
		if slots <= 0 {
			slots = defaultWebhookUnverifiedReads
		}
		s.webhookSlots = make(chan struct{}, slots)
		s.sessions = newSessions(s.now, s.Options.SessionDuration)
		s.userLimiter = newFailureLimiter(s.Options.MaxLoginFailures, s.Options.LoginFailureWindow, s.now)
		s.unknownUserLimiter = newFailureLimiter(s.Options.MaxLoginFailures, s.Options.LoginFailureWindow, s.now)
		s.ipLimiter = newFailureLimiter(s.Options.MaxLoginFailures, s.Options.LoginFailureWindow, s.now)
	})
}

// NeedLeaderElection is false: every replica serves the API.
func (s *Server) NeedLeaderElection() bool { return false }

// Start writes the initial secrets, then serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	s.init()
	ln := s.Options.Listener
	if ln == nil {
		addr := s.Options.Addr
		if addr == "" {
			addr = ":8080"
		}
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("api server: %w", err)
		}
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       serverReadTimeout,
		WriteTimeout:      serverWriteTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	// Shutdown waits for open requests: event streams must end first.
	srv.RegisterOnShutdown(s.streams.end)
	if !s.Options.Insecure {
		cert, err := s.certificate()
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("api server: %w", err)
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// Until the secrets are written (the namespace may not exist yet),
	// logins answer 503; a failure to write them must not stop the
	// controllers running in the same process.
	go s.bootstrapUntilDone(ctx)
	select {
	case err := <-errc:
		return fmt.Errorf("api server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// A connection opened but never used counts as busy for five
		// seconds: one such client must not turn a stop into an error.
		_ = srv.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("api server shutdown: %w", err)
		}
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler routes every endpoint. Start calls it; tests may serve it
// themselves after Bootstrap.
func (s *Server) Handler() http.Handler {
	s.init()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("POST /api/webhook", s.handleWebhook)
	mux.HandleFunc("POST /api/v1/session", s.handleLogin)
	mux.HandleFunc("GET /api/v1/settings", s.handleSettings)
	mux.HandleFunc("GET /auth/login", s.handleSSOLogin)
	mux.HandleFunc("GET "+oidcCallbackPath, s.handleSSOCallback)
	mux.Handle("DELETE /api/v1/session", s.authenticated(s.handleLogout))
	mux.Handle("GET /api/v1/session/userinfo", s.authenticated(s.handleUserInfo))
	mux.Handle("PUT /api/v1/account/password", s.authenticated(s.handleUpdatePassword))
	mux.Handle("GET /api/v1/account/can-i/{resource}/{action}/{object...}", s.authenticated(s.handleCanI))
	mux.Handle("GET /api/v1/applications", s.authenticated(s.handleListApplications))
	mux.Handle("POST /api/v1/applications", s.authenticated(s.handleCreateApplication))
	mux.Handle("GET /api/v1/applications/{name}", s.authenticated(s.handleGetApplication))
	mux.Handle("PUT /api/v1/applications/{name}", s.authenticated(s.handleUpdateApplication))
	mux.Handle("GET /api/v1/applications/{name}/resource-tree", s.authenticated(s.handleResourceTree))
	mux.Handle("GET /api/v1/applications/{name}/managed-resources", s.authenticated(s.handleManagedResources))
	mux.Handle("GET /api/v1/applications/{name}/manifests", s.authenticated(s.handleManifests))
	mux.Handle("GET /api/v1/applications/{name}/resource", s.authenticated(s.handleResource))
	mux.Handle("GET /api/v1/applications/{name}/resource/actions", s.authenticated(s.handleListResourceActions))
	mux.Handle("POST /api/v1/applications/{name}/resource/actions", s.authenticated(s.handleRunResourceAction))
	mux.Handle("POST /api/v1/applications/{name}/resource/actions/v2", s.authenticated(s.handleRunResourceActionV2))
	mux.Handle("GET /api/v1/applications/{name}/events", s.authenticated(s.handleEvents))
	mux.Handle("GET /api/v1/stream/applications", s.authenticated(s.handleStreamApplications))
	mux.Handle("GET /api/v1/stream/rollouts", s.authenticated(s.handleStreamRollouts))
	mux.Handle("POST /api/v1/applications/{name}/sync", s.authenticated(s.handleSync))
	mux.Handle("POST /api/v1/applications/{name}/rollback", s.authenticated(s.handleRollback))
	mux.Handle("DELETE /api/v1/applications/{name}/operation", s.authenticated(s.handleTerminate))
	mux.Handle("DELETE /api/v1/applications/{name}", s.authenticated(s.handleDeleteApplication))
	mux.Handle("GET /api/v1/projects", s.authenticated(s.handleListProjects))
	mux.Handle("GET /api/v1/rollouts", s.authenticated(s.handleListRollouts))
	mux.Handle("GET /api/v1/clusters", s.authenticated(s.handleListClusters))
	mux.Handle("POST /api/v1/clusters", s.authenticated(s.handleCreateCluster))
	mux.Handle("GET /api/v1/clusters/{id}", s.authenticated(s.handleGetCluster))
	mux.Handle("PUT /api/v1/clusters/{id}", s.authenticated(s.handleUpdateCluster))
	mux.Handle("DELETE /api/v1/clusters/{id}", s.authenticated(s.handleDeleteCluster))
	mux.Handle("POST /api/v1/clusters/{id}/rotate-auth", s.authenticated(s.handleRotateClusterAuth))
	mux.Handle("GET /api/v1/rollouts/{namespace}/{name}", s.authenticated(s.handleGetRollout))
	mux.Handle("POST /api/v1/rollouts/{namespace}/{name}/{action}", s.authenticated(s.handleRolloutAction))
	// "/" for every method, not "GET /": ServeMux refuses "GET /" next to
	// the "/api/" catch-all (neither pattern is more specific).
	mux.Handle("/", readOnly(ui.Handler()))
	mux.Handle("/api/", s.authenticated(func(w http.ResponseWriter, _ *http.Request, _ *session) {
		writeError(w, http.StatusNotFound, "no such API endpoint")
	}))
	return securityHeaders(mux)
}

// bootstrapUntilDone retries bootstrap with back-off until it succeeds or
// ctx ends.
func (s *Server) bootstrapUntilDone(ctx context.Context) {
	delay := time.Second
	for {
		err := s.bootstrap(ctx)
		if err == nil {
			return
		}
		s.Log.Error("api server: writing the initial secrets", "error", err, "retryIn", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Minute)
	}
}

// Bootstrap writes the signing key and the initial admin password when
// missing; Start calls it.
func (s *Server) Bootstrap(ctx context.Context) error {
	s.init()
	return s.bootstrap(ctx)
}

// readOnly answers 405 to anything but GET and HEAD.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}

// session is an authenticated caller.
type session struct {
	claims   *sessionClaims
	settings *settings
}

// user is the caller's name in RBAC: a local account's, or an SSO
// user's ID.
func (c *session) user() string { return c.claims.Subject }

// displayName is how the caller shows in audit fields (initiatedBy) and
// the UI: its email for an SSO user whose provider verified it.
func (c *session) displayName() string {
	if c.claims.SSO != nil {
		return c.claims.SSO.displayName()
	}
	return c.user()
}

// sessionRefused says why a request has no valid session (401).
type sessionRefused string

func (e sessionRefused) Error() string { return string(e) }

// sessionOf authenticates r: a valid token of an enabled account, or of an
// SSO login while oidc.config names the same issuer, from the bearer
// header or the cookie. A refusal is a sessionRefused.
func (s *Server) sessionOf(r *http.Request) (*session, error) {
	token := tokenFrom(r)
	if token == "" {
		return nil, sessionRefused("no session: log in first")
	}
	st, err := s.loadSettings(r.Context())
	if err != nil {
		return nil, err
	}
	claims, err := s.sessions.verify(st.signKey, token)
	if err != nil {
		return nil, sessionRefused("invalid session: " + err.Error())
	}
	revoked, err := s.revokedSessions(r.Context())
	if err != nil {
		return nil, err
	}
	if _, ok := revoked[claims.ID]; ok {
		return nil, sessionRefused("invalid session: " + errRevoked.Error())
	}
	if sso := claims.SSO; sso != nil {
		if st.oidc == nil || st.oidc.Issuer != sso.Issuer {
			return nil, sessionRefused("invalid session: single sign-on through " + sso.Issuer + " is no longer configured")
		}
		if sso.UserID == "" || sso.UserID != claims.Subject {
			return nil, sessionRefused("invalid session: an SSO session of an earlier version: log in again")
		}
		return &session{claims: claims, settings: st}, nil
	}
	acc, ok := st.accounts[claims.Subject]
	if !ok || !acc.Enabled {
		return nil, sessionRefused("invalid session: account " + claims.Subject + " is disabled or gone")
	}
	if claims.issuedBefore(acc.PasswordMtime) {
		return nil, sessionRefused("invalid session: the password changed since login")
	}
	return &session{claims: claims, settings: st}, nil
}

// authenticated wraps a handler that needs a session; without one it
// answers 401.
func (s *Server) authenticated(h func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.sessionOf(r)
		var refused sessionRefused
		if errors.As(err, &refused) {
			writeError(w, http.StatusUnauthorized, refused.Error())
			return
		}
		if err != nil {
			s.internalError(w, err)
			return
		}
		h(w, r, c)
	})
}

// authorize checks RBAC and answers 403 itself when refused.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, c *session, resource, action, object string) bool {
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return false
	}
	if !p.permits(c, resource, action, object) {
		writeError(w, http.StatusForbidden, fmt.Sprintf("permission denied: %s, %s, %s", resource, action, object))
		return false
	}
	return true
}

func (s *Server) internalError(w http.ResponseWriter, err error) {
	s.Log.Error("api request failed", "error", err)
	if errors.Is(err, errNotReady) {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeError(w, http.StatusInternalServerError, "internal error")
}
