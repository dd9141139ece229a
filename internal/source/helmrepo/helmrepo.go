// Package helmrepo fetches charts from HTTP Helm repositories, so that
// Helm sources and chart dependencies can be rendered without the helm CLI.
// Indexes are cached for a short time and extracted charts forever: a chart
// version in a repository is immutable, and re-downloading it on every render
// would make renders slow and repositories angry.
package helmrepo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// Credentials authenticate to one repository.
type Credentials struct {
	Username, Password string
	// Insecure skips TLS certificate verification.
	Insecure bool
	// CAData is a PEM bundle trusted in addition to the system roots.
	CAData []byte
}

// Limits bound what one repository may make the client download and write.
type Limits struct {
	// MaxIndexBytes bounds index.yaml.
	MaxIndexBytes int64
	// MaxArchiveBytes bounds the compressed chart archive.
	MaxArchiveBytes int64
	// MaxExtractedBytes bounds the sum of the extracted file sizes.
	MaxExtractedBytes int64
	// MaxFiles bounds the number of archive entries.
	MaxFiles int
}

// DefaultLimits fit the largest public charts with a wide margin.
var DefaultLimits = Limits{
	MaxIndexBytes:     64 << 20,
	MaxArchiveBytes:   32 << 20,
	MaxExtractedBytes: 128 << 20,
	MaxFiles:          10000,
}

// DefaultIndexTTL is how long a downloaded index answers Fetch: long enough
// that one render with several dependencies downloads it once, short enough
// that a newly published chart is seen soon.
const DefaultIndexTTL = 3 * time.Minute

// Stats count network downloads, so that callers (and tests) can see the
// cache working.
type Stats struct {
	IndexDownloads int64
	ChartDownloads int64
}

// Client downloads indexes and charts and caches them under a directory. It
// is safe for concurrent use; concurrent fetches of one chart version share
// one download.
type Client struct {
	cacheDir string
	http     *http.Client
	// IndexTTL overrides DefaultIndexTTL when positive.
	IndexTTL time.Duration
	// Limits overrides DefaultLimits when its fields are positive.
	Limits Limits
	now    func() time.Time

	mu       sync.Mutex
	indexes  map[string]cachedIndex
	inflight map[string]*flight

	indexDownloads atomic.Int64
	chartDownloads atomic.Int64
}

type cachedIndex struct {
	index   *repoIndex
	fetched time.Time
}

// flight is one in-progress operation that later callers wait for.
type flight struct {
	done chan struct{}
	err  error
}

// New returns a client caching under cacheDir. A nil httpClient means
// http.DefaultClient.
func New(cacheDir string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{
		cacheDir: cacheDir,
		http:     httpClient,
		now:      time.Now,
		indexes:  map[string]cachedIndex{},
		inflight: map[string]*flight{},
	}
}

// Stats returns the download counters.
func (c *Client) Stats() Stats {
	return Stats{IndexDownloads: c.indexDownloads.Load(), ChartDownloads: c.chartDownloads.Load()}
}

// ForgetIndex drops the cached index of repoURL, so that the next Fetch sees
// charts published since.
func (c *Client) ForgetIndex(repoURL string) {
	base, err := parseRepoURL(repoURL)
	if err != nil {
		return
	}
	prefix := base.String() + "\x00"
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.indexes {
		if strings.HasPrefix(k, prefix) {
			delete(c.indexes, k)
		}
	}
}

