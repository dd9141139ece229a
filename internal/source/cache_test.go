package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestResolveRevisions(t *testing.T) {
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	srv := newGitHTTPServer(t, root)

	remotes := map[string]struct {
		url   string
		creds Credentials
	}{
		"file URL":   {url: fx.fileURL()},
		"local path": {url: fx.dir},
		"smart HTTP": {url: srv.repoURL("apps"), creds: httpCreds()},
	}
	revisions := map[string]struct {
		revision string
		want     string
	}{
		"empty revision means HEAD":             {revision: "", want: fx.c3},
		"HEAD is the default branch":            {revision: "HEAD", want: fx.c3},
		"branch name":                           {revision: "feature", want: fx.c2},
		"full branch ref":                       {revision: "refs/heads/feature", want: fx.c2},
		"lightweight tag":                       {revision: "v1", want: fx.c1},
		"annotated tag resolves to its commit":  {revision: "v2", want: fx.c2},
		"full annotated tag ref":                {revision: "refs/tags/v2", want: fx.c2},
		"full SHA":                              {revision: fx.c1, want: fx.c1},
		"upper-case full SHA":                   {revision: strings.ToUpper(fx.c2), want: fx.c2},
		"short SHA":                             {revision: fx.c2[:7], want: fx.c2},
		"annotated tag object SHA is peeled":    {revision: fx.v2Object, want: fx.c2},
		"revision with surrounding white space": {revision: " main ", want: fx.c3},
	}
	for remoteName, remote := range remotes {
		t.Run(remoteName, func(t *testing.T) {
			cache := NewCache(t.TempDir(), Options{})
			for name, tc := range revisions {
				t.Run(name, func(t *testing.T) {
					got, err := cache.Resolve(testContext(t), remote.url, remote.creds, tc.revision)
					if err != nil {
						t.Fatalf("Resolve(%q): %v", tc.revision, err)
					}
					if got != tc.want {
						t.Errorf("Resolve(%q) = %s, want %s", tc.revision, got, tc.want)
					}
				})
			}
		})
	}
}

func TestResolveShortSHANotYetCachedFetchesOnce(t *testing.T) {
	fx := newStandardFixture(t, t.TempDir(), "apps")
	cache := NewCache(t.TempDir(), Options{})

	got, err := cache.Resolve(testContext(t), fx.fileURL(), Credentials{}, fx.c1[:10])
	if err != nil {
		t.Fatal(err)
	}
	if got != fx.c1 {
		t.Errorf("got %s, want %s", got, fx.c1)
	}
	if s := cache.Stats(); s.Fetches != 1 || s.Clones != 1 {
		t.Errorf("stats = %+v, want one clone", s)
	}
}

