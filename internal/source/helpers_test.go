package source

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const gitHTTPBackend = "/usr/lib/git-core/git-http-backend"

// fixtureRepo is a non-bare source repository that tests commit to; serving
// it directly means a commit here is what a push would be on a real server.
type fixtureRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	wt   *git.Worktree
	now  time.Time
}

// newFixtureRepo creates an empty repository named name under root, with
// "main" as its default branch.
func newFixtureRepo(t *testing.T, root, name string) *fixtureRepo {
	t.Helper()
	dir := filepath.Join(root, name)
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatalf("init fixture repo: %v", err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatalf("fixture worktree: %v", err)
	}
	return &fixtureRepo{t: t, dir: dir, repo: repo, wt: wt, now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (f *fixtureRepo) fileURL() string { return "file://" + f.dir }

func (f *fixtureRepo) writeFile(path, content string, perm os.FileMode) {
	f.t.Helper()
	full := filepath.Join(f.dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), perm); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Chmod(full, perm); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.wt.Add(path); err != nil {
		f.t.Fatalf("add %s: %v", path, err)
	}
}

func (f *fixtureRepo) symlink(path, target string) {
	f.t.Helper()
	if err := os.Symlink(target, filepath.Join(f.dir, path)); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.wt.Add(path); err != nil {
		f.t.Fatalf("add %s: %v", path, err)
	}
}

func (f *fixtureRepo) remove(path string) {
	f.t.Helper()
	if _, err := f.wt.Remove(path); err != nil {
		f.t.Fatalf("remove %s: %v", path, err)
	}
}

// commit records the staged changes and returns the new commit SHA. Each
// commit gets a later timestamp so identical trees still differ.
func (f *fixtureRepo) commit(msg string) string {
	f.t.Helper()
	f.now = f.now.Add(time.Minute)
	h, err := f.wt.Commit(msg, &git.CommitOptions{Author: f.signature(), AllowEmptyCommits: true})
	if err != nil {
		f.t.Fatalf("commit: %v", err)
	}
	return h.String()
}

func (f *fixtureRepo) signature() *object.Signature {
	return &object.Signature{Name: "Skiff Test", Email: "test@skiff.invalid", When: f.now}
}

// switchBranch checks out branch, creating it at HEAD when create is set.
func (f *fixtureRepo) switchBranch(branch string, create bool) {
	f.t.Helper()
	err := f.wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(branch), Create: create})
	if err != nil {
		f.t.Fatalf("checkout %s: %v", branch, err)
	}
}

func (f *fixtureRepo) lightweightTag(name, sha string) {
	f.t.Helper()
	if _, err := f.repo.CreateTag(name, plumbing.NewHash(sha), nil); err != nil {
		f.t.Fatalf("tag %s: %v", name, err)
	}
}

// annotatedTag creates a tag object and returns its own SHA, which differs
// from the commit it points at.
func (f *fixtureRepo) annotatedTag(name, sha string) string {
	f.t.Helper()
	ref, err := f.repo.CreateTag(name, plumbing.NewHash(sha), &git.CreateTagOptions{Tagger: f.signature(), Message: "release " + name})
	if err != nil {
		f.t.Fatalf("tag %s: %v", name, err)
	}
	return ref.Hash().String()
}

// gitServer serves every repository under root over git's smart HTTP
// protocol, behind basic auth.
type gitServer struct {
	*httptest.Server
	root string
}

func (s *gitServer) repoURL(name string) string { return s.URL + "/git/" + name }

const (
	testUser     = "skiff"
	testPassword = "s3cr3t-passw0rd"
)

func gitHTTPHandler(t *testing.T, root string) http.Handler {
	t.Helper()
	if _, err := os.Stat(gitHTTPBackend); err != nil {
		t.Fatalf("git smart HTTP tests need %s (Debian package git): %v", gitHTTPBackend, err)
	}
	home := t.TempDir() // keep the user's git config out of the server
	backend := &cgi.Handler{
		Path: gitHTTPBackend,
		Root: "/git",
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + home,
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(testUser)) != 1 ||
			subtle.ConstantTimeCompare([]byte(pass), []byte(testPassword)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="skiff-test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})
}

// newGitHTTPServer starts a plain HTTP git server on 127.0.0.1.
func newGitHTTPServer(t *testing.T, root string) *gitServer {
	t.Helper()
	srv := httptest.NewServer(gitHTTPHandler(t, root))
	t.Cleanup(srv.Close)
	return &gitServer{Server: srv, root: root}
}

// newGitHTTPSServer starts an HTTPS git server whose certificate is signed by
// a test-only CA; caPEM returns that CA for Credentials.CAData.
func newGitHTTPSServer(t *testing.T, root string) (*gitServer, []byte) {
	t.Helper()
	srv := httptest.NewUnstartedServer(gitHTTPHandler(t, root))
	// Handshakes rejected on purpose would otherwise clutter the test log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &gitServer{Server: srv, root: root}, caPEM
}

func httpCreds() Credentials { return Credentials{Username: testUser, Password: testPassword} }

// statsDelta returns what happened between two snapshots.
func statsDelta(before, after Stats) Stats {
	return Stats{
		LsRemotes: after.LsRemotes - before.LsRemotes,
		Fetches:   after.Fetches - before.Fetches,
		Clones:    after.Clones - before.Clones,
		Checkouts: after.Checkouts - before.Checkouts,
	}
}

// standardFixture builds the repository most tests use:
//
//	main:    c1 (README, app.yaml, old.txt) → c3 (old.txt deleted)
//	feature: c1 → c2 (feature.txt)
//	v1 (lightweight) → c1, v2 (annotated) → c2
type standardFixture struct {
	*fixtureRepo
	c1, c2, c3 string
	v2Object   string
}

func newStandardFixture(t *testing.T, root, name string) *standardFixture {
	t.Helper()
	f := &standardFixture{fixtureRepo: newFixtureRepo(t, root, name)}
	f.writeFile("README.md", "hello\n", 0o644)
	f.writeFile("deploy/app.yaml", "kind: ConfigMap\n", 0o644)
	f.writeFile("old.txt", "going away\n", 0o644)
	f.writeFile("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	f.symlink("link.yaml", "deploy/app.yaml")
	f.c1 = f.commit("first")
	f.lightweightTag("v1", f.c1)

	f.switchBranch("feature", true)
	f.writeFile("feature.txt", "feature\n", 0o644)
	f.c2 = f.commit("feature work")
	f.v2Object = f.annotatedTag("v2", f.c2)

	f.switchBranch("main", false)
	f.remove("old.txt")
	f.c3 = f.commit("drop old.txt")
	return f
}

// newClientCert returns a self-signed client certificate and its key, both
// PEM encoded, for mutual TLS tests.
func newClientCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "skiff-test-client"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// newGitMTLSServer is newGitHTTPSServer that also demands a client
// certificate signed by clientCA.
func newGitMTLSServer(t *testing.T, root string, clientCA []byte) (*gitServer, []byte) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(clientCA) {
		t.Fatal("bad client CA")
	}
	srv := httptest.NewUnstartedServer(gitHTTPHandler(t, root))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &gitServer{Server: srv, root: root}, caPEM
}
