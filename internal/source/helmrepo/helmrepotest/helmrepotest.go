// Package helmrepotest serves Helm chart repositories from memory, so that
// tests of chart fetching and rendering run against real HTTP and real
// archives without the network.
package helmrepotest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/yaml"
)

// Chart is one chart version in a repository.
type Chart struct {
	Name, Version string
	// Files are the chart's files by path relative to the chart directory.
	// A Chart.yaml is generated when absent.
	Files map[string]string
	// Archive, when set, is served instead of packaging Files.
	Archive []byte
	// Digest, when set, is put in the index instead of the archive's.
	Digest string
}

// Repo is a running repository.
type Repo struct {
	*httptest.Server
	// Requests counts the requests by path ("/index.yaml", "/charts/a-1.0.0.tgz").
	requests map[string]*atomic.Int64
}

// Requests returns how many times path was requested.
func (r *Repo) Requests(p string) int64 {
	if n, ok := r.requests[p]; ok {
		return n.Load()
	}
	return 0
}

// NewRepo serves charts on 127.0.0.1 with an index whose chart URLs are
// relative. A non-empty username makes every request require basic auth.
// The server stops when the test ends.
func NewRepo(t testing.TB, username, password string, charts ...Chart) *Repo {
	t.Helper()
	type entry struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		APIVersion string   `json:"apiVersion"`
		URLs       []string `json:"urls"`
		Digest     string   `json:"digest"`
	}
	entries := map[string][]entry{}
	blobs := map[string][]byte{}
	repo := &Repo{requests: map[string]*atomic.Int64{"/index.yaml": {}}}
	for _, c := range charts {
		data := c.Archive
		if data == nil {
			data = Package(t, c)
		}
		sum := sha256.Sum256(data)
		digest := hex.EncodeToString(sum[:])
		if c.Digest != "" {
			digest = c.Digest
		}
		rel := fmt.Sprintf("charts/%s-%s.tgz", c.Name, c.Version)
		blobs["/"+rel] = data
		repo.requests["/"+rel] = &atomic.Int64{}
		entries[c.Name] = append(entries[c.Name], entry{Name: c.Name, Version: c.Version, APIVersion: "v2", URLs: []string{rel}, Digest: digest})
	}
	index, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": entries})
	if err != nil {
		t.Fatal(err)
	}
	blobs["/index.yaml"] = index
	repo.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, ok := repo.requests[r.URL.Path]; ok {
			n.Add(1)
		}
		if username != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != username || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		data, ok := blobs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(repo.Close)
	return repo
}

// Package returns the chart as a gzipped tar with the chart name as top
// directory, like `helm package`.
func Package(t testing.TB, c Chart) []byte {
	t.Helper()
	files := map[string]string{}
	for k, v := range c.Files {
		files[k] = v
	}
	if _, ok := files["Chart.yaml"]; !ok {
		files["Chart.yaml"] = fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", c.Name, c.Version)
	}
	entries := make([]TarEntry, 0, len(files))
	for name, content := range files {
		entries = append(entries, TarEntry{Name: path.Join(c.Name, name), Content: content})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return Tar(t, entries...)
}

// TarEntry is one entry of a hand-made archive; a Linkname makes it a symlink.
type TarEntry struct {
	Name, Content, Linkname string
}

// Tar returns a gzipped tar of entries exactly as given, for archives that
// `helm package` would never make.
func Tar(t testing.TB, entries ...TarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: 0o644, Size: int64(len(e.Content)), Typeflag: tar.TypeReg}
		if e.Linkname != "" {
			h = &tar.Header{Name: e.Name, Mode: 0o777, Typeflag: tar.TypeSymlink, Linkname: e.Linkname}
		} else if strings.HasSuffix(e.Name, "/") {
			h = &tar.Header{Name: e.Name, Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Content)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