func TestResolveUnknownRevisionNamesIt(t *testing.T) {
	fx := newStandardFixture(t, t.TempDir(), "apps")
	cache := NewCache(t.TempDir(), Options{})

	tests := map[string]struct{ revision string }{
		"unknown branch":     {revision: "no-such-branch"},
		"unknown full SHA":   {revision: strings.Repeat("ab", 20)},
		"unknown short SHA":  {revision: "abcdef1"},
		"unknown refs/ name": {revision: "refs/heads/nope"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := cache.Resolve(testContext(t), fx.fileURL(), Credentials{}, tc.revision)
			if err == nil {
				t.Fatal("want an error")
			}
			t.Logf("error: %v", err)
			if !errors.Is(err, ErrRevisionNotFound) {
				t.Errorf("error %q does not wrap ErrRevisionNotFound", err)
			}
			for _, want := range []string{tc.revision, fx.dir} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestResolveFetchesOnlyWhenTheRemoteChanged(t *testing.T) {
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	srv := newGitHTTPServer(t, root)
	url, creds := srv.repoURL("apps"), httpCreds()
	cache := NewCache(t.TempDir(), Options{})
	ctx := testContext(t)

	before := cache.Stats()
	if got, err := cache.Resolve(ctx, url, creds, "main"); err != nil || got != fx.c3 {
		t.Fatalf("first Resolve = %s, %v; want %s", got, err, fx.c3)
	}
	if d := statsDelta(before, cache.Stats()); d != (Stats{LsRemotes: 1, Fetches: 1, Clones: 1}) {
		t.Errorf("first resolve: stats delta %+v, want one ls-remote and one clone", d)
	}

	before = cache.Stats()
	if got, err := cache.Resolve(ctx, url, creds, "main"); err != nil || got != fx.c3 {
		t.Fatalf("unchanged Resolve = %s, %v; want %s", got, err, fx.c3)
	}
	if d := statsDelta(before, cache.Stats()); d != (Stats{LsRemotes: 1}) {
		t.Errorf("unchanged repo: stats delta %+v, want one ls-remote and nothing else", d)
	}

	fx.writeFile("new.txt", "new\n", 0o644)
	c4 := fx.commit("new commit")
	before = cache.Stats()
	if got, err := cache.Resolve(ctx, url, creds, "main"); err != nil || got != c4 {
		t.Fatalf("Resolve after push = %s, %v; want %s", got, err, c4)
	}
	if d := statsDelta(before, cache.Stats()); d != (Stats{LsRemotes: 1, Fetches: 1}) {
		t.Errorf("after push: stats delta %+v, want one ls-remote and one fetch", d)
	}

	// A commit that is already cached needs no network, even with the
	// server gone.
	srv.Close()
	before = cache.Stats()
	if got, err := cache.Resolve(ctx, url, creds, fx.c1); err != nil || got != fx.c1 {
		t.Fatalf("Resolve of cached full SHA = %s, %v; want %s", got, err, fx.c1)
	}
	if d := statsDelta(before, cache.Stats()); d != (Stats{}) {
		t.Errorf("cached full SHA: stats delta %+v, want no work", d)
	}
}

func TestResolveReusesCacheAcrossInstances(t *testing.T) {
	fx := newStandardFixture(t, t.TempDir(), "apps")
	dir := t.TempDir()
	if _, err := NewCache(dir, Options{}).Resolve(testContext(t), fx.fileURL(), Credentials{}, "main"); err != nil {
		t.Fatal(err)
	}

	// Another spelling of the same URL maps to the same cache directory.
	restarted := NewCache(dir, Options{})
	got, err := restarted.Resolve(testContext(t), fx.dir+"/", Credentials{}, "main")
	if err != nil {
		t.Fatal(err)
	}
	if got != fx.c3 {
		t.Errorf("got %s, want %s", got, fx.c3)
	}
	if s := restarted.Stats(); s.Fetches != 0 || s.Clones != 0 {
		t.Errorf("restarted cache stats %+v, want no fetch", s)
	}
}

func TestResolveWithWrongCredentials(t *testing.T) {
	root := t.TempDir()
	newStandardFixture(t, root, "apps")
	srv := newGitHTTPServer(t, root)
	cache := NewCache(t.TempDir(), Options{})
	const wrongPassword = "wr0ng-passw0rd-value"

	tests := map[string]struct {
		url   string
		creds Credentials
	}{
		"wrong password": {url: srv.repoURL("apps"), creds: Credentials{Username: testUser, Password: wrongPassword}},
		"no credentials": {url: srv.repoURL("apps")},
		"wrong password embedded in the URL": {
			url: strings.Replace(srv.repoURL("apps"), "http://", "http://"+testUser+":"+wrongPassword+"@", 1),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := cache.Resolve(testContext(t), tc.url, tc.creds, "main")
			if err == nil {
				t.Fatal("want an authentication error")
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			if !strings.Contains(msg, "authentication") {
				t.Errorf("error %q does not mention authentication", msg)
			}
			if strings.Contains(msg, wrongPassword) {
				t.Errorf("error %q leaks the password", msg)
			}
			if !strings.Contains(msg, srv.repoURL("apps")) || !strings.Contains(msg, `"main"`) {
				t.Errorf("error %q does not name the repository and revision", msg)
			}
		})
	}
}

func TestResolveOverHTTPSWithCustomCA(t *testing.T) {
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	srv, caPEM := newGitHTTPSServer(t, root)
	url := srv.repoURL("apps")

	t.Run("trusted through CAData", func(t *testing.T) {
		creds := httpCreds()
		creds.CAData = caPEM
		got, err := NewCache(t.TempDir(), Options{}).Resolve(testContext(t), url, creds, "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		if got != fx.c3 {
			t.Errorf("got %s, want %s", got, fx.c3)
		}
	})
	t.Run("rejected without CAData", func(t *testing.T) {
		_, err := NewCache(t.TempDir(), Options{}).Resolve(testContext(t), url, httpCreds(), "HEAD")
		if err == nil {
			t.Fatal("want a certificate error")
		}
		if !strings.Contains(err.Error(), "certificate") {
			t.Errorf("error %q does not mention the certificate", err)
		}
	})
	t.Run("accepted when insecure", func(t *testing.T) {
		creds := httpCreds()
		creds.Insecure = true
		if _, err := NewCache(t.TempDir(), Options{}).Resolve(testContext(t), url, creds, "HEAD"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestConcurrentResolveFetchesOnce(t *testing.T) {
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	srv := newGitHTTPServer(t, root)
	cache := NewCache(t.TempDir(), Options{})
	ctx := testContext(t)

	const callers = 10
	results := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			results[i], errs[i] = cache.Resolve(ctx, srv.repoURL("apps"), httpCreds(), "main")
		})
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || results[i] != fx.c3 {
			t.Errorf("caller %d: %s, %v; want %s", i, results[i], errs[i], fx.c3)
		}
	}
	if s := cache.Stats(); s.Clones != 1 || s.Fetches != 1 {
		t.Errorf("stats %+v, want exactly one clone and one fetch", s)
	}
}

func TestLsRemote(t *testing.T) {
	fx := newStandardFixture(t, t.TempDir(), "apps")
	cache := NewCache(t.TempDir(), Options{})

	refs, err := cache.LsRemote(testContext(t), fx.fileURL(), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"HEAD":               fx.c3,
		"refs/heads/main":    fx.c3,
		"refs/heads/feature": fx.c2,
		"refs/tags/v1":       fx.c1,
		"refs/tags/v2":       fx.v2Object,
		"refs/tags/v2^{}":    fx.c2,
	}
	for name, sha := range want {
		if refs[name] != sha {
			t.Errorf("refs[%q] = %q, want %q", name, refs[name], sha)
		}
	}
	if s := cache.Stats(); s != (Stats{LsRemotes: 1}) {
		t.Errorf("stats %+v, want one ls-remote only", s)
	}
}

func TestCheckout(t *testing.T) {
	fx := newStandardFixture(t, t.TempDir(), "apps")
	cache := NewCache(t.TempDir(), Options{})
	ctx := testContext(t)
	for _, rev := range []string{"v1", "main"} {
		if _, err := cache.Resolve(ctx, fx.fileURL(), Credentials{}, rev); err != nil {
			t.Fatal(err)
		}
	}

	first, err := cache.Checkout(ctx, fx.fileURL(), fx.c1)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("trees", fx.c1); !strings.HasSuffix(first, want) {
		t.Errorf("checkout dir %s does not end in %s", first, want)
	}
	assertFile(t, filepath.Join(first, "README.md"), "hello\n", 0o644)
	assertFile(t, filepath.Join(first, "deploy", "app.yaml"), "kind: ConfigMap\n", 0o644)
	assertFile(t, filepath.Join(first, "old.txt"), "going away\n", 0o644)
	assertFile(t, filepath.Join(first, "bin", "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	target, err := os.Readlink(filepath.Join(first, "link.yaml"))
	if err != nil {
		t.Fatalf("link.yaml is not a symlink: %v", err)
	}
	if target != "deploy/app.yaml" {
		t.Errorf("link.yaml points to %q, want deploy/app.yaml", target)
	}

	later, err := cache.Checkout(ctx, fx.fileURL(), fx.c3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(later, "old.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old.txt was deleted in %s but is in its checkout (err %v)", fx.c3, err)
	}
	assertFile(t, filepath.Join(later, "README.md"), "hello\n", 0o644)

	entries, err := os.ReadDir(filepath.Dir(first))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("trees directory holds %d entries, want 2 (no leftovers): %v", len(entries), entries)
	}
	if s := cache.Stats(); s.Checkouts != 2 {
		t.Errorf("stats %+v, want two checkouts", s)
	}
}

func TestConcurrentCheckoutMaterializesOnce(t *testing.T) {
	fx := newStandardFixture(t, t.TempDir(), "apps")
	cache := NewCache(t.TempDir(), Options{})
	ctx := testContext(t)
	sha, err := cache.Resolve(ctx, fx.fileURL(), Credentials{}, "main")
	if err != nil {
		t.Fatal(err)
	}

	const callers = 10
	dirs := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { dirs[i], errs[i] = cache.Checkout(ctx, fx.fileURL(), sha) })
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Errorf("caller %d: %s, %v; want %s", i, dirs[i], errs[i], dirs[0])
		}
	}
	if s := cache.Stats(); s.Checkouts != 1 {
		t.Errorf("stats %+v, want one checkout", s)
	}
}

func TestCheckoutRejectsUnknownCommits(t *testing.T) {
	fx := newStandardFixture(t, t.TempDir(), "apps")
	ctx := testContext(t)

	tests := map[string]struct {
		resolveFirst bool
		sha          string
		want         string
	}{
		"repository never resolved": {sha: fx.c1, want: "not in the cache"},
		"commit not fetched":        {resolveFirst: true, sha: strings.Repeat("12", 20), want: "not in the cache"},
		"abbreviated SHA":           {resolveFirst: true, sha: fx.c1[:7], want: "full 40 character"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cache := NewCache(t.TempDir(), Options{})
			if tc.resolveFirst {
				if _, err := cache.Resolve(ctx, fx.fileURL(), Credentials{}, "main"); err != nil {
					t.Fatal(err)
				}
			}
			_, err := cache.Checkout(ctx, fx.fileURL(), tc.sha)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.sha) {
				t.Errorf("error %v, want one naming %s and saying %q", err, tc.sha, tc.want)
			}
		})
	}
}

