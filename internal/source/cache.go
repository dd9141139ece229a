package source

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Options tune a Cache. The zero value is ready to use.
type Options struct {
	// KnownHostsFiles are the known_hosts files used to verify SSH host
	// keys. Empty means go-git's defaults: $SSH_KNOWN_HOSTS, else
	// ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts.
	KnownHostsFiles []string
	// MaxFileBytes is the largest file a checkout writes (default
	// DefaultMaxFileBytes); MaxCheckoutBytes bounds one checkout's files in
	// total (default DefaultMaxCheckoutBytes). A commit over either fails
	// to check out, with an error naming the file.
	MaxFileBytes, MaxCheckoutBytes int64
	// MaxCachedCheckouts and MaxCachedCheckoutBytes bound the trees kept on
	// disk (defaults DefaultMaxCachedCheckouts, DefaultMaxCachedCheckoutBytes):
	// past either, the least recently used trees no caller holds are removed.
	MaxCachedCheckouts     int
	MaxCachedCheckoutBytes int64
}

// Stats counts network and disk work done by a Cache, so callers and tests
// can tell a cheap up-to-date check from a real transfer.
type Stats struct {
	LsRemotes int64 // remote ref listings, successful or not
	Fetches   int64 // object transfers, including the first one of a repository
	Clones    int64 // fetches that populated an empty cache for a repository
	Checkouts int64 // trees materialized on disk
	// Trees and TreeBytes are the checkouts on disk now and their size.
	Trees     int
	TreeBytes int64
}

// Cache holds one bare repository per remote under its directory:
//
//	<dir>/<sha256 of normalized URL>/repo.git    objects and refs
//	<dir>/<sha256 of normalized URL>/trees/<sha>  materialized commits
//
// All methods are safe for concurrent use. Work on one repository is
// serialized because go-git storage is not safe for concurrent use; that
// also makes concurrent callers wait for a single fetch.
type Cache struct {
	dir  string
	opts Options

	mu    sync.Mutex
	repos map[string]*cachedRepo
	trees *checkouts

	lsRemotes, fetches, clones, checkouts atomic.Int64
}

// cachedRepo is the in-memory handle of one cached repository.
type cachedRepo struct {
	dir string

	mu   sync.Mutex // guards repo and every use of its storage
	repo *git.Repository
}

// NewCache returns a Cache rooted at dir, which is created on first use.
// Existing content is reused, so a restarted process does not clone again.
func NewCache(dir string, opts Options) *Cache {
	return &Cache{dir: dir, opts: opts, repos: make(map[string]*cachedRepo), trees: newCheckouts(dir, opts)}
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	trees, treeBytes := c.trees.stats()
	return Stats{
		LsRemotes: c.lsRemotes.Load(),
		Fetches:   c.fetches.Load(),
		Clones:    c.clones.Load(),
		Checkouts: c.checkouts.Load(),
		Trees:     trees,
		TreeBytes: treeBytes,
	}
}

func (c *Cache) entry(rawURL string) *cachedRepo {
	key := repoKey(rawURL)
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.repos[key]
	if !ok {
		r = &cachedRepo{dir: filepath.Join(c.dir, key)}
		c.repos[key] = r
	}
	return r
}

// errNotCached means the repository has never been fetched into the cache.
var errNotCached = errors.New("repository is not in the cache; resolve a revision first")

// open returns the bare repository, creating an empty one if create is set.
// The caller must hold r.mu.
func (r *cachedRepo) open(create bool) (*git.Repository, error) {
	if r.repo != nil {
		return r.repo, nil
	}
	path := filepath.Join(r.dir, "repo.git")
	repo, err := openBare(path)
	switch {
	case err == nil:
	case errors.Is(err, git.ErrRepositoryNotExists) && !create:
		return nil, errNotCached
	case errors.Is(err, git.ErrRepositoryNotExists):
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cache directory: %w", err)
		}
		if repo, err = git.Init(bareStorage(path), nil); err != nil {
			return nil, fmt.Errorf("init cache repository: %w", err)
		}
	default:
		return nil, fmt.Errorf("open cache repository: %w", err)
	}
	r.repo = repo
	return repo, nil
}

