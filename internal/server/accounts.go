package server

import (
	"sort"
	"strings"
	"time"
)

// Names of Argo CD's configuration objects and the keys Skiff reads.
const (
	ConfigMapName          = "argocd-cm"
	SecretName             = "argocd-secret"
	RBACConfigMapName      = "argocd-rbac-cm"
	InitialAdminSecretName = "argocd-initial-admin-secret"

	keyAdminEnabled       = "admin.enabled"
	keyAdminPassword      = "admin.password"
	keyAdminPasswordMtime = "admin.passwordMtime"
	keyServerSecretKey    = "server.secretkey"
	adminUser             = "admin"
)

// Capabilities of an account, as listed in accounts.<name>.
const (
	capLogin  = "login"
	capAPIKey = "apiKey"
)

// account is a local user.
type account struct {
	Name         string
	Enabled      bool
	Capabilities []string
	// PasswordHash is the bcrypt hash from argocd-secret; empty means the
	// account cannot log in with a password.
	PasswordHash string
	// PasswordMtime is when the password last changed: sessions issued
	// before it are no longer valid.
	PasswordMtime time.Time
}

func (a account) can(capability string) bool {
	for _, c := range a.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

// parseAccounts reads the local users from argocd-cm data and argocd-secret
// data as Argo CD stores them: `accounts.<name>: login, apiKey`,
// `accounts.<name>.enabled: "false"`, `admin.enabled: "false"`, and bcrypt
// hashes under `admin.password` and `accounts.<name>.password`. The admin
// account always exists (login only) unless disabled.
func parseAccounts(cm map[string]string, secret map[string][]byte) map[string]account {
	accounts := map[string]account{}
	for key, value := range cm {
		rest, ok := strings.CutPrefix(key, "accounts.")
		if !ok || rest == "" || strings.Contains(rest, ".") {
			continue
		}
		acc := account{Name: rest, Enabled: true}
		for _, c := range strings.Split(value, ",") {
			if c = strings.TrimSpace(c); c != "" {
				acc.Capabilities = append(acc.Capabilities, c)
			}
		}
		sort.Strings(acc.Capabilities)
		if enabled, ok := cm["accounts."+rest+".enabled"]; ok {
			acc.Enabled = isTrue(enabled)
		}
		acc.PasswordHash = string(secret["accounts."+rest+".password"])
		acc.PasswordMtime = parseMtime(secret["accounts."+rest+".passwordMtime"])
		accounts[rest] = acc
	}
	admin := account{Name: adminUser, Enabled: true, Capabilities: []string{capLogin},
		PasswordHash: string(secret[keyAdminPassword]), PasswordMtime: parseMtime(secret[keyAdminPasswordMtime])}
	if enabled, ok := cm[keyAdminEnabled]; ok {
		admin.Enabled = isTrue(enabled)
	}
	accounts[adminUser] = admin
	return accounts
}

// isTrue parses the booleans of Argo CD's ConfigMaps ("true", "false").
func isTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "false", "0", "no", "off":
		return false
	}
	return true
}

// formatMtime writes a password change time: RFC 3339 as Argo CD writes
// it, with the nanoseconds (which Argo CD reads too) so that a session
// issued in the same second but before the change ends with it.
func formatMtime(t time.Time) []byte {
	return []byte(t.UTC().Format(time.RFC3339Nano))
}

// parseMtime reads a password change time (RFC 3339, fractional seconds
// allowed); anything else counts as never.
func parseMtime(b []byte) time.Time {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}
	}
	return t
}
