package helmrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiffcd/skiff/internal/source/helmrepo/helmrepotest"
)

func TestFetchSelectsTheHighestMatchingVersion(t *testing.T) {
	var charts []helmrepotest.Chart
	for _, v := range []string{"0.9.0", "1.0.0", "1.2.0", "1.2.5", "1.10.0", "2.0.0", "2.1.0-beta.1", "not-semver"} {
		charts = append(charts, helmrepotest.Chart{Name: "app", Version: v})
	}
	repo := helmrepotest.NewRepo(t, "", "", charts...)
	c := New(t.TempDir(), repo.Client())

	tests := map[string]struct {
		constraint string
		want       string
		wantErr    string
		// notFound: the error says the version is not there (a user's
		// mistake, answered 400 by the API), not that fetching failed.
		notFound bool
	}{
		"an exact version is that version":               {constraint: "1.2.0", want: "1.2.0"},
		"a range picks its highest version":              {constraint: ">=1.0.0 <2.0.0", want: "1.10.0"},
		"a wildcard picks the highest patch":             {constraint: "1.2.*", want: "1.2.5"},
		"no constraint is the latest stable version":     {constraint: "", want: "2.0.0"},
		"a star is the latest stable version":            {constraint: "*", want: "2.0.0"},
		"a prerelease range admits prereleases":          {constraint: ">=2.1.0-0", want: "2.1.0-beta.1"},
		"a range nothing matches is an error":            {constraint: "3.x", wantErr: `no version matches "3.x"`, notFound: true},
		"an invalid constraint is an error":              {constraint: "one", wantErr: "invalid version constraint"},
		"a version absent from the index is not guessed": {constraint: "1.2.3", wantErr: "no version matches", notFound: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir, got, err := c.Fetch(context.Background(), repo.URL, "app", tc.constraint, Credentials{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Fetch error = %v, want one containing %q", err, tc.wantErr)
				}
				if got := errors.Is(err, ErrVersionNotFound); got != tc.notFound {
					t.Errorf("errors.Is(%v, ErrVersionNotFound) = %v, want %v", err, got, tc.notFound)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("version = %s, want %s", got, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
				t.Errorf("extracted chart has no Chart.yaml: %v", err)
			}
		})
	}
	if n := c.Stats().IndexDownloads; n != 1 {
		t.Errorf("index downloads = %d, want 1 (cached)", n)
	}
}

func TestFetchDownloadsOnceAndExtracts(t *testing.T) {
	repo := helmrepotest.NewRepo(t, "", "", helmrepotest.Chart{Name: "web", Version: "1.0.0", Files: map[string]string{
		"values.yaml":               "replicas: 2\n",
		"templates/deployment.yaml": "kind: Deployment\n",
		"charts/sub/Chart.yaml":     "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
	}})
	cache := t.TempDir()
	c := New(cache, repo.Client())

	var wg sync.WaitGroup
	dirs := make([]string, 8)
	errs := make([]error, 8)
	for i := range dirs {
		wg.Go(func() {
			dirs[i], _, errs[i] = c.Fetch(context.Background(), repo.URL+"/", "web", "1.0.0", Credentials{})
		})
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Fatalf("concurrent fetches returned %s and %s", dirs[0], dirs[i])
		}
	}
	dir := dirs[0]
	if !strings.HasPrefix(dir, cache) || filepath.Base(dir) != "web-1.0.0" {
		t.Errorf("chart dir = %s, want cache/<hash>/web-1.0.0", dir)
	}
	for name, want := range map[string]string{"values.yaml": "replicas: 2\n", "templates/deployment.yaml": "kind: Deployment\n"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "charts", "sub", "Chart.yaml")); err != nil {
		t.Errorf("nested file not extracted: %v", err)
	}

	if _, _, err := c.Fetch(context.Background(), repo.URL, "web", "1.0.0", Credentials{}); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.ChartDownloads != 1 || s.IndexDownloads != 1 {
		t.Errorf("stats = %+v, want one index and one chart download", s)
	}
	if n := repo.Requests("/charts/web-1.0.0.tgz"); n != 1 {
		t.Errorf("server saw %d chart downloads, want 1", n)
	}

	// A fresh client on the same cache finds the chart on disk.
	c2 := New(cache, repo.Client())
	if _, _, err := c2.Fetch(context.Background(), repo.URL, "web", "1.0.0", Credentials{}); err != nil {
		t.Fatal(err)
	}
	if n := c2.Stats().ChartDownloads; n != 0 {
		t.Errorf("second client downloaded the chart %d times, want 0", n)
	}
}

func TestFetchRefreshesTheIndexAfterItsTTL(t *testing.T) {
	repo := helmrepotest.NewRepo(t, "", "", helmrepotest.Chart{Name: "web", Version: "1.0.0"})
	c := New(t.TempDir(), repo.Client())
	now := time.Now()
	c.now = func() time.Time { return now }
	fetch := func() {
		t.Helper()
		if _, _, err := c.Fetch(context.Background(), repo.URL, "web", "", Credentials{}); err != nil {
			t.Fatal(err)
		}
	}
	fetch()
	fetch()
	now = now.Add(DefaultIndexTTL + time.Second)
	fetch()
	c.ForgetIndex(repo.URL)
	fetch()
	if n := c.Stats().IndexDownloads; n != 3 {
		t.Errorf("index downloads = %d, want 3 (first, after TTL, after ForgetIndex)", n)
	}
}

