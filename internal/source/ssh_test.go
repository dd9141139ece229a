package source

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

const (
	gitUploadPack = "/usr/bin/git-upload-pack"
	sshTestUser   = "git"
	// sshConnDeadline bounds every server connection, so a stuck client
	// cannot keep a goroutine or a git process alive.
	sshConnDeadline = 30 * time.Second
)

// sshGitServer is a real SSH server on 127.0.0.1 that serves every
// repository under root read-only: it accepts only one client public key for
// user "git" and runs git-upload-pack for "exec" requests.
type sshGitServer struct {
	t          *testing.T
	root       string
	port       int
	authorized ssh.PublicKey
	config     *ssh.ServerConfig
	ln         net.Listener
	ctx        context.Context

	uploadPacks atomic.Int64 // git-upload-pack processes started

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// newSSHGitServer starts the server; it stops on test cleanup. The server
// presents every host key in hostKeys.
func newSSHGitServer(t *testing.T, root string, authorized ssh.PublicKey, hostKeys ...ssh.Signer) *sshGitServer {
	t.Helper()
	if _, err := os.Stat(gitUploadPack); err != nil {
		t.Fatalf("SSH git tests need %s (Debian package git): %v", gitUploadPack, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &sshGitServer{
		t:          t,
		root:       root,
		port:       ln.Addr().(*net.TCPAddr).Port,
		authorized: authorized,
		ln:         ln,
		ctx:        ctx,
		conns:      make(map[net.Conn]struct{}),
	}
	s.config = &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if meta.User() == sshTestUser && bytes.Equal(key.Marshal(), s.authorized.Marshal()) {
				return &ssh.Permissions{}, nil
			}
			return nil, fmt.Errorf("public key of %s is not authorized", meta.User())
		},
	}
	for _, k := range hostKeys {
		s.config.AddHostKey(k)
	}

	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(func() {
		_ = ln.Close()
		cancel() // kills running git processes
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *sshGitServer) repoURL(name string) string {
	return fmt.Sprintf("ssh://%s@127.0.0.1:%d/%s.git", sshTestUser, s.port, name)
}

// knownHostsLine is key as a known_hosts entry for this server.
func (s *sshGitServer) knownHostsLine(key ssh.PublicKey) string {
	return fmt.Sprintf("[127.0.0.1]:%d %s", s.port, ssh.MarshalAuthorizedKey(key))
}

// acceptLoop ends when the listener is closed.
func (s *sshGitServer) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.ctx.Err() != nil { // cleanup already closed the tracked conns
			s.mu.Unlock()
			_ = conn.Close()
			return
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(conn)
	}
}

func (s *sshGitServer) serveConn(conn net.Conn) {
	defer s.wg.Done()
	defer func() {
		_ = conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	_ = conn.SetDeadline(time.Now().Add(sshConnDeadline))
	sconn, chans, reqs, err := ssh.NewServerConn(conn, s.config)
	if err != nil {
		return // failed handshakes and rejected keys are part of the tests
	}
	defer sconn.Close()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ssh.DiscardRequests(reqs) // ends when the connection closes
	}()
	// Ends when the connection closes, at the latest at the deadline.
	for newCh := range chans {
		if newCh.ChannelType() != "session" {
			_ = newCh.Reject(ssh.UnknownChannelType, "only sessions are supported")
			continue
		}
		ch, chReqs, err := newCh.Accept()
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go s.serveSession(ch, chReqs)
	}
}

// serveSession runs at most one command; its request loop ends when the
// channel closes.
func (s *sshGitServer) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer s.wg.Done()
	defer ch.Close()
	started := false
	for req := range reqs {
		if req.Type != "exec" || started {
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
			continue
		}
		var payload struct{ Command string }
		if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
			_ = req.Reply(false, nil)
			continue
		}
		dir, err := s.uploadPackDir(payload.Command)
		if err != nil {
			_ = req.Reply(false, nil)
			fmt.Fprintf(ch.Stderr(), "skiff test server: %v\n", err)
			sendExitStatus(ch, 128)
			return
		}
		_ = req.Reply(true, nil)
		started = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sendExitStatus(ch, s.runUploadPack(ch, dir))
			_ = ch.Close() // also ends the request loop
		}()
	}
}

