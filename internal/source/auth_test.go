package source

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

func TestTransportFor(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sshKey := string(pem.EncodeToMemory(block))
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(knownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missingKnownHosts := filepath.Join(t.TempDir(), "missing")

	tests := map[string]struct {
		url        string
		creds      Credentials
		knownHosts []string
		check      func(t *testing.T, opts transportOptions)
		wantErr    string
	}{
		"HTTPS with a token uses basic auth": {
			url:   "https://git.example.com/org/repo",
			creds: Credentials{Password: "token"},
			check: func(t *testing.T, opts transportOptions) {
				auth, ok := opts.auth.(*githttp.BasicAuth)
				if !ok || auth.Password != "token" {
					t.Errorf("auth = %#v, want basic auth with the token", opts.auth)
				}
			},
		},
		"HTTPS without credentials is anonymous": {
			url: "https://git.example.com/org/repo",
			check: func(t *testing.T, opts transportOptions) {
				if opts.auth != nil {
					t.Errorf("auth = %#v, want none", opts.auth)
				}
			},
		},
		"HTTPS client certificate needs both halves": {
			url:     "https://git.example.com/org/repo",
			creds:   Credentials{TLSClientCertData: "cert"},
			wantErr: "tlsClientCertKey",
		},
		"SSH key with the user from the URL, host keys from known_hosts": {
			url:        "alice@git.example.com:org/repo.git",
			creds:      Credentials{SSHPrivateKey: sshKey},
			knownHosts: []string{knownHosts},
			check: func(t *testing.T, opts transportOptions) {
				keys, ok := opts.auth.(*knownHostsKeys)
				if !ok || keys.User != "alice" || keys.HostKeyCallback == nil {
					t.Errorf("auth = %v, want public keys for alice with a host key check", opts.auth)
				}
			},
		},
		"SSH defaults to the git user": {
			url:   "ssh://git.example.com/org/repo",
			creds: Credentials{SSHPrivateKey: sshKey, Insecure: true},
			check: func(t *testing.T, opts transportOptions) {
				if keys, ok := opts.auth.(*gitssh.PublicKeys); !ok || keys.User != "git" {
					t.Errorf("auth = %v, want public keys for git", opts.auth)
				}
			},
		},
		"SSH without known_hosts fails unless insecure": {
			url:        "ssh://git@git.example.com/org/repo",
			creds:      Credentials{SSHPrivateKey: sshKey},
			knownHosts: []string{missingKnownHosts},
			wantErr:    "known_hosts",
		},
		"SSH with a broken key": {
			url:     "ssh://git@git.example.com/org/repo",
			creds:   Credentials{SSHPrivateKey: "not a key", Insecure: true},
			wantErr: "SSH private key",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts, err := transportFor(tc.url, tc.creds, tc.knownHosts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, opts)
		})
	}
}
