// Package reposerver turns an Application's sources into manifests: it
// resolves revisions (git refs, Helm chart versions), checks sources out
// through the shared caches, renders them and caches the result. It is Argo
// CD's repo server, as a package inside the skiff binary.
//
// Two caches make steady state cheap. Resolved revisions are kept for
// RevisionTTL, so repeated comparisons of an unchanged app make no git
// network call; a hard refresh (or a webhook) bypasses it, and concurrent
// callers share one resolution in flight. Rendered output is
// keyed by everything that affects it (commit SHAs, source spec,
// destination, cluster capabilities, the content of value files fetched
// by URL), so an unchanged commit is never
// rendered twice; the cache is bounded by the size of what it holds and
// keeps only an app's latest render (per destination and cluster
// description), so old revisions do not linger. A render that failed on its
// own account (a template error, its deadline, a size limit) is cached the
// same way, so a broken revision is not rendered again on every comparison.
//
// Renders are bounded: at most the worker pool's size run at once, at most
// one per app (callers of the same render share it), and each runs under
// render.Limits with its slow parts in a worker process that is killed at
// the deadline (see render.Pool).
package reposerver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/project"
	"github.com/skiffcd/skiff/internal/render"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
)

// CredentialsFunc returns the credentials for a repository URL (Argo CD's
// repository and repo-creds Secrets); the zero value means anonymous.
type CredentialsFunc func(ctx context.Context, repoURL string) (source.Credentials, error)

// Options configure a Server.
type Options struct {
	// RevisionTTL is how long a resolved branch, tag or chart range is
	// trusted without asking the remote again; default 3 minutes (Argo CD's
	// revision cache expiration).
	RevisionTTL time.Duration
	// MaxCacheBytes bounds the rendered-output cache; default 256 MiB.
	MaxCacheBytes int64
	// Limits bound each render; zero means render.DefaultLimits.
	Limits render.Limits
	// Credentials looks up repository credentials; nil means anonymous.
	Credentials CredentialsFunc
	// Projects looks up an Application's AppProject, whose sourceRepos
	// decide which Helm repositories a chart's dependencies may be
	// downloaded from. Nil permits every repository: for a process that
	// renders on behalf of its own user (the CLI's `skiff render`).
	Projects ProjectFunc
	// Workers runs the renders' isolated steps, and its size bounds the
	// renders running at once; nil means render.DefaultPool().
	Workers *render.Pool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Kustomize gives the kustomize build flags in force for every app
	// (argocd-cm's kustomize.buildOptions); nil means kustomize's defaults.
	Kustomize func() render.KustomizeOptions
	// ValuesFileSchemes gives the URL schemes Helm value files may be
	// fetched from (argocd-cm's helm.valuesFileSchemes); nil means https
	// only, Argo CD's default. See valuefiles.go.
	ValuesFileSchemes func() []string
}

// ProjectFunc returns the AppProject named name ("" is the default one).
type ProjectFunc func(ctx context.Context, name string) (*v1alpha1.AppProject, error)

// Server renders Applications' sources. It is safe for concurrent use.
type Server struct {
	git   *source.Cache
	helm  *helmrepo.Client
	opts  Options
	now   func() time.Time
	cache *manifestCache

	// renderSlots bounds the renders running at once; appRenders allows
	// one per app, so that one app's slow renders cannot take every slot.
	renderSlots chan struct{}
	appRenders  *keyedLocks

	mu        sync.Mutex
	revisions map[revisionKey]resolvedRevision
	flights   map[revisionKey]*flight
	renders   map[string]*renderFlight // by cache key
	moved     []func(RevisionMove)
	// valueFiles are the value files fetched by URL, by URL.
	valueFiles map[string]fetchedValueFile
}

// RevisionMove says that a source's target revision (branch, tag, HEAD or
// chart range) resolved to a new commit or version, found by whichever
// request asked the remote first: every app with the same source can
// compare at once instead of each waiting for its own poll.
type RevisionMove struct {
	RepoURL, Chart, TargetRevision string
	// From and To are the previous and the new commit SHA or chart version.
	From, To string
}

// OnRevisionMove registers f, called (outside the Server's locks) after a
// resolution lands a revision that differs from the cached one. The first
// resolution of a source, or one after Forget, has nothing to differ from.
func (s *Server) OnRevisionMove(f func(RevisionMove)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moved = append(s.moved, f)
}