// uploadPackDir accepts only "git-upload-pack '<path>'" (or "git
// upload-pack") where path names a repository directly under root, with or
// without a ".git" suffix.
func (s *sshGitServer) uploadPackDir(command string) (string, error) {
	var arg string
	switch {
	case strings.HasPrefix(command, "git-upload-pack "):
		arg = strings.TrimPrefix(command, "git-upload-pack ")
	case strings.HasPrefix(command, "git upload-pack "):
		arg = strings.TrimPrefix(command, "git upload-pack ")
	default:
		return "", fmt.Errorf("command %q is not allowed", command)
	}
	if len(arg) < 2 || arg[0] != '\'' || arg[len(arg)-1] != '\'' || strings.Contains(arg[1:len(arg)-1], "'") {
		return "", fmt.Errorf("repository argument %s is not a simple quoted path", arg)
	}
	rel := strings.TrimPrefix(arg[1:len(arg)-1], "/")
	if !filepath.IsLocal(rel) || strings.Contains(rel, "/") {
		return "", fmt.Errorf("repository %q is outside the served root", rel)
	}
	for _, name := range []string{rel, strings.TrimSuffix(rel, ".git")} {
		dir := filepath.Join(s.root, name)
		if isDir(dir) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("repository %q does not exist", rel)
}

// runUploadPack runs git-upload-pack on dir with the channel as its standard
// streams and returns its exit code.
func (s *sshGitServer) runUploadPack(ch ssh.Channel, dir string) uint32 {
	s.uploadPacks.Add(1)
	cmd := exec.CommandContext(s.ctx, gitUploadPack, dir)
	cmd.Env = []string{"HOME=" + s.root, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
	cmd.Stdout = ch
	cmd.Stderr = ch.Stderr()
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 128
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(ch.Stderr(), "skiff test server: %v\n", err)
		return 128
	}
	// Not cmd.Stdin = ch: Wait would then block until the client closes its
	// side. This copy ends once the channel is closed after the exit status.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr) && exitErr.ExitCode() > 0:
		return uint32(exitErr.ExitCode())
	default:
		return 128
	}
}

func sendExitStatus(ch ssh.Channel, code uint32) {
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{code}))
}

// newSSHKey returns an ed25519 key as a signer and as the OpenSSH PEM text
// that Credentials.SSHPrivateKey takes.
func newSSHKey(t *testing.T) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return signer, string(pem.EncodeToMemory(block))
}

func newECDSAHostKey(t *testing.T) ssh.Signer {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// writeKnownHosts writes lines to a new known_hosts file and returns its path.
func writeKnownHosts(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sshSetup is a standard fixture served over SSH with a client key the
// server accepts and a known_hosts file that trusts the server.
type sshSetup struct {
	fx         *standardFixture
	srv        *sshGitServer
	hostKey    ssh.Signer
	clientKey  string // PEM
	knownHosts string // path
}

func newSSHSetup(t *testing.T) *sshSetup {
	t.Helper()
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	hostKey, _ := newSSHKey(t)
	client, clientPEM := newSSHKey(t)
	srv := newSSHGitServer(t, root, client.PublicKey(), hostKey)
	return &sshSetup{
		fx:         fx,
		srv:        srv,
		hostKey:    hostKey,
		clientKey:  clientPEM,
		knownHosts: writeKnownHosts(t, srv.knownHostsLine(hostKey.PublicKey())),
	}
}

func TestSSHResolveAndCheckout(t *testing.T) {
	s := newSSHSetup(t)
	url := s.srv.repoURL("apps")
	cache := NewCache(t.TempDir(), Options{KnownHostsFiles: []string{s.knownHosts}})
	ctx := testContext(t)
	creds := Credentials{SSHPrivateKey: s.clientKey}

	tests := map[string]struct {
		revision string
		want     string
	}{
		"default branch":                       {revision: "HEAD", want: s.fx.c3},
		"branch name":                          {revision: "feature", want: s.fx.c2},
		"lightweight tag":                      {revision: "v1", want: s.fx.c1},
		"annotated tag resolves to its commit": {revision: "v2", want: s.fx.c2},
		"short SHA":                            {revision: s.fx.c1[:8], want: s.fx.c1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := cache.Resolve(ctx, url, creds, tc.revision)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.revision, err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q) = %s, want %s", tc.revision, got, tc.want)
			}
		})
	}

	dir, err := cache.Checkout(ctx, url, s.fx.c1)
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "README.md"), "hello\n", 0o644)
	assertFile(t, filepath.Join(dir, "deploy", "app.yaml"), "kind: ConfigMap\n", 0o644)
	assertFile(t, filepath.Join(dir, "old.txt"), "going away\n", 0o644)
	assertFile(t, filepath.Join(dir, "bin", "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	if target, err := os.Readlink(filepath.Join(dir, "link.yaml")); err != nil || target != "deploy/app.yaml" {
		t.Errorf("link.yaml: target %q, err %v; want a symlink to deploy/app.yaml", target, err)
	}

	refs, err := cache.LsRemote(ctx, url, creds)
	if err != nil {
		t.Fatal(err)
	}
	if refs["refs/heads/main"] != s.fx.c3 || refs["refs/tags/v2^{}"] != s.fx.c2 {
		t.Errorf("LsRemote = %v, want main at %s and v2 peeled to %s", refs, s.fx.c3, s.fx.c2)
	}
}