func assertFile(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Errorf("stat %s: %v", path, err)
		return
	}
	if !fi.Mode().IsRegular() {
		t.Errorf("%s is %v, want a regular file", path, fi.Mode())
		return
	}
	if fi.Mode().Perm() != perm {
		t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), perm)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("read %s: %v", path, err)
		return
	}
	if string(got) != content {
		t.Errorf("%s = %q, want %q", path, got, content)
	}
}

func TestResolveWithTLSClientCertificate(t *testing.T) {
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	certPEM, keyPEM := newClientCert(t)
	srv, caPEM := newGitMTLSServer(t, root, certPEM)

	t.Run("accepted with the client certificate", func(t *testing.T) {
		creds := httpCreds()
		creds.CAData, creds.TLSClientCertData, creds.TLSClientCertKey = caPEM, string(certPEM), string(keyPEM)
		got, err := NewCache(t.TempDir(), Options{}).Resolve(testContext(t), srv.repoURL("apps"), creds, "main")
		if err != nil {
			t.Fatal(err)
		}
		if got != fx.c3 {
			t.Errorf("got %s, want %s", got, fx.c3)
		}
	})
	t.Run("rejected without it", func(t *testing.T) {
		creds := httpCreds()
		creds.CAData = caPEM
		if _, err := NewCache(t.TempDir(), Options{}).Resolve(testContext(t), srv.repoURL("apps"), creds, "main"); err == nil {
			t.Fatal("want a TLS error")
		}
	})
}
