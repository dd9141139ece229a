package source

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

// transportOptions gathers what go-git needs for one remote call; list and
// fetch take the same fields, so they are built once.
type transportOptions struct {
	auth       transport.AuthMethod
	insecure   bool
	clientCert []byte
	clientKey  []byte
	caBundle   []byte
}

// transportFor turns creds into go-git options for rawURL's protocol.
//
// SSH host keys are checked against known_hosts files (knownHosts, or go-git's
// defaults: $SSH_KNOWN_HOSTS, ~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts).
// Only Credentials.Insecure disables the check, because silently trusting
// any host key would let a network attacker serve arbitrary manifests.
func transportFor(rawURL string, creds Credentials, knownHosts []string) (transportOptions, error) {
	opts := transportOptions{insecure: creds.Insecure}
	ep, err := transport.NewEndpoint(strings.TrimSpace(rawURL))
	if err != nil {
		return opts, fmt.Errorf("parse repository URL: %w", err)
	}
	switch strings.ToLower(ep.Protocol) {
	case "http", "https":
		if creds.Username != "" || creds.Password != "" {
			opts.auth = &githttp.BasicAuth{Username: creds.Username, Password: creds.Password}
		}
		if creds.TLSClientCertData != "" || creds.TLSClientCertKey != "" {
			if creds.TLSClientCertData == "" || creds.TLSClientCertKey == "" {
				return opts, fmt.Errorf("TLS client certificate needs both tlsClientCertData and tlsClientCertKey")
			}
			opts.clientCert = []byte(creds.TLSClientCertData)
			opts.clientKey = []byte(creds.TLSClientCertKey)
		}
		opts.caBundle = creds.CAData
	case "ssh":
		if creds.SSHPrivateKey == "" {
			break // let go-git fall back to the SSH agent
		}
		user := creds.Username
		if user == "" {
			user = ep.User
		}
		if user == "" {
			user = "git"
		}
		keys, err := gitssh.NewPublicKeys(user, []byte(creds.SSHPrivateKey), "")
		if err != nil {
			return opts, fmt.Errorf("parse SSH private key: %w", err)
		}
		if creds.Insecure {
			keys.HostKeyCallback = ssh.InsecureIgnoreHostKey()
		} else {
			db, err := gitssh.NewKnownHostsDb(knownHosts...)
			if err != nil {
				return opts, fmt.Errorf("load SSH known_hosts: %w", err)
			}
			check := db.HostKeyCallback()
			keys.HostKeyCallback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
				if err := check(hostname, remote, key); err != nil {
					return fmt.Errorf("SSH host key %s %s of %s is not trusted by known_hosts: %w",
						key.Type(), ssh.FingerprintSHA256(key), hostname, err)
				}
				return nil
			}
			port := ep.Port
			if port <= 0 {
				port = gitssh.DefaultPort
			}
			opts.auth = &knownHostsKeys{
				PublicKeys: keys,
				algorithms: db.HostKeyAlgorithms(net.JoinHostPort(ep.Host, strconv.Itoa(port))),
			}
			break
		}
		opts.auth = keys
	}
	return opts, nil
}

// knownHostsKeys offers the server only the host key types known_hosts has
// for it, as OpenSSH does. go-git does this itself only when it loads
// known_hosts on its own; without it, a server with several host keys (for
// example GitHub) may pick a type known_hosts does not list, and the check
// fails with "key mismatch" although a listed key would have matched.
type knownHostsKeys struct {
	*gitssh.PublicKeys
	algorithms []string // nil: host unknown, keep the defaults
}

func (k *knownHostsKeys) ClientConfig() (*ssh.ClientConfig, error) {
	cfg, err := k.PublicKeys.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.HostKeyAlgorithms = k.algorithms
	return cfg, nil
}

// secretsOf lists strings that must never appear in errors: the password and
// any credentials embedded in the URL itself.
func secretsOf(rawURL string, creds Credentials) []string {
	var out []string
	// Very short values are skipped: scrubbing "ab" would mangle every
	// message while protecting nothing worth protecting.
	add := func(s string, minLen int) {
		if len(s) >= minLen {
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
		}
	}
	add(creds.Password, 4)
	if u, err := url.Parse(strings.TrimSpace(rawURL)); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p, 4)
		}
		if !strings.EqualFold(u.Scheme, "ssh") {
			add(u.User.Username(), 8) // likely a token, not a name like "git"
		}
	}
	return out
}