func TestFetchWithBasicAuth(t *testing.T) {
	repo := helmrepotest.NewRepo(t, "reader", "s3cret-pa55", helmrepotest.Chart{Name: "private", Version: "1.0.0"})
	tests := map[string]struct {
		creds   Credentials
		wantErr bool
	}{
		"the right credentials fetch the chart": {creds: Credentials{Username: "reader", Password: "s3cret-pa55"}},
		"a wrong password is refused":           {creds: Credentials{Username: "reader", Password: "wrong-pa55word"}, wantErr: true},
		"no credentials are refused":            {wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := New(t.TempDir(), repo.Client())
			_, _, err := c.Fetch(context.Background(), repo.URL, "private", "1.0.0", tc.creds)
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("Fetch succeeded, want an authentication error")
			}
			msg := err.Error()
			if !strings.Contains(msg, "401") || !strings.Contains(msg, "credentials") {
				t.Errorf("error %q does not say the credentials were refused", msg)
			}
			if tc.creds.Password != "" && strings.Contains(msg, tc.creds.Password) {
				t.Errorf("error %q leaks the password", msg)
			}
		})
	}
}

func TestFetchRefusesBadArchives(t *testing.T) {
	good := helmrepotest.Package(t, helmrepotest.Chart{Name: "evil", Version: "1.0.0"})
	tests := map[string]struct {
		chart   helmrepotest.Chart
		wantErr string
	}{
		"a digest mismatch": {
			chart:   helmrepotest.Chart{Archive: good, Digest: strings.Repeat("ab", 32)},
			wantErr: "digest mismatch",
		},
		"an entry escaping with ..": {
			chart: helmrepotest.Chart{Archive: helmrepotest.Tar(t,
				helmrepotest.TarEntry{Name: "evil/Chart.yaml", Content: "apiVersion: v2\nname: evil\nversion: 1.0.0\n"},
				helmrepotest.TarEntry{Name: "evil/../../outside.txt", Content: "pwned"})},
			wantErr: "escapes the chart directory",
		},
		"an absolute entry": {
			chart: helmrepotest.Chart{Archive: helmrepotest.Tar(t,
				helmrepotest.TarEntry{Name: "/etc/evil", Content: "pwned"})},
			wantErr: "absolute path",
		},
		"a symlink entry": {
			chart: helmrepotest.Chart{Archive: helmrepotest.Tar(t,
				helmrepotest.TarEntry{Name: "evil/Chart.yaml", Content: "apiVersion: v2\nname: evil\nversion: 1.0.0\n"},
				helmrepotest.TarEntry{Name: "evil/values.yaml", Linkname: "/etc/passwd"})},
			wantErr: "not allowed",
		},
		"an archive larger than the limit": {
			chart: helmrepotest.Chart{Archive: helmrepotest.Tar(t,
				helmrepotest.TarEntry{Name: "evil/Chart.yaml", Content: "apiVersion: v2\nname: evil\nversion: 1.0.0\n"},
				helmrepotest.TarEntry{Name: "evil/big.txt", Content: strings.Repeat("x", 4096)})},
			wantErr: "expands beyond",
		},
		"an archive that is not gzip": {
			chart:   helmrepotest.Chart{Archive: []byte("just text")},
			wantErr: "not a gzipped archive",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.chart.Name, tc.chart.Version = "evil", "1.0.0"
			repo := helmrepotest.NewRepo(t, "", "", tc.chart)
			cache := t.TempDir()
			c := New(cache, repo.Client())
			c.Limits.MaxExtractedBytes = 1024
			_, _, err := c.Fetch(context.Background(), repo.URL, "evil", "1.0.0", Credentials{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Fetch error = %v, want one containing %q", err, tc.wantErr)
			}
			// Nothing is left in the cache, and nothing outside it.
			var left []string
			_ = filepath.Walk(cache, func(p string, fi os.FileInfo, _ error) error {
				if fi != nil && !fi.IsDir() {
					left = append(left, p)
				}
				return nil
			})
			if len(left) != 0 {
				t.Errorf("files left in the cache: %v", left)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(cache), "outside.txt")); err == nil {
				t.Error("an entry was written outside the cache")
			}
		})
	}
}

func TestFetchRefusesBadInput(t *testing.T) {
	c := New(t.TempDir(), nil)
	tests := map[string]struct {
		repoURL, chart, wantErr string
	}{
		"an oci URL is not an HTTP repository": {repoURL: "oci://example.com/charts", chart: "a", wantErr: "not an http(s) URL"},
		"credentials in the URL are refused":   {repoURL: "https://u:hunter2@example.com", chart: "a", wantErr: "must not hold credentials"},
		"a chart name with a slash is refused": {repoURL: "https://example.com", chart: "../a", wantErr: "invalid chart name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := c.Fetch(context.Background(), tc.repoURL, tc.chart, "", Credentials{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Fetch error = %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q leaks the password", err)
			}
		})
	}
}