// objectCacheSize bounds go-git's cache of decoded objects, per
// repository. An open repository stays open for the life of the process,
// and go-git's default cache (96 MiB) filled up with the blobs of every
// checkout: a checkout reads each blob once, so the cache serves only the
// bases of delta chains. The bound counts content, not the buffers holding
// it: in bench/apps at N=200, the objects read through it held 3.5 MiB of
// heap with a 4 MiB bound and 1.6 MiB with this one.
const objectCacheSize = 1 * cache.MiByte

// largeObjectThreshold is the size past which go-git streams an object
// from its pack instead of inflating it whole into memory: a checkout of a
// 200 MB file otherwise held it (and copies of it) in the heap.
const largeObjectThreshold = 1 << 20

// openBare opens the bare repository at path with a bounded object cache.
func openBare(path string) (*git.Repository, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, git.ErrRepositoryNotExists
	}
	return git.Open(bareStorage(path), nil)
}

func bareStorage(path string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(path), cache.NewObjectLRU(objectCacheSize),
		filesystem.Options{LargeObjectThreshold: largeObjectThreshold})
}

// LsRemote lists the remote's references as ref name → SHA, like
// git ls-remote: HEAD and other symbolic refs are resolved to the SHA they
// point at, and annotated tags also appear as "<tag>^{}" with the commit they
// peel to. Nothing is fetched.
func (c *Cache) LsRemote(ctx context.Context, rawURL string, creds Credentials) (map[string]string, error) {
	refs, err := c.listRemote(ctx, rawURL, creds)
	if err != nil {
		return nil, newRepoError("ls-remote", rawURL, creds, "", err)
	}
	out := make(map[string]string, len(refs.hashes)+len(refs.peeled))
	for name, h := range refs.hashes {
		out[name.String()] = h.String()
	}
	for name, h := range refs.peeled {
		out[name.String()+"^{}"] = h.String()
	}
	return out, nil
}

// remoteRefs is one ls-remote answer.
type remoteRefs struct {
	hashes map[plumbing.ReferenceName]plumbing.Hash // symbolic refs resolved
	peeled map[plumbing.ReferenceName]plumbing.Hash // annotated tag → commit
}

func (c *Cache) listRemote(ctx context.Context, rawURL string, creds Credentials) (remoteRefs, error) {
	opts, err := transportFor(rawURL, creds, c.opts.KnownHostsFiles)
	if err != nil {
		return remoteRefs{}, err
	}
	c.lsRemotes.Add(1)
	defer observeGitRequest(rawURL, gitLsRemote, time.Now())
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{
		Name: git.DefaultRemoteName,
		URLs: []string{strings.TrimSpace(rawURL)},
	})
	list, err := remote.ListContext(ctx, &git.ListOptions{
		Auth:            opts.auth,
		InsecureSkipTLS: opts.insecure,
		ClientCert:      opts.clientCert,
		ClientKey:       opts.clientKey,
		CABundle:        opts.caBundle,
		PeelingOption:   git.AppendPeeled,
	})
	if err != nil {
		return remoteRefs{}, fmt.Errorf("list remote references: %w", err)
	}

	refs := remoteRefs{
		hashes: make(map[plumbing.ReferenceName]plumbing.Hash, len(list)),
		peeled: make(map[plumbing.ReferenceName]plumbing.Hash),
	}
	symbolic := make(map[plumbing.ReferenceName]plumbing.ReferenceName)
	for _, ref := range list {
		name := ref.Name()
		switch {
		case ref.Type() == plumbing.SymbolicReference:
			symbolic[name] = ref.Target()
		case strings.HasSuffix(name.String(), "^{}"):
			refs.peeled[plumbing.ReferenceName(strings.TrimSuffix(name.String(), "^{}"))] = ref.Hash()
		default:
			refs.hashes[name] = ref.Hash()
		}
	}
	for name, target := range symbolic {
		// Symbolic chains are short; the bound only guards against cycles.
		for range 8 {
			if h, ok := refs.hashes[target]; ok {
				refs.hashes[name] = h
				break
			}
			next, ok := symbolic[target]
			if !ok {
				break
			}
			target = next
		}
	}
	return refs, nil
}