func TestSSHAuthenticationFailure(t *testing.T) {
	s := newSSHSetup(t)
	_, wrongKey := newSSHKey(t)
	url := s.srv.repoURL("apps")

	tests := map[string]struct {
		creds   Credentials
		wantErr string
	}{
		"a private key the server does not accept is rejected": {
			creds:   Credentials{SSHPrivateKey: wrongKey},
			wantErr: "unable to authenticate",
		},
		"a user name the server does not accept is rejected": {
			creds:   Credentials{SSHPrivateKey: s.clientKey, Username: "mallory"},
			wantErr: "unable to authenticate",
		},
		"garbage instead of a private key is rejected before connecting": {
			creds:   Credentials{SSHPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n"},
			wantErr: "parse SSH private key",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cache := NewCache(t.TempDir(), Options{KnownHostsFiles: []string{s.knownHosts}})
			_, err := cache.Resolve(testContext(t), url, tc.creds, "main")
			if err == nil {
				t.Fatal("want an authentication error")
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			if !strings.Contains(msg, tc.wantErr) {
				t.Errorf("error %q does not contain %q", msg, tc.wantErr)
			}
			if !strings.Contains(msg, url) || !strings.Contains(msg, `"main"`) {
				t.Errorf("error %q does not name the repository and revision", msg)
			}
			assertNoKeyMaterial(t, msg, tc.creds.SSHPrivateKey)
			if s := cache.Stats(); s.Fetches != 0 {
				t.Errorf("stats %+v, want no fetch", s)
			}
		})
	}
	if n := s.srv.uploadPacks.Load(); n != 0 {
		t.Errorf("server ran git-upload-pack %d times for rejected clients", n)
	}
}

// assertNoKeyMaterial fails if msg contains the PEM text or any line of its
// base64 body.
func assertNoKeyMaterial(t *testing.T, msg, keyPEM string) {
	t.Helper()
	if keyPEM == "" {
		return
	}
	if strings.Contains(msg, keyPEM) {
		t.Errorf("error %q leaks the private key", msg)
	}
	for line := range strings.Lines(keyPEM) {
		line = strings.TrimSpace(line)
		if len(line) >= 8 && !strings.HasPrefix(line, "-----") && strings.Contains(msg, line) {
			t.Errorf("error %q leaks private key material %q", msg, line)
		}
	}
}

func TestSSHHostKeyVerification(t *testing.T) {
	s := newSSHSetup(t)
	url := s.srv.repoURL("apps")
	otherHostKey, _ := newSSHKey(t)
	otherHostLine := fmt.Sprintf("[127.0.0.1]:%d %s", s.srv.port+1, ssh.MarshalAuthorizedKey(s.hostKey.PublicKey()))

	tests := map[string]struct {
		knownHosts []string // lines
		insecure   bool
		wantErr    string // empty means success
	}{
		"a known host key is accepted": {
			knownHosts: []string{s.srv.knownHostsLine(s.hostKey.PublicKey())},
		},
		"a different key for the host is rejected": {
			knownHosts: []string{s.srv.knownHostsLine(otherHostKey.PublicKey())},
			wantErr:    "host key",
		},
		"a host missing from known_hosts is rejected": {
			knownHosts: []string{otherHostLine},
			wantErr:    "host key",
		},
		"a different key is accepted when insecure": {
			knownHosts: []string{s.srv.knownHostsLine(otherHostKey.PublicKey())},
			insecure:   true,
		},
		"a host missing from known_hosts is accepted when insecure": {
			knownHosts: []string{otherHostLine},
			insecure:   true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			knownHosts := writeKnownHosts(t, tc.knownHosts...)
			cache := NewCache(t.TempDir(), Options{KnownHostsFiles: []string{knownHosts}})
			creds := Credentials{SSHPrivateKey: s.clientKey, Insecure: tc.insecure}
			got, err := cache.Resolve(testContext(t), url, creds, "main")
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got != s.fx.c3 {
					t.Errorf("got %s, want %s", got, s.fx.c3)
				}
				return
			}
			if err == nil {
				t.Fatal("want a host key error")
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			if !strings.Contains(msg, tc.wantErr) {
				t.Errorf("error %q does not mention %q", msg, tc.wantErr)
			}
			assertNoKeyMaterial(t, msg, s.clientKey)
		})
	}
}

