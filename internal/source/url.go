package source

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// repoURL is a normalized git URL split at the host boundary. Keeping the
// parts apart lets credential prefix matching stay on the same host.
type repoURL struct {
	base string // scheme://[user@]host[:port]
	path string // without leading or trailing "/" and without ".git"
}

func (u repoURL) String() string {
	if u.path == "" {
		return u.base
	}
	return u.base + "/" + u.path
}

var defaultPorts = map[string]int{"http": 80, "https": 443, "ssh": 22, "git": 9418}

// normalizeURL makes equivalent spellings of one repository compare equal:
// surrounding space, trailing "/", a ".git" suffix, the case of scheme and
// host, default ports, scp-like SSH syntax and passwords are ignored. The
// path keeps its case because servers may treat it case-sensitively.
func normalizeURL(raw string) repoURL {
	s := strings.TrimSpace(raw)
	ep, err := transport.NewEndpoint(s)
	if err != nil {
		return repoURL{base: strings.ToLower(trimRepoPath(s))}
	}
	proto := strings.ToLower(ep.Protocol)
	if proto == "file" {
		return repoURL{base: "file://", path: trimRepoPath(filepath.ToSlash(filepath.Clean(ep.Path)))}
	}
	var b strings.Builder
	b.WriteString(proto)
	b.WriteString("://")
	// Only SSH user names select an identity; for HTTP they are credentials.
	if proto == "ssh" && ep.User != "" {
		b.WriteString(ep.User)
		b.WriteByte('@')
	}
	b.WriteString(strings.ToLower(ep.Host))
	if ep.Port != 0 && ep.Port != defaultPorts[proto] {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(ep.Port))
	}
	return repoURL{base: b.String(), path: trimRepoPath(ep.Path)}
}

func trimRepoPath(p string) string {
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(p, ".git")
	return strings.Trim(p, "/")
}

// repoKey names the cache directory of a repository.
func repoKey(raw string) string {
	sum := sha256.Sum256([]byte(normalizeURL(raw).String()))
	return hex.EncodeToString(sum[:])
}

// redactURL removes secrets from a URL so it can appear in errors. HTTP user
// names are dropped too because tokens are often passed as the user name.
func redactURL(raw string) string {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		return s // scp-like or local path: no password syntax
	}
	u, err := url.Parse(s)
	if err != nil {
		// Cut anything between the scheme and the last "@" of the authority.
		scheme, rest, _ := strings.Cut(s, "://")
		authority, path, hasPath := strings.Cut(rest, "/")
		if i := strings.LastIndex(authority, "@"); i >= 0 {
			authority = authority[i+1:]
		}
		if hasPath {
			return scheme + "://" + authority + "/" + path
		}
		return scheme + "://" + authority
	}
	if u.User != nil {
		if strings.EqualFold(u.Scheme, "ssh") {
			u.User = url.User(u.User.Username())
		} else {
			u.User = nil
		}
	}
	return u.String()
}

// Redact returns a repository URL without its credentials, for messages.
func Redact(rawURL string) string { return redactURL(rawURL) }

// SameRepo reports whether two URLs name the same repository (a webhook's
// URL and an Application's spelling of it, for example).
func SameRepo(a, b string) bool { return normalizeURL(a) == normalizeURL(b) }
