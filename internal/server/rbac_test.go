package server

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePolicy(t *testing.T) {
	tests := map[string]struct {
		csv     string
		want    string // rules joined by "|", fields by ","
		wantErr string
	}{
		"policies, groupings, comments and blank lines are read": {
			csv:  "# team\np, role:dev, applications, sync, dev/*, allow\n\n g , alice , role:dev \n",
			want: "p,role:dev,applications,sync,dev/*,allow|g,alice,role:dev",
		},
		"an omitted effect means allow": {
			csv:  "p, role:dev, applications, get, */*",
			want: "p,role:dev,applications,get,*/*,allow",
		},
		"deny is kept": {
			csv:  "p, alice, applications, sync, prod/*, deny",
			want: "p,alice,applications,sync,prod/*,deny",
		},
		"an unknown effect is an error": {
			csv:     "p, alice, applications, sync, prod/*, maybe",
			wantErr: "line 1: effect",
		},
		"a short policy is an error naming the line": {
			csv:     "g, alice, role:dev\np, alice, applications",
			wantErr: "line 2:",
		},
		"an unknown rule type is an error": {
			csv:     "x, alice, role:dev",
			wantErr: `unknown rule type "x"`,
		},
		"an empty field is an error": {
			csv:     "g, , role:dev",
			wantErr: "empty field",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rules, err := parsePolicy(tc.csv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rules {
				got = append(got, strings.Join(r, ","))
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Errorf("rules = %s, want %s", g, tc.want)
			}
		})
	}
}

func TestPolicyAllowed(t *testing.T) {
	const userCSV = `
p, role:dev, applications, *, dev/*, allow
p, role:dev, applications, sync, dev/frozen, deny
g, alice, role:readonly
g, bob, role:dev
g, team-ops, role:admin
p, carol, applications, get, team-*/*, allow
`
	tests := map[string]struct {
		defaultRole string
		subject     string
		resource    string
		action      string
		object      string
		want        bool
	}{
		"admin may sync anything":                               {subject: "admin", resource: "applications", action: "sync", object: "prod/web", want: true},
		"admin may create projects":                             {subject: "admin", resource: "projects", action: "create", object: "x", want: true},
		"readonly may get an application":                       {subject: "alice", resource: "applications", action: "get", object: "prod/web", want: true},
		"readonly may get a project":                            {subject: "alice", resource: "projects", action: "get", object: "default", want: true},
		"readonly may not sync":                                 {subject: "alice", resource: "applications", action: "sync", object: "prod/web"},
		"a role's glob object matches its project":              {subject: "bob", resource: "applications", action: "sync", object: "dev/api", want: true},
		"a role's glob object does not match another project":   {subject: "bob", resource: "applications", action: "sync", object: "prod/api"},
		"deny wins over allow":                                  {subject: "bob", resource: "applications", action: "sync", object: "dev/frozen"},
		"a glob in the middle of an object matches":             {subject: "carol", resource: "applications", action: "get", object: "team-a/web", want: true},
		"an unknown user may do nothing":                        {subject: "mallory", resource: "applications", action: "get", object: "dev/api"},
		"the default role applies to every user":                {defaultRole: "role:readonly", subject: "mallory", resource: "applications", action: "get", object: "dev/api", want: true},
		"the default role gives no more than itself":            {defaultRole: "role:readonly", subject: "mallory", resource: "applications", action: "sync", object: "dev/api"},
		"a group mapped to role:admin gets admin's permissions": {subject: "team-ops", resource: "applications", action: "delete", object: "prod/web", want: true},
		"an action glob of the built-in admin matches":          {subject: "admin", resource: "applications", action: "action/apps/Deployment/restart", object: "prod/web", want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := newPolicy(userCSV, tc.defaultRole)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.allowed(tc.subject, tc.resource, tc.action, tc.object); got != tc.want {
				t.Errorf("allowed(%s, %s, %s, %s) = %v, want %v", tc.subject, tc.resource, tc.action, tc.object, got, tc.want)
			}
		})
	}
}

func TestUserPolicyJoinsOverlays(t *testing.T) {
	got := userPolicy(map[string]string{
		"policy.csv":        "g, a, role:admin",
		"policy.b.csv":      "g, c, role:readonly",
		"policy.a.csv":      "g, b, role:readonly",
		"policy.default":    "role:readonly",
		"policy.matchMode":  "glob",
		"unrelated.key.csv": "g, x, role:admin",
	})
	want := "g, a, role:admin\ng, b, role:readonly\ng, c, role:readonly"
	if got != want {
		t.Errorf("userPolicy = %q, want %q", got, want)
	}
}

func TestSSOSubjects(t *testing.T) {
	local := parseAccounts(map[string]string{"accounts.alice": "login"}, nil) // admin and alice
	user := func(id, email string, verified bool, groups ...string) *ssoClaims {
		return &ssoClaims{Issuer: "https://idp.example.com", Subject: id, UserID: id, Email: email, EmailVerified: verified, Groups: groups}
	}
	tests := map[string]struct {
		sso    *ssoClaims
		scopes []string
		want   []string
	}{
		"the user ID and the groups by default, not the email": {
			sso: user("u-1", "bob@example.com", true, "devs", "qa"), scopes: defaultScopes,
			want: []string{"u-1", "devs", "qa"},
		},
		"a verified email counts when scopes name it": {
			sso: user("u-1", "bob@example.com", true, "devs"), scopes: []string{"groups", "email"},
			want: []string{"u-1", "devs", "bob@example.com"},
		},
		"an unverified email never counts": {
			sso: user("u-1", "bob@example.com", false, "devs"), scopes: []string{"groups", "email"},
			want: []string{"u-1", "devs"},
		},
		"a sub of admin is not the local admin": {
			sso: user("admin", "", false), scopes: defaultScopes,
		},
		"an email of admin is not the local admin": {
			sso: user("u-2", "admin", true), scopes: []string{"email"},
			want: []string{"u-2"},
		},
		"a group named after a local account is left out": {
			sso: user("u-3", "", false, "alice", "devs"), scopes: defaultScopes,
			want: []string{"u-3", "devs"},
		},
		"Dex's federated user ID names the user": {
			sso:    &ssoClaims{Subject: "CiQwOGE4Njg0Yi1k", UserID: "08a8684b-d", Groups: []string{"devs"}},
			scopes: []string{"groups", "sub"},
			want:   []string{"08a8684b-d", "devs", "CiQwOGE4Njg0Yi1k"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ssoSubjects(tc.sso, tc.scopes, local); !slices.Equal(got, tc.want) {
				t.Errorf("ssoSubjects = %q, want %q", got, tc.want)
			}
		})
	}
}
