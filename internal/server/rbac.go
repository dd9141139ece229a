package server

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"
	"github.com/gobwas/glob"
)

// RBAC resources and actions the API checks (Argo CD's names).
const (
	resApplications = "applications"
	resProjects     = "projects"
	actGet          = "get"
	actCreate       = "create"
	actUpdate       = "update"
	actSync         = "sync"
	actDelete       = "delete"

	keyPolicyCSV     = "policy.csv"
	keyPolicyDefault = "policy.default"
	keyScopes        = "scopes"
)

// defaultScopes is Argo CD's scopes default: an SSO user's groups claim
// names the groups its g lines give roles to.
var defaultScopes = []string{"groups"}

// parseScopes reads argocd-rbac-cm's scopes ("[groups, email]"); empty
// means the default.
func parseScopes(v string) []string {
	v = strings.TrimSpace(v)
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.Trim(strings.TrimSpace(s), `"'`); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return defaultScopes
	}
	return out
}

//go:embed builtin-policy.csv
var builtinPolicy string

// rbacModel is Argo CD's casbin model: a request (subject, resource,
// action, object) is allowed when some allow rule matches and no deny rule
// does; resource, action and object are glob patterns.
const rbacModel = `
[request_definition]
r = sub, res, act, obj

[policy_definition]
p = sub, res, act, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub) && skiffGlobMatch(r.res, p.res) && skiffGlobMatch(r.act, p.act) && skiffGlobMatch(r.obj, p.obj)
`

// parsePolicy turns policy CSV text into casbin rules: "p" lines get five
// fields (an omitted effect means allow), "g" lines two. Comments and blank
// lines are skipped; anything else is an error naming the line.
func parsePolicy(csv string) ([][]string, error) {
	var rules [][]string
	for i, line := range strings.Split(csv, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, ",")
		for j := range fields {
			fields[j] = strings.TrimSpace(fields[j])
		}
		switch fields[0] {
		case "p":
			if len(fields) == 5 {
				fields = append(fields, "allow")
			}
			if len(fields) != 6 {
				return nil, fmt.Errorf("line %d: a policy needs p, subject, resource, action, object[, allow|deny]", i+1)
			}
			if fields[5] != "allow" && fields[5] != "deny" {
				return nil, fmt.Errorf("line %d: effect %q is neither allow nor deny", i+1, fields[5])
			}
		case "g":
			if len(fields) != 3 {
				return nil, fmt.Errorf("line %d: a grouping needs g, user-or-group, role", i+1)
			}
		default:
			return nil, fmt.Errorf("line %d: unknown rule type %q", i+1, fields[0])
		}
		for _, f := range fields {
			if f == "" {
				return nil, fmt.Errorf("line %d: empty field", i+1)
			}
		}
		rules = append(rules, fields)
	}
	return rules, nil
}

// userPolicy joins the policy.csv of argocd-rbac-cm with its overlays
// (policy.<name>.csv, in name order), as Argo CD does.
func userPolicy(data map[string]string) string {
	var keys []string
	for k := range data {
		if k != keyPolicyCSV && strings.HasPrefix(k, "policy.") && strings.HasSuffix(k, ".csv") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := []string{data[keyPolicyCSV]}
	for _, k := range keys {
		parts = append(parts, data[k])
	}
	return strings.Join(parts, "\n")
}

// globs caches compiled patterns; policies are few and long-lived.
var globs sync.Map // string → glob.Glob

// globMatch reports whether value matches pattern; "*" matches across "/"
// as in Argo CD's RBAC.
func globMatch(value, pattern string) bool {
	if pattern == value || pattern == "*" {
		return true
	}
	if g, ok := globs.Load(pattern); ok {
		return g.(glob.Glob).Match(value)
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return false
	}
	globs.Store(pattern, g)
	return g.Match(value)
}

// policy is a compiled RBAC configuration.
type policy struct {
	enforcer    *casbin.Enforcer
	defaultRole string
	// scopes are the ID token claims whose values are an SSO user's RBAC
	// subjects besides the user (groups, email or sub).
	scopes []string
}

// newPolicy compiles the built-in policy, the user's policy CSV and the
// default role.
func newPolicy(userCSV, defaultRole string) (*policy, error) {
	rules, err := parsePolicy(builtinPolicy)
	if err != nil {
		return nil, fmt.Errorf("built-in policy: %w", err)
	}
	user, err := parsePolicy(userCSV)
	if err != nil {
		return nil, err
	}
	m, err := model.NewModelFromString(rbacModel)
	if err != nil {
		return nil, err
	}
	for _, rule := range append(rules, user...) {
		if err := persist.LoadPolicyArray(rule, m); err != nil {
			return nil, err
		}
	}
	e, err := casbin.NewEnforcer(m)
	if err != nil {
		return nil, err
	}
	// Not casbin's own globMatch, whose "*" stops at "/": Argo CD's
	// action/* must match action/apps/Deployment/restart.
	e.AddFunction("skiffGlobMatch", func(args ...any) (any, error) {
		value, _ := args[0].(string)
		pattern, _ := args[1].(string)
		return globMatch(value, pattern), nil
	})
	if err := e.BuildRoleLinks(); err != nil {
		return nil, err
	}
	return &policy{enforcer: e, defaultRole: strings.TrimSpace(defaultRole), scopes: defaultScopes}, nil
}

// permits reports whether the caller may do action on resource object
// as one of its RBAC subjects.
func (p *policy) permits(c *session, resource, action, object string) bool {
	if c.claims.SSO == nil {
		return p.allowedAny([]string{c.user()}, resource, action, object)
	}
	return p.allowedAny(ssoSubjects(c.claims.SSO, p.scopes, c.settings.accounts), resource, action, object)
}

// ssoSubjects are the RBAC subjects of an SSO user: its user ID (sub, as
// Argo CD names it) and the values of the ID token claims scopes names
// (its groups by default; its email only when the provider verified it).
// A value that names a local account is left out: policies name local
// accounts by their name, and an SSO user whose sub, email or group is
// "admin" is not the local admin.
func ssoSubjects(sso *ssoClaims, scopes []string, local map[string]account) []string {
	values := []string{sso.UserID}
	for _, scope := range scopes {
		switch scope {
		case "groups":
			values = append(values, sso.Groups...)
		case "email":
			if sso.EmailVerified {
				values = append(values, sso.Email)
			}
		case "sub":
			values = append(values, sso.Subject)
		}
	}
	var subjects []string
	for _, v := range values {
		if _, isLocal := local[v]; v != "" && !isLocal && !slices.Contains(subjects, v) {
			subjects = append(subjects, v)
		}
	}
	return subjects
}

// allowed reports whether subject may do action on resource object: its own
// rules (and its roles') or those of the default role allow it.
func (p *policy) allowed(subject, resource, action, object string) bool {
	return p.allowedAny([]string{subject}, resource, action, object)
}

// allowedAny reports whether one of subjects, or the default role, may do
// action on resource object.
func (p *policy) allowedAny(subjects []string, resource, action, object string) bool {
	for _, sub := range append(subjects, p.defaultRole) {
		if sub == "" {
			continue
		}
		ok, err := p.enforcer.Enforce(sub, resource, action, object)
		if err == nil && ok {
			return true
		}
	}
	return false
}
