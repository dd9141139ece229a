package reposerver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/skiffcd/skiff/internal/render"
	"github.com/skiffcd/skiff/internal/source"
)

// Helm value files given by URL (an Application's spec.source.helm.valueFiles
// "https://…/values.yaml") are fetched here, before the render, when
// argocd-cm's helm.valuesFileSchemes allows their scheme (Argo CD's default:
// https only). The content is part of the render's cache key, so a changed
// remote file renders again; it is trusted as long as a resolved revision
// (RevisionTTL, MaxRevisionAge) and fetched again on a hard refresh.

// defaultValuesFileSchemes is helm.valuesFileSchemes when
// Options.ValuesFileSchemes is nil.
var defaultValuesFileSchemes = []string{"https"}

// valueFileTimeout bounds one fetch; the render's own bounds come after.
const valueFileTimeout = 30 * time.Second

// maxValueFileRedirects bounds the redirects a fetch follows, each to an
// allowed scheme.
const maxValueFileRedirects = 5

// errValueFileNotFound is a URL that answered 404: skipped with
// ignoreMissingValueFiles.
var errValueFileNotFound = errors.New("not found (404)")

// fetchedValueFile is a value file's content and when it was fetched.
type fetchedValueFile struct {
	data []byte
	at   time.Time
}

// fetchValueFiles fetches the value files given by URL of req's Helm
// sources, or takes them from the ones fetched recently enough; a URL that
// answered 404 is left out when its source ignores missing value files.
func (s *Server) fetchValueFiles(ctx context.Context, req Request) (map[string][]byte, error) {
	var out map[string][]byte
	for i, src := range req.Sources {
		if src.Helm == nil {
			continue
		}
		for _, vf := range src.Helm.ValueFiles {
			if !render.IsValueFileURL(vf) {
				continue
			}
			if _, done := out[vf]; done {
				continue
			}
			data, err := s.valueFile(ctx, vf, req.Hard, req.MaxRevisionAge)
			if errors.Is(err, errValueFileNotFound) && src.Helm.IgnoreMissingValueFiles {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("source %d (%s): value file %q: %w", i+1, source.Redact(src.RepoURL), source.Redact(vf), err)
			}
			if out == nil {
				out = map[string][]byte{}
			}
			out[vf] = data
		}
	}
	return out, nil
}

// valueFile returns rawURL's content, fetched now unless a fetch recent
// enough for the request (see resolve) holds it.
func (s *Server) valueFile(ctx context.Context, rawURL string, hard bool, maxAge time.Duration) ([]byte, error) {
	schemes := defaultValuesFileSchemes
	if s.opts.ValuesFileSchemes != nil {
		schemes = s.opts.ValuesFileSchemes()
	}
	// The scheme is checked on every call: the setting applies at once.
	if err := checkValueFileScheme(rawURL, schemes); err != nil {
		return nil, err
	}
	ttl := s.opts.RevisionTTL
	if maxAge > 0 && maxAge < ttl {
		ttl = maxAge
	}
	now := s.now()
	s.mu.Lock()
	f, ok := s.valueFiles[rawURL]
	s.mu.Unlock()
	if ok && !hard && now.Sub(f.at) < ttl {
		return f.data, nil
	}
	data, err := fetchValueFile(ctx, rawURL, schemes, effectiveMaxFileBytes(s.opts.Limits))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	// Forget the stale ones, so the map holds only what apps still use.
	for u, old := range s.valueFiles {
		if now.Sub(old.at) >= ttl {
			delete(s.valueFiles, u)
		}
	}
	s.valueFiles[rawURL] = fetchedValueFile{data: data, at: now}
	s.mu.Unlock()
	return data, nil
}

// checkValueFileScheme refuses a URL whose scheme helm.valuesFileSchemes
// does not allow, and one Skiff cannot fetch.
func checkValueFileScheme(rawURL string, schemes []string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("not a URL: %w", errors.Unwrap(err))
	}
	scheme := strings.ToLower(u.Scheme)
	if !slices.Contains(schemes, scheme) {
		return fmt.Errorf("the scheme %s is not allowed: argocd-cm's helm.valuesFileSchemes allows %s", scheme, strings.Join(schemes, ", "))
	}
	if scheme != "http" && scheme != "https" {
		return fmt.Errorf("the scheme %s is not supported: Skiff fetches value files over http and https", scheme)
	}
	return nil
}

// fetchValueFile GETs rawURL within valueFileTimeout, refusing a body over
// maxBytes and redirects to schemes not allowed.
func fetchValueFile(ctx context.Context, rawURL string, schemes []string, maxBytes int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, valueFileTimeout)
	defer cancel()
	client := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > maxValueFileRedirects {
			return fmt.Errorf("more than %d redirects", maxValueFileRedirects)
		}
		return checkValueFileScheme(req.URL.String(), schemes)
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, errValueFileNotFound
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("fetching: the server answered %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxBytes)
	}
	return data, nil
}

// unwrapURLError drops the *url.Error around a request's error, whose
// message repeats the URL with its credentials.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// effectiveMaxFileBytes is the largest file a render may read.
func effectiveMaxFileBytes(l render.Limits) int64 {
	if l.MaxFileBytes > 0 {
		return l.MaxFileBytes
	}
	return render.DefaultLimits.MaxFileBytes
}

// valueFileDigests names the content of each fetched value file, for the
// render's cache key.
func valueFileDigests(files map[string][]byte) map[string]string {
	if len(files) == 0 {
		return nil
	}
	out := make(map[string]string, len(files))
	for u, data := range files {
		sum := sha256.Sum256(data)
		out[u] = hex.EncodeToString(sum[:])
	}
	return out
}