// Real servers offer several host key types, while known_hosts often holds
// only one of them (for example from `ssh-keyscan -t ed25519`). The client
// must negotiate a type it can verify instead of failing with a mismatch.
func TestSSHHostKeyTypeFromKnownHosts(t *testing.T) {
	root := t.TempDir()
	fx := newStandardFixture(t, root, "apps")
	edHost, _ := newSSHKey(t)
	ecHost := newECDSAHostKey(t)
	client, clientPEM := newSSHKey(t)
	srv := newSSHGitServer(t, root, client.PublicKey(), edHost, ecHost)

	tests := map[string]struct{ known ssh.Signer }{
		"only the ed25519 host key is known": {known: edHost},
		"only the ECDSA host key is known":   {known: ecHost},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			knownHosts := writeKnownHosts(t, srv.knownHostsLine(tc.known.PublicKey()))
			cache := NewCache(t.TempDir(), Options{KnownHostsFiles: []string{knownHosts}})
			got, err := cache.Resolve(testContext(t), srv.repoURL("apps"), Credentials{SSHPrivateKey: clientPEM}, "main")
			if err != nil {
				t.Fatal(err)
			}
			if got != fx.c3 {
				t.Errorf("got %s, want %s", got, fx.c3)
			}
		})
	}
}

func TestSSHResolveFetchesOnlyWhenTheRemoteChanged(t *testing.T) {
	s := newSSHSetup(t)
	url := s.srv.repoURL("apps")
	creds := Credentials{SSHPrivateKey: s.clientKey}
	cache := NewCache(t.TempDir(), Options{KnownHostsFiles: []string{s.knownHosts}})
	ctx := testContext(t)

	steps := []struct {
		name        string
		commit      bool // commit to the served repository first
		wantDelta   Stats
		wantProcess int64 // git-upload-pack runs on the server
	}{
		{name: "first resolve clones", wantDelta: Stats{LsRemotes: 1, Fetches: 1, Clones: 1}, wantProcess: 2},
		{name: "unchanged repository only lists refs", wantDelta: Stats{LsRemotes: 1}, wantProcess: 1},
		{name: "new commit is fetched", commit: true, wantDelta: Stats{LsRemotes: 1, Fetches: 1}, wantProcess: 2},
		{name: "unchanged again only lists refs", wantDelta: Stats{LsRemotes: 1}, wantProcess: 1},
	}
	want := s.fx.c3
	for _, step := range steps {
		if step.commit {
			s.fx.writeFile(step.name+".txt", "new\n", 0o644)
			want = s.fx.commit("new commit")
		}
		before, processes := cache.Stats(), s.srv.uploadPacks.Load()
		got, err := cache.Resolve(ctx, url, creds, "main")
		if err != nil || got != want {
			t.Fatalf("%s: Resolve = %s, %v; want %s", step.name, got, err, want)
		}
		if d := statsDelta(before, cache.Stats()); d != step.wantDelta {
			t.Errorf("%s: stats delta %+v, want %+v", step.name, d, step.wantDelta)
		}
		if n := s.srv.uploadPacks.Load() - processes; n != step.wantProcess {
			t.Errorf("%s: server ran git-upload-pack %d times, want %d", step.name, n, step.wantProcess)
		}
	}
}

func TestSSHServerRefusesOtherCommands(t *testing.T) {
	s := newSSHSetup(t)
	client, err := ssh.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.srv.port), &ssh.ClientConfig{
		User:            sshTestUser,
		Auth:            []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) { return sshSigners(t, s.clientKey), nil })},
		HostKeyCallback: ssh.FixedHostKey(s.hostKey.PublicKey()),
		Timeout:         10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	tests := map[string]struct{ command string }{
		"receive-pack":                 {command: "git-receive-pack '/apps.git'"},
		"path outside the root":        {command: "git-upload-pack '/../apps.git'"},
		"nested path":                  {command: "git-upload-pack '/apps/.git'"},
		"missing repository":           {command: "git-upload-pack '/nope.git'"},
		"shell injection":              {command: "git-upload-pack '/apps.git'; id"},
		"unquoted path":                {command: "git-upload-pack /apps.git"},
		"arbitrary command":            {command: "sh -c id"},
		"upload-pack with extra quote": {command: "git-upload-pack '/ap'ps.git'"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			session, err := client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			if err := session.Run(tc.command); err == nil {
				t.Errorf("server ran %q", tc.command)
			}
		})
	}
	if n := s.srv.uploadPacks.Load(); n != 0 {
		t.Errorf("server ran git-upload-pack %d times for refused commands", n)
	}
}

func sshSigners(t *testing.T, keyPEM string) []ssh.Signer {
	t.Helper()
	signer, err := ssh.ParsePrivateKey([]byte(keyPEM))
	if err != nil {
		t.Error(err)
		return nil
	}
	return []ssh.Signer{signer}
}