// match finds revision among the remote refs using git's precedence for
// short names: refs/<rev>, refs/tags/<rev>, refs/heads/<rev>,
// refs/remotes/<rev>. The returned hash is peeled for annotated tags when the
// server advertised it.
func (r remoteRefs) match(revision string) (plumbing.ReferenceName, plumbing.Hash, bool) {
	var candidates []string
	switch {
	case revision == "" || revision == "HEAD":
		candidates = []string{"HEAD"}
	case strings.HasPrefix(revision, "refs/"):
		candidates = []string{revision}
	default:
		candidates = []string{"refs/" + revision, "refs/tags/" + revision, "refs/heads/" + revision, "refs/remotes/" + revision}
	}
	for _, cand := range candidates {
		name := plumbing.ReferenceName(cand)
		h, ok := r.hashes[name]
		if !ok {
			continue
		}
		if peeled, ok := r.peeled[name]; ok {
			h = peeled
		}
		return name, h, true
	}
	return "", plumbing.ZeroHash, false
}

// Resolve returns the commit SHA that revision names in the repository at
// rawURL, fetching into the cache only when that commit is not there yet.
//
// revision may be "" or "HEAD" (the remote's default branch), a branch or
// tag name (annotated tags resolve to their commit), a full "refs/..." name,
// a full 40 character SHA or an abbreviated SHA of at least 7 characters.
// A full SHA already in the cache needs no network at all; a missing one
// triggers a fetch of all branches and tags. Everything else costs one
// ls-remote, plus a fetch only when the commit is not cached yet. An
// abbreviated SHA is tried as a ref name first (as git does, a branch named
// "cafe123" wins) and then against cached objects, fetching once if needed.
func (c *Cache) Resolve(ctx context.Context, rawURL string, creds Credentials, revision string) (string, error) {
	rev := strings.TrimSpace(revision)
	sha, err := c.resolve(ctx, rawURL, creds, rev)
	if err != nil {
		shown := revision
		if rev == "" {
			shown = "HEAD"
		}
		return "", newRepoError(OpResolve, rawURL, creds, shown, err)
	}
	return sha, nil
}

func (c *Cache) resolve(ctx context.Context, rawURL string, creds Credentials, rev string) (string, error) {
	r := c.entry(rawURL)
	if isHex(rev) && len(rev) == 40 {
		return c.resolveFullSHA(ctx, r, rawURL, creds, plumbing.NewHash(strings.ToLower(rev)))
	}

	// Listing happens outside the lock: it does not touch the cache, and
	// concurrent callers should not queue behind each other's network calls.
	refs, err := c.listRemote(ctx, rawURL, creds)
	if err != nil {
		return "", err
	}
	name, target, found := refs.match(rev)

	r.mu.Lock()
	defer r.mu.Unlock()
	repo, err := r.open(true)
	if err != nil {
		return "", err
	}
	switch {
	case found:
		commit, err := peelToCommit(repo, target)
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return commit.String(), err
		}
		if err := c.fetch(ctx, repo, rawURL, creds, name); err != nil {
			return "", err
		}
		commit, err = peelToCommit(repo, target)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return "", fmt.Errorf("%s points to %s, which the fetch did not return (was it force-pushed meanwhile?)", name, target)
		}
		return commit.String(), err
	case len(rev) >= 7 && isHex(rev):
		short := strings.ToLower(rev)
		commit, err := findShortSHA(repo, short)
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return commit.String(), err
		}
		if err := c.fetch(ctx, repo, rawURL, creds, ""); err != nil {
			return "", err
		}
		commit, err = findShortSHA(repo, short)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return "", fmt.Errorf("%w: no branch, tag or commit matches it", ErrRevisionNotFound)
		}
		return commit.String(), err
	default:
		return "", fmt.Errorf("%w: no branch or tag has that name", ErrRevisionNotFound)
	}
}

func (c *Cache) resolveFullSHA(ctx context.Context, r *cachedRepo, rawURL string, creds Credentials, want plumbing.Hash) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	repo, err := r.open(true)
	if err != nil {
		return "", err
	}
	commit, err := peelToCommit(repo, want)
	if !errors.Is(err, plumbing.ErrObjectNotFound) {
		return commit.String(), err
	}
	if err := c.fetch(ctx, repo, rawURL, creds, ""); err != nil {
		return "", err
	}
	commit, err = peelToCommit(repo, want)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", fmt.Errorf("%w: commit is not reachable from any branch or tag", ErrRevisionNotFound)
	}
	return commit.String(), err
}