// flight is one resolution in progress; callers that need an answer no
// older than its start wait for it instead of asking the remote themselves.
type flight struct {
	started time.Time
	done    chan struct{}
	result  resolvedRevision
	err     error
}

type revisionKey struct{ repoURL, chart, revision string }

type resolvedRevision struct {
	revision string // commit SHA, or chart version
	chartDir string // a Helm repository chart's directory; git trees are checked out to render
	at       time.Time
}

// New returns a Server over the given git and Helm caches.
func New(git *source.Cache, helm *helmrepo.Client, opts Options) *Server {
	if opts.RevisionTTL == 0 {
		opts.RevisionTTL = 3 * time.Minute
	}
	if opts.MaxCacheBytes == 0 {
		opts.MaxCacheBytes = 256 << 20
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.Workers == nil {
		opts.Workers = render.DefaultPool()
	}
	return &Server{
		git: git, helm: helm, opts: opts, now: now,
		cache:       newManifestCache(opts.MaxCacheBytes),
		renderSlots: make(chan struct{}, opts.Workers.Size()),
		appRenders:  newKeyedLocks(),
		revisions:   map[revisionKey]resolvedRevision{},
		flights:     map[revisionKey]*flight{},
		renders:     map[string]*renderFlight{},
		valueFiles:  map[string]fetchedValueFile{},
	}
}

// Request asks for the manifests of one Application.
type Request struct {
	// AppName is the Application's name (Helm's default release name).
	// Renders of one app run one at a time.
	AppName string
	// Project is the Application's spec.project: its sourceRepos permit
	// the Helm repositories of chart dependencies (see Options.Projects).
	Project string
	// Sources are spec.sources, or spec.source alone, as written.
	Sources []v1alpha1.ApplicationSource
	// Revisions, when set, pin each source to a revision (an operation's
	// commit SHA or chart version; "" leaves that source's targetRevision).
	// A pinned source is resolved at its pin but rendered, and its render
	// cached, as written: a sync of the revision a comparison just rendered
	// reuses that render, and what the render sees of the source (Argo CD's
	// ARGOCD_APP_SOURCE_TARGET_REVISION) is the same in both.
	Revisions []string
	// Namespace is the destination namespace.
	Namespace string
	// KubeVersion and APIVersions describe the destination cluster.
	KubeVersion string
	APIVersions []string
	// Hard bypasses the revision and manifest caches (Argo CD's hard
	// refresh), cached failures included.
	Hard bool
	// MaxRevisionAge, when set, trusts a resolved revision only this long
	// instead of RevisionTTL: a periodic poll must see new commits, while
	// many apps of one repository polled together still share one ls-remote.
	MaxRevisionAge time.Duration
	// Unless, when set, is the Key of an earlier Response: when the
	// sources resolve to that same render, Manifests answers Unchanged,
	// with the revisions and no manifests, and decodes nothing. Hard
	// ignores it.
	Unless string

	// kustomize is Options.Kustomize's answer when Manifests began: the
	// render and its cache key use the same flags.
	kustomize render.KustomizeOptions
	// valueFiles are the Helm value files fetched by URL: the render reads
	// them and its cache key names their content.
	valueFiles map[string][]byte
}

// Response is what the sources rendered to.
type Response struct {
	// Revisions holds, per source, the resolved commit SHA or chart version.
	Revisions []string
	// Manifests are the rendered objects of every source, in source order.
	// They are the caller's own (the cache keeps an encoded copy).
	Manifests []render.Manifest
	// CacheHit reports that nothing was rendered.
	CacheHit bool
	// Key names the render: responses with equal keys have equal manifests.
	Key string
	// Unchanged reports that the render is Request.Unless's; Manifests is
	// empty then.
	Unchanged bool
}

// Manifests resolves, fetches and renders the sources of req.
func (s *Server) Manifests(ctx context.Context, req Request) (*Response, error) {
	if len(req.Sources) == 0 {
		return nil, errors.New("the application has no source")
	}
	resolved := make([]resolvedRevision, len(req.Sources))
	for i, src := range req.Sources {
		if i < len(req.Revisions) && req.Revisions[i] != "" {
			src.TargetRevision = req.Revisions[i]
		}
		r, err := s.resolve(ctx, src, req.Hard, req.MaxRevisionAge)
		if err != nil {
			return nil, fmt.Errorf("source %d (%s): %w", i+1, source.Redact(src.RepoURL), err)
		}
		resolved[i] = r
	}
	resp := &Response{Revisions: make([]string, len(resolved))}
	for i, r := range resolved {
		resp.Revisions[i] = r.revision
	}
	if s.opts.Kustomize != nil {
		req.kustomize = s.opts.Kustomize()
	}
	valueFiles, err := s.fetchValueFiles(ctx, req)
	if err != nil {
		return nil, err
	}
	req.valueFiles = valueFiles

	key, err := cacheKey(req, resp.Revisions)
	if err != nil {
		return nil, err
	}
	resp.Key = key
	if !req.Hard && req.Unless == key {
		resp.Unchanged = true
		return resp, nil
	}
	if !req.Hard {
		if manifests, ok, err := s.cache.get(key); ok {
			cacheResults.WithLabelValues("hit").Inc()
			if err != nil {
				return nil, err
			}
			resp.Manifests, resp.CacheHit = manifests, true
			return resp, nil
		}
	}
	cacheResults.WithLabelValues("miss").Inc()

	manifests, err := s.renderShared(ctx, req, key, resolved)
	if err != nil {
		return nil, err
	}
	resp.Manifests = manifests
	return resp, nil
}

// renderFlight is one render in progress; callers of the same cache key
// wait for it instead of rendering again.
type renderFlight struct {
	done      chan struct{}
	manifests []render.Manifest
	err       error
	// shared says the result is the render's own, not the cut-short work
	// of an owner that gave up: waiters may take it.
	shared bool
	// waiters counts the callers waiting for it (under Server.mu).
	waiters int
}

// renderShared renders req, or waits for the render of the same key that
// another caller started. A waiter whose flight's owner gave up renders
// itself (bounded: each pass waits for one flight to end).
func (s *Server) renderShared(ctx context.Context, req Request, key string, resolved []resolvedRevision) ([]render.Manifest, error) {
	for range 3 {
		s.mu.Lock()
		f, inFlight := s.renders[key]
		if !inFlight {
			f = &renderFlight{done: make(chan struct{})}
			s.renders[key] = f
			s.mu.Unlock()
			f.manifests, f.err = s.renderOnce(ctx, req, key, resolved)
			f.shared = ctx.Err() == nil
			s.mu.Lock()
			delete(s.renders, key)
			waiters := f.waiters
			s.mu.Unlock()
			close(f.done)
			if waiters > 0 && f.err == nil {
				// The waiters copy f.manifests as this caller changes its
				// own: it gets a copy too.
				return copyManifests(f.manifests), nil
			}
			return f.manifests, f.err
		}
		f.waiters++
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.shared {
			if f.err != nil {
				return nil, f.err
			}
			return copyManifests(f.manifests), nil
		}
	}
	return s.renderOnce(ctx, req, key, resolved)
}

// renderOnce renders req's sources within the server's bounds (one render
// per app, the pool's size in all) and caches the result, or the failure
// when it is the revision's own.
func (s *Server) renderOnce(ctx context.Context, req Request, key string, resolved []resolvedRevision) ([]render.Manifest, error) {
	release, err := s.appRenders.lock(ctx, req.AppName)
	if err != nil {
		return nil, err
	}
	defer release()
	select {
	case s.renderSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.renderSlots }()

	manifests, err := s.render(ctx, req, resolved)
	switch {
	case err == nil:
		s.cache.put(cacheSlot(req), key, manifests, nil)
	case cacheableFailure(ctx.Err(), err):
		s.cache.put(cacheSlot(req), key, nil, err)
	}
	return manifests, err
}

// cacheableFailure reports whether a render's error belongs to what was
// rendered, so that rendering the same key again would fail the same way:
// not when the caller gave up (callerErr), a worker or a download was
// unavailable, or the project refused a repository (the project may change).
func cacheableFailure(callerErr, err error) bool {
	var repoErr *source.RepoError
	switch {
	case callerErr != nil:
		return false
	case errors.Is(err, render.ErrUnavailable), errors.Is(err, project.ErrNotPermitted):
		return false
	case errors.As(err, &repoErr):
		return errors.Is(err, source.ErrTooLarge) // checkouts fail for other, passing reasons too
	default:
		return true
	}
}

// render checks out the git sources (held until the render ends) and
// renders every source that produces objects.
func (s *Server) render(ctx context.Context, req Request, resolved []resolvedRevision) ([]render.Manifest, error) {
	roots := make([]string, len(req.Sources))
	refRoots := map[string]string{}
	for i, src := range req.Sources {
		roots[i] = resolved[i].chartDir
		if src.Chart == "" {
			dir, release, err := s.git.Acquire(ctx, src.RepoURL, resolved[i].revision)
			if err != nil {
				return nil, fmt.Errorf("source %d (%s): %w", i+1, source.Redact(src.RepoURL), err)
			}
			defer release()
			roots[i] = dir
		}
		if src.Ref != "" {
			refRoots[src.Ref] = roots[i]
		}
	}
	var all []render.Manifest
	for i, src := range req.Sources {
		if !rendersManifests(src) {
			continue // a ref-only source only lends its files to others
		}
		path := src.Path
		if src.Chart != "" {
			path = "."
		}
		manifests, err := render.Render(ctx, render.Request{
			Root: roots[i], ImmutableRoot: true, Path: path, Source: src,
			AppName: req.AppName, Namespace: req.Namespace,
			KubeVersion: req.KubeVersion, APIVersions: req.APIVersions,
			RefRoots: refRoots, RemoteValueFiles: req.valueFiles, Limits: s.opts.Limits, Kustomize: req.kustomize,
			FetchDependency: s.dependencyFetcher(req.Project), Workers: s.opts.Workers,
		})
		if err != nil {
			return nil, fmt.Errorf("source %d (%s): %w", i+1, source.Redact(src.RepoURL), err)
		}
		all = append(all, manifests...)
	}
	if err := render.CheckDuplicates(all); err != nil {
		return nil, err
	}
	return all, nil
}

// copyManifests deep-copies manifests: each caller owns what it gets.
func copyManifests(manifests []render.Manifest) []render.Manifest {
	out := make([]render.Manifest, len(manifests))
	for i, m := range manifests {
		out[i] = render.Manifest{Object: m.Object.DeepCopy(), File: m.File}
	}
	return out
}

// rendersManifests reports whether a source produces objects: a source with
// a ref and no path (nor chart) only provides value files to other sources.
func rendersManifests(src v1alpha1.ApplicationSource) bool {
	return src.Ref == "" || src.Path != "" || src.Chart != ""
}

// resolve turns a source's target revision into a commit SHA or chart
// version and a local directory, trusting a recent answer unless hard.
//
// An answer is fresh enough for a caller when the resolution started after
// the caller asked, or (unless hard) within its TTL before. Concurrent
// callers share one resolution in flight when it is fresh enough for them:
// a refresh of 200 apps of one repository asks the remote once or twice,
// not 200 times, and still sees every commit pushed before it asked.
func (s *Server) resolve(ctx context.Context, src v1alpha1.ApplicationSource, hard bool, maxAge time.Duration) (resolvedRevision, error) {
	key := revisionKey{repoURL: src.RepoURL, chart: src.Chart, revision: src.TargetRevision}
	asked := s.now()
	ttl := s.opts.RevisionTTL
	if maxAge > 0 && maxAge < ttl {
		ttl = maxAge
	}
	fresh := func(at time.Time) bool {
		return at.After(asked) || (!hard && asked.Sub(at) < ttl)
	}
	// Each pass either answers or waits for a flight to end; a flight that
	// is not fresh enough is followed by at most one more.
	for range 3 {
		s.mu.Lock()
		if r, ok := s.revisions[key]; ok && fresh(r.at) {
			s.mu.Unlock()
			return r, nil
		}
		f, inFlight := s.flights[key]
		if !inFlight {
			f = &flight{started: s.now(), done: make(chan struct{})}
			s.flights[key] = f
			s.mu.Unlock()
			s.fly(ctx, key, src, f)
			return f.result, f.err
		}
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return resolvedRevision{}, ctx.Err()
		}
		if fresh(f.started) && (f.err == nil || ctx.Err() == nil && !isContextError(f.err)) {
			return f.result, f.err
		}
	}
	// Only reached when the flights joined kept failing on their owners'
	// cancellations: resolve alone (unshared, so not cached either).
	f := &flight{started: s.now(), done: make(chan struct{})}
	s.fly(ctx, key, src, f)
	return f.result, f.err
}

