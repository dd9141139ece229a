package scm

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Policy is what the server lets the scmProvider and pullRequest
// generators do, as Argo CD's applicationsetcontroller.* settings but
// closed by default: a set's author picks the api URL, and the tokenRef
// token goes there.
type Policy struct {
	// AllowedAPIs are the API URLs a generator's api may name
	// (--appset-allowed-scm-providers, Argo CD's
	// applicationsetcontroller.allowed.scm.providers). Empty allows only
	// the public hosts' APIs, DefaultAPIs; a generator without api uses
	// those.
	AllowedAPIs []string
	// Disabled turns both generators off (--appset-enable-scm-providers=false,
	// applicationsetcontroller.enable.scm.providers).
	Disabled bool
	// TokenRefStrict reads only tokenRef Secrets labelled SCMCredsLabel
	// (--appset-tokenref-strict-mode,
	// applicationsetcontroller.enable.tokenref.strict.mode).
	TokenRefStrict bool
}

// DefaultAPIs are the APIs allowed when Policy.AllowedAPIs is empty.
var DefaultAPIs = []string{"https://api.github.com", "https://gitlab.com"}

// SCMCredsLabel and SCMCredsType mark the Secrets a tokenRef may name in
// strict mode, as Argo CD's.
const (
	SCMCredsLabel = "argocd.argoproj.io/secret-type"
	SCMCredsType  = "scm-creds"
)

// Setting names, for messages.
const (
	allowedSetting = "--appset-allowed-scm-providers"
	enableSetting  = "--appset-enable-scm-providers"
)

// Check says whether the allowed APIs are http(s) URLs, for the server's
// start.
func (p Policy) Check() error {
	for _, a := range p.AllowedAPIs {
		if _, err := apiKey(a); err != nil {
			return fmt.Errorf("%s: %w", allowedSetting, err)
		}
	}
	return nil
}

// allows checks a generator's api (defaultAPI when empty) against the
// policy, before any Secret is read or request sent.
func (p Policy) allows(provider, api, defaultAPI string) error {
	if api == "" {
		api = defaultAPI
	}
	key, err := apiKey(api)
	if err != nil {
		return fmt.Errorf("%s: %w", provider, err)
	}
	allowed := p.AllowedAPIs
	if len(allowed) == 0 {
		allowed = DefaultAPIs
	}
	if slices.ContainsFunc(allowed, func(a string) bool { k, err := apiKey(a); return err == nil && k == key }) {
		return nil
	}
	return fmt.Errorf("%s: api %s is not allowed: the server's %s lists the SCM APIs generators may reach (default: %s)",
		provider, api, allowedSetting, strings.Join(DefaultAPIs, ", "))
}

// apiKey is what two names of one API share: scheme and host in lower
// case and the path without trailing "/" or the api/v3 and api/v4 that
// the clients add, so that https://git.example.com/ and
// https://git.example.com/api/v4 are one.
func apiKey(api string) (string, error) {
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("api %q is not an http(s) URL", api)
	}
	path := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/api/v3", "/api/v4"} {
		path = strings.TrimSuffix(path, suffix)
	}
	return strings.ToLower(u.Scheme+"://"+u.Host) + path, nil
}

// enabled says whether the generators may run.
func (p Policy) enabled(generator string) error {
	if p.Disabled {
		return fmt.Errorf("the %s generator is turned off on this server (%s=false)", generator, enableSetting)
	}
	return nil
}