// fetch brings all branches and tags, plus ref when it lives elsewhere (for
// example refs/pull/1/head), into repo. The caller must hold the repo lock.
func (c *Cache) fetch(ctx context.Context, repo *git.Repository, rawURL string, creds Credentials, ref plumbing.ReferenceName) error {
	opts, err := transportFor(rawURL, creds, c.opts.KnownHostsFiles)
	if err != nil {
		return err
	}
	specs := []config.RefSpec{"+refs/heads/*:refs/heads/*"}
	if ref != "" && !ref.IsBranch() && !ref.IsTag() {
		// Keep such refs apart so a remote HEAD cannot overwrite ours.
		specs = append(specs, config.RefSpec("+"+ref.String()+":refs/skiff/"+strings.TrimPrefix(ref.String(), "refs/")))
	}
	empty, err := hasNoRefs(repo)
	if err != nil {
		return err
	}
	c.fetches.Add(1)
	if empty {
		c.clones.Add(1)
	}
	defer observeGitRequest(rawURL, gitFetch, time.Now())
	remote := git.NewRemote(repo.Storer, &config.RemoteConfig{
		Name:  git.DefaultRemoteName,
		URLs:  []string{strings.TrimSpace(rawURL)},
		Fetch: specs,
	})
	err = remote.FetchContext(ctx, &git.FetchOptions{
		RemoteName:      git.DefaultRemoteName,
		RefSpecs:        specs,
		Tags:            git.AllTags,
		Force:           true,
		Auth:            opts.auth,
		InsecureSkipTLS: opts.insecure,
		ClientCert:      opts.clientCert,
		ClientKey:       opts.clientKey,
		CABundle:        opts.caBundle,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

func hasNoRefs(repo *git.Repository) (bool, error) {
	iter, err := repo.References()
	if err != nil {
		return false, fmt.Errorf("list cached references: %w", err)
	}
	defer iter.Close()
	empty := true
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && strings.HasPrefix(ref.Name().String(), "refs/") {
			empty = false
			return errStopIteration
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopIteration) {
		return false, fmt.Errorf("list cached references: %w", err)
	}
	return empty, nil
}

var errStopIteration = errors.New("stop iteration")

// peelToCommit follows annotated tags from h to the commit they name. It
// returns plumbing.ErrObjectNotFound when any object on the way is missing.
func peelToCommit(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	// Tags of tags are legal but rare; the bound only guards against garbage.
	for range 16 {
		obj, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(repo.Storer, obj)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("decode tag %s: %w", h, err)
			}
			h = tag.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%s is a %s, not a commit", h, obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("tag chain from %s is too long", h)
}

// prefixSearcher is implemented by go-git's filesystem object storage.
type prefixSearcher interface {
	HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error)
}

// findShortSHA finds the single commit whose SHA (or whose annotated tag's
// SHA) starts with short. It returns plumbing.ErrObjectNotFound if none does.
func findShortSHA(repo *git.Repository, short string) (plumbing.Hash, error) {
	searcher, ok := repo.Storer.(prefixSearcher)
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("cache storage cannot search abbreviated SHAs")
	}
	prefix, err := hex.DecodeString(short[:len(short)&^1])
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("decode abbreviated SHA: %w", err)
	}
	hashes, err := searcher.HashesWithPrefix(prefix)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("search abbreviated SHA: %w", err)
	}
	commits := make(map[plumbing.Hash]bool)
	for _, h := range hashes {
		if !strings.HasPrefix(h.String(), short) {
			continue
		}
		commit, err := peelToCommit(repo, h)
		if err != nil {
			continue // trees and blobs share the SHA space; they are not revisions
		}
		commits[commit] = true
	}
	switch len(commits) {
	case 0:
		return plumbing.ZeroHash, plumbing.ErrObjectNotFound
	case 1:
		for h := range commits {
			return h, nil
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("abbreviated SHA is ambiguous: %d commits match", len(commits))
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}