// fly runs the resolution of f, records a success and releases its waiters.
func (s *Server) fly(ctx context.Context, key revisionKey, src v1alpha1.ApplicationSource, f *flight) {
	f.result, f.err = s.ask(ctx, src)
	f.result.at = f.started
	s.land(key, f)
	close(f.done)
}

// land records a finished flight. A flight that Forget dropped may predate
// a push, and one that started before the cached answer may have seen an
// older commit: their answers go to the callers that joined them, not into
// the cache, which must never move back to an older commit. An answer that
// moves the cache to another revision is told to OnRevisionMove's callers.
func (s *Server) land(key revisionKey, f *flight) {
	s.mu.Lock()
	if s.flights[key] != f {
		s.mu.Unlock()
		return
	}
	delete(s.flights, key)
	cur, cached := s.revisions[key]
	if f.err != nil || cached && cur.at.After(f.started) {
		s.mu.Unlock()
		return
	}
	s.revisions[key] = f.result
	listeners := s.moved
	s.mu.Unlock()
	if !cached || cur.revision == f.result.revision {
		return
	}
	move := RevisionMove{RepoURL: key.repoURL, Chart: key.chart, TargetRevision: key.revision, From: cur.revision, To: f.result.revision}
	for _, notify := range listeners {
		notify(move)
	}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// ask resolves src against its remote (ls-remote, or the Helm index) and
// brings the commit or chart into the local cache.
func (s *Server) ask(ctx context.Context, src v1alpha1.ApplicationSource) (resolvedRevision, error) {
	creds, err := s.credentials(ctx, src.RepoURL)
	if err != nil {
		return resolvedRevision{}, err
	}
	if src.Chart != "" {
		dir, version, err := s.helm.Fetch(ctx, src.RepoURL, src.Chart, src.TargetRevision, helmCredentials(creds))
		if err != nil {
			return resolvedRevision{}, err
		}
		return resolvedRevision{revision: version, chartDir: dir}, nil
	}
	sha, err := s.git.Resolve(ctx, src.RepoURL, creds, src.TargetRevision)
	if err != nil {
		return resolvedRevision{}, err
	}
	return resolvedRevision{revision: sha}, nil
}

func helmCredentials(c source.Credentials) helmrepo.Credentials {
	return helmrepo.Credentials{Username: c.Username, Password: c.Password, Insecure: c.Insecure, CAData: c.CAData}
}

// Forget drops the resolved revisions of a repository, so the next request
// asks the remote again (a git webhook calls it).
func (s *Server) Forget(repoURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.revisions {
		if source.SameRepo(k.repoURL, repoURL) {
			delete(s.revisions, k)
		}
	}
	for k := range s.flights {
		if source.SameRepo(k.repoURL, repoURL) {
			delete(s.flights, k)
		}
	}
}

func (s *Server) credentials(ctx context.Context, repoURL string) (source.Credentials, error) {
	if s.opts.Credentials == nil {
		return source.Credentials{}, nil
	}
	creds, err := s.opts.Credentials(ctx, repoURL)
	if err != nil {
		return source.Credentials{}, fmt.Errorf("reading credentials: %w", err)
	}
	return creds, nil
}

// cacheKey covers everything that changes the rendered output.
func cacheKey(req Request, revisions []string) (string, error) {
	data, err := json.Marshal(struct {
		App, Namespace, KubeVersion string
		APIVersions                 []string
		Sources                     []v1alpha1.ApplicationSource
		Revisions                   []string
		Kustomize                   render.KustomizeOptions
		ValueFiles                  map[string]string `json:",omitempty"`
	}{req.AppName, req.Namespace, req.KubeVersion, req.APIVersions, req.Sources, revisions, req.kustomize, valueFileDigests(req.valueFiles)})
	if err != nil {
		return "", fmt.Errorf("hashing the request: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// StaticCredentials uses the same credentials for every repository (the CLI's).
func StaticCredentials(creds source.Credentials) CredentialsFunc {
	return func(context.Context, string) (source.Credentials, error) { return creds, nil }
}
