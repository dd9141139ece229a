package source

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Argo CD labels and keys understood by CredentialsForURL.
const (
	secretTypeLabel     = "argocd.argoproj.io/secret-type"
	secretTypeRepo      = "repository"
	secretTypeRepoCreds = "repo-creds"
)

// Credentials authenticate against one git remote. The zero value means
// anonymous access with full TLS and host key verification.
type Credentials struct {
	// Username and Password are HTTP(S) basic auth; an access token goes in
	// Password. For SSH, Username overrides the user in the URL.
	Username, Password string
	// SSHPrivateKey is a PEM encoded private key for ssh:// and scp-like URLs.
	SSHPrivateKey string
	// Insecure skips TLS verification for HTTPS and host key verification
	// for SSH.
	Insecure bool
	// TLSClientCertData and TLSClientCertKey are PEM encoded and enable
	// mutual TLS for HTTPS remotes.
	TLSClientCertData, TLSClientCertKey string
	// CAData holds PEM encoded CA certificates trusted in addition to the
	// system pool for HTTPS remotes.
	CAData []byte
}

// String names the kinds of credentials that are set without revealing any
// of them, so Credentials can be logged or printed safely by callers.
func (c Credentials) String() string {
	set := func(present bool) string {
		if present {
			return "set"
		}
		return "unset"
	}
	return fmt.Sprintf("Credentials{username:%s password:%s sshPrivateKey:%s insecure:%t tlsClientCert:%s caData:%s}",
		set(c.Username != ""), set(c.Password != ""), set(c.SSHPrivateKey != ""), c.Insecure,
		set(c.TLSClientCertData != "" || c.TLSClientCertKey != ""), set(len(c.CAData) > 0))
}

// GoString keeps %#v from bypassing String and printing secrets.
func (c Credentials) GoString() string { return c.String() }

// hasSecrets reports whether c carries anything that authenticates, as
// opposed to transport settings such as Insecure or CAData.
func (c Credentials) hasSecrets() bool {
	return c.Username != "" || c.Password != "" || c.SSHPrivateKey != "" ||
		c.TLSClientCertData != "" || c.TLSClientCertKey != ""
}

// CredentialsForURL picks the credentials for repoURL from Argo CD
// repository Secrets the same way Argo CD does:
//
//   - a Secret labelled argocd.argoproj.io/secret-type=repository whose "url"
//     equals repoURL wins (URLs are compared after normalization: trailing
//     "/", a ".git" suffix and the case of scheme and host do not matter);
//   - otherwise the secret-type=repo-creds Secret with the longest "url"
//     prefix of repoURL is used as a template. Unlike a plain string prefix,
//     the match never crosses the host, so "https://git.example.com" does not
//     match "https://git.example.com.evil.io/x";
//   - a matching repository Secret without any credentials of its own
//     inherits them from the best repo-creds Secret, as in Argo CD.
//
// Keys read: url, username, password, sshPrivateKey, insecure ("true"),
// tlsClientCertData, tlsClientCertKey and, as a Skiff extension, tlsCACertData
// (PEM CA bundle trusted for this repository). Values are taken from Data,
// with StringData taking precedence as the API server would apply it. Ties
// are broken by namespace/name so the result does not depend on list order.
// With no match the zero Credentials (anonymous) is returned.
func CredentialsForURL(secrets []corev1.Secret, repoURL string) Credentials {
	want := normalizeURL(repoURL)
	sorted := make([]*corev1.Secret, 0, len(secrets))
	for i := range secrets {
		sorted = append(sorted, &secrets[i])
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})

	var repo, template *corev1.Secret
	bestPrefix := -1
	for _, s := range sorted {
		raw := secretValue(s, "url")
		if raw == "" {
			continue
		}
		got := normalizeURL(raw)
		switch s.Labels[secretTypeLabel] {
		case secretTypeRepo:
			if repo == nil && got == want {
				repo = s
			}
		case secretTypeRepoCreds:
			if got.base == want.base && strings.HasPrefix(want.path, got.path) && len(got.path) > bestPrefix {
				template, bestPrefix = s, len(got.path)
			}
		}
	}

	switch {
	case repo != nil:
		creds := credentialsFromSecret(repo)
		if !creds.hasSecrets() && template != nil {
			tmpl := credentialsFromSecret(template)
			creds.Username, creds.Password, creds.SSHPrivateKey = tmpl.Username, tmpl.Password, tmpl.SSHPrivateKey
			creds.TLSClientCertData, creds.TLSClientCertKey = tmpl.TLSClientCertData, tmpl.TLSClientCertKey
			if len(creds.CAData) == 0 {
				creds.CAData = tmpl.CAData
			}
		}
		return creds
	case template != nil:
		return credentialsFromSecret(template)
	default:
		return Credentials{}
	}
}

func credentialsFromSecret(s *corev1.Secret) Credentials {
	creds := Credentials{
		Username:          secretValue(s, "username"),
		Password:          secretValue(s, "password"),
		SSHPrivateKey:     secretValue(s, "sshPrivateKey"),
		Insecure:          strings.EqualFold(strings.TrimSpace(secretValue(s, "insecure")), "true"),
		TLSClientCertData: secretValue(s, "tlsClientCertData"),
		TLSClientCertKey:  secretValue(s, "tlsClientCertKey"),
	}
	if ca := secretValue(s, "tlsCACertData"); ca != "" {
		creds.CAData = []byte(ca)
	}
	return creds
}

func secretValue(s *corev1.Secret, key string) string {
	if v, ok := s.StringData[key]; ok {
		return v
	}
	return string(s.Data[key])
}