// Fetch returns the directory of the extracted chart (it holds Chart.yaml)
// for the highest version of chart in the repository at repoURL that matches
// versionConstraint ("1.2.3", ">=1.0.0 <2.0.0", "1.2.*"; "" and "*" mean the
// latest stable version). The directory must not be modified.
func (c *Client) Fetch(ctx context.Context, repoURL, chart, versionConstraint string, creds Credentials) (chartDir string, version string, err error) {
	base, err := parseRepoURL(repoURL)
	if err != nil {
		return "", "", err
	}
	if chart == "" || strings.ContainsAny(chart, `/\`) || chart == "." || chart == ".." {
		return "", "", fmt.Errorf("invalid chart name %q", chart)
	}
	hc, err := c.clientFor(creds)
	if err != nil {
		return "", "", err
	}
	idx, err := c.index(ctx, hc, base, creds)
	if err != nil {
		return "", "", err
	}
	entry, err := selectVersion(idx.Entries[chart], versionConstraint)
	if err != nil {
		return "", "", fmt.Errorf("chart %q in %s: %w", chart, redact(base), err)
	}
	dir := filepath.Join(c.cacheDir, repoHash(base), chart+"-"+entry.Version)
	if err := c.once(ctx, dir, func() error { return c.download(ctx, hc, base, creds, entry, dir) }); err != nil {
		return "", "", err
	}
	return dir, entry.Version, nil
}

// once runs fn unless dir exists, sharing one run among concurrent callers.
func (c *Client) once(ctx context.Context, dir string, fn func() error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	return c.share(ctx, "chart\x00"+dir, func() error {
		if _, err := os.Stat(dir); err == nil {
			return nil
		}
		return fn()
	})
}

// share runs fn, or, when a run for key is in progress, waits for it and
// returns its error.
func (c *Client) share(ctx context.Context, key string, fn func() error) error {
	c.mu.Lock()
	f, ok := c.inflight[key]
	if !ok {
		f = &flight{done: make(chan struct{})}
		c.inflight[key] = f
		c.mu.Unlock()
		f.err = fn()
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		close(f.done)
		return f.err
	}
	c.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-f.done:
		return f.err
	}
}

// clientFor returns the HTTP client to use with creds' TLS settings.
func (c *Client) clientFor(creds Credentials) (*http.Client, error) {
	if !creds.Insecure && len(creds.CAData) == 0 {
		return c.http, nil
	}
	var tr *http.Transport
	if t, ok := c.http.Transport.(*http.Transport); ok {
		tr = t.Clone()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if creds.Insecure {
		tr.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // asked for by the repository's settings
	}
	if len(creds.CAData) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(creds.CAData) {
			return nil, errors.New("repository CA data holds no PEM certificate")
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	hc := *c.http
	hc.Transport = tr
	return &hc, nil
}

// repoIndex is the part of index.yaml the client needs.
type repoIndex struct {
	Entries map[string][]indexEntry `json:"entries"`
}

type indexEntry struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest"`
}

func (c *Client) index(ctx context.Context, hc *http.Client, base *url.URL, creds Credentials) (*repoIndex, error) {
	// The key includes the credentials so that a caller without them never
	// sees an index downloaded with someone else's.
	sum := sha256.Sum256([]byte(creds.Username + "\x00" + creds.Password))
	key := base.String() + "\x00" + hex.EncodeToString(sum[:8])
	ttl := c.IndexTTL
	if ttl <= 0 {
		ttl = DefaultIndexTTL
	}
	cached := func() (*repoIndex, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		ci, ok := c.indexes[key]
		return ci.index, ok && c.now().Sub(ci.fetched) < ttl
	}
	if idx, ok := cached(); ok {
		return idx, nil
	}
	err := c.share(ctx, "index\x00"+key, func() error {
		if _, ok := cached(); ok {
			return nil
		}
		raw, err := c.get(ctx, hc, base, base.JoinPath("index.yaml"), creds, c.limits().MaxIndexBytes)
		if err != nil {
			return fmt.Errorf("download index: %w", err)
		}
		c.indexDownloads.Add(1)
		var idx repoIndex
		if err := yaml.Unmarshal(raw, &idx); err != nil {
			return fmt.Errorf("parse index of %s: %w", redact(base), err)
		}
		c.mu.Lock()
		c.indexes[key] = cachedIndex{index: &idx, fetched: c.now()}
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.indexes[key].index, nil
}

func (c *Client) limits() Limits {
	l := DefaultLimits
	if c.Limits.MaxIndexBytes > 0 {
		l.MaxIndexBytes = c.Limits.MaxIndexBytes
	}
	if c.Limits.MaxArchiveBytes > 0 {
		l.MaxArchiveBytes = c.Limits.MaxArchiveBytes
	}
	if c.Limits.MaxExtractedBytes > 0 {
		l.MaxExtractedBytes = c.Limits.MaxExtractedBytes
	}
	if c.Limits.MaxFiles > 0 {
		l.MaxFiles = c.Limits.MaxFiles
	}
	return l
}

// get downloads u, sending creds only when u is on the repository's host so
// that a chart hosted elsewhere never receives them.
func (c *Client) get(ctx context.Context, hc *http.Client, base, u *url.URL, creds Credentials, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", redact(u), err)
	}
	if (creds.Username != "" || creds.Password != "") && sameHost(base, u) {
		req.SetBasicAuth(creds.Username, creds.Password)
	}
	resp, err := hc.Do(req)
	if err != nil {
		// The url.Error holds the URL, which has no user info (redacted
		// below), and never the Authorization header.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("GET %s: %s: check the repository credentials", redact(u), resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", redact(u), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: response larger than %d bytes", redact(u), limit)
	}
	return data, nil
}

func (c *Client) download(ctx context.Context, hc *http.Client, base *url.URL, creds Credentials, e indexEntry, dir string) error {
	if len(e.URLs) == 0 {
		return fmt.Errorf("chart %s-%s has no download URL in the index", e.Name, e.Version)
	}
	ref, err := url.Parse(e.URLs[0])
	if err != nil {
		return fmt.Errorf("chart %s-%s: invalid URL in the index", e.Name, e.Version)
	}
	u := withSlash(base).ResolveReference(ref)
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("chart %s-%s: URL scheme %q is not http(s)", e.Name, e.Version, u.Scheme)
	}
	data, err := c.get(ctx, hc, base, u, creds, c.limits().MaxArchiveBytes)
	if err != nil {
		return fmt.Errorf("download chart: %w", err)
	}
	c.chartDownloads.Add(1)
	if e.Digest != "" {
		sum := sha256.Sum256(data)
		want := strings.TrimPrefix(strings.ToLower(e.Digest), "sha256:")
		if hex.EncodeToString(sum[:]) != want {
			return fmt.Errorf("chart %s-%s from %s: digest mismatch: index says sha256 %s, download is %x", e.Name, e.Version, redact(u), want, sum)
		}
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("chart cache: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".extract-")
	if err != nil {
		return fmt.Errorf("chart cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := extract(ctx, data, tmp, c.limits()); err != nil {
		return fmt.Errorf("chart %s-%s: %w", e.Name, e.Version, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have won the race; its copy is as good.
		if _, serr := os.Stat(dir); serr == nil {
			return nil
		}
		return fmt.Errorf("chart cache: %w", err)
	}
	return nil
}

// extract writes the gzipped tar data into dir, dropping the top directory
// every chart archive has (the chart name), so that dir holds Chart.yaml. It
// accepts only directories and regular files that stay inside dir.
func extract(ctx context.Context, data []byte, dir string, l Limits) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a gzipped archive: %w", err)
	}
	tr := tar.NewReader(zr)
	var total int64
	files := 0
	sawChart := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		files++
		if files > l.MaxFiles {
			return fmt.Errorf("archive has more than %d entries", l.MaxFiles)
		}
		rel, err := entryPath(h.Name)
		if err != nil {
			return err
		}
		if rel == "" {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if h.Size < 0 || total+h.Size > l.MaxExtractedBytes {
				return fmt.Errorf("archive expands beyond %d bytes", l.MaxExtractedBytes)
			}
			total += h.Size
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := writeFile(target, tr, h.Size); err != nil {
				return err
			}
			if rel == "Chart.yaml" {
				sawChart = true
			}
		case tar.TypeXGlobalHeader:
		default:
			return fmt.Errorf("archive entry %q: type %q is not allowed (only files and directories)", h.Name, string(h.Typeflag))
		}
	}
	if !sawChart {
		return errors.New("archive has no Chart.yaml in its top directory")
	}
	return nil
}

// entryPath maps an archive name to a path below the top directory, or ""
// for the top directory itself, refusing names that could escape.
func entryPath(name string) (string, error) {
	n := strings.ReplaceAll(name, `\`, "/")
	if strings.HasPrefix(n, "/") || filepath.IsAbs(name) {
		return "", fmt.Errorf("archive entry %q: absolute path", name)
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return "", fmt.Errorf("archive entry %q escapes the chart directory", name)
		}
	}
	clean := path.Clean(n)
	_, rest, found := strings.Cut(clean, "/")
	if !found || rest == "" {
		return "", nil
	}
	return rest, nil
}

func writeFile(target string, r io.Reader, size int64) error {
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// ErrVersionNotFound is wrapped by the errors of a chart the repository's
// index does not list, or lists with no version matching the constraint:
// the caller asked for something that is not there.
var ErrVersionNotFound = errors.New("chart version not found")

// selectVersion picks the highest version matching constraint. Versions that
// are not semver are ignored, as Helm ignores them.
func selectVersion(entries []indexEntry, constraint string) (indexEntry, error) {
	if len(entries) == 0 {
		return indexEntry{}, fmt.Errorf("not found in the repository index: %w", ErrVersionNotFound)
	}
	constraint = strings.TrimSpace(constraint)
	if constraint == "" {
		constraint = "*"
	}
	cons, err := semver.NewConstraint(constraint)
	if err != nil {
		return indexEntry{}, fmt.Errorf("invalid version constraint %q: %w", constraint, err)
	}
	var best indexEntry
	var bestV *semver.Version
	for _, e := range entries {
		v, err := semver.NewVersion(e.Version)
		if err != nil || !cons.Check(v) {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = e, v
		}
	}
	if bestV == nil {
		return indexEntry{}, fmt.Errorf("no version matches %q: %w", constraint, ErrVersionNotFound)
	}
	return best, nil
}

func parseRepoURL(repoURL string) (*url.URL, error) {
	u, err := url.Parse(normalizeRepoURL(repoURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("repository URL %q is not an http(s) URL", redactString(repoURL))
	}
	if u.User != nil {
		return nil, fmt.Errorf("repository URL %s must not hold credentials; pass them separately", redact(u))
	}
	return u, nil
}

func normalizeRepoURL(repoURL string) string {
	return strings.TrimRight(strings.TrimSpace(repoURL), "/")
}

func withSlash(u *url.URL) *url.URL {
	c := *u
	if !strings.HasSuffix(c.Path, "/") {
		c.Path += "/"
	}
	return &c
}

func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// repoHash names the cache directory of a repository.
func repoHash(u *url.URL) string {
	sum := sha256.Sum256([]byte(u.String()))
	return hex.EncodeToString(sum[:12])
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	return c.String()
}

func redactString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return redact(u)
}
