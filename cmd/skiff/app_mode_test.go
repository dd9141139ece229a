package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/skiffcd/skiff/internal/cli/sessioncli"
)

// Which backend `skiff app` talks to: the saved session, --server and
// $SKIFF_SERVER go to the API server; --core, an explicit --kubeconfig or
// no session go to the Kubernetes API.
func TestAppMode(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "config")
	if err := (&sessioncli.Config{Server: "skiff.example:443", Token: "saved", Insecure: true}).Save(saved); err != nil {
		t.Fatal(err)
	}
	loggedOut := filepath.Join(t.TempDir(), "config")
	if err := (&sessioncli.Config{Server: "skiff.example:443"}).Save(loggedOut); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(t.TempDir(), "config")
	tests := map[string]struct {
		args    []string
		env     map[string]string
		want    *sessioncli.Config // nil: the Kubernetes API
		wantErr string
	}{
		"no session":                       {args: []string{"--config", none}},
		"logged out":                       {args: []string{"--config", loggedOut}},
		"the saved session":                {args: []string{"--config", saved}, want: &sessioncli.Config{Server: "skiff.example:443", Token: "saved", Insecure: true}},
		"--core wins over the session":     {args: []string{"--config", saved, "--core"}},
		"--kubeconfig wins over a session": {args: []string{"--config", saved, "--kubeconfig", "kc"}},
		"--kubeconfig with --server":       {args: []string{"--config", saved, "--kubeconfig", "kc", "--server", "x:1"}, wantErr: "exclude each other"},
		"flags override the saved ones": {args: []string{"--config", saved, "--insecure=false", "--plaintext"},
			want: &sessioncli.Config{Server: "skiff.example:443", Token: "saved", PlainText: true}},
		"--server and --auth-token": {args: []string{"--config", none, "--server", "other:8080", "--auth-token", "tok", "--plaintext"},
			want: &sessioncli.Config{Server: "other:8080", Token: "tok", PlainText: true}},
		"the environment": {args: []string{"--config", none}, env: map[string]string{"SKIFF_SERVER": "env:8080", "SKIFF_AUTH_TOKEN": "envtok"},
			want: &sessioncli.Config{Server: "env:8080", Token: "envtok"}},
		"another server without a token": {args: []string{"--config", saved, "--server", "other:8080"}, wantErr: "no session for other:8080"},
		"the saved server by name keeps its token": {args: []string{"--config", saved, "--server", "skiff.example:443"},
			want: &sessioncli.Config{Server: "skiff.example:443", Token: "saved", Insecure: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv("SKIFF_SERVER", tc.env["SKIFF_SERVER"])
			t.Setenv("SKIFF_AUTH_TOKEN", tc.env["SKIFF_AUTH_TOKEN"])
			a := &appContext{}
			f := pflag.NewFlagSet("app", pflag.ContinueOnError)
			a.addFlags(f)
			if err := f.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := a.apiSession()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %+v, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	// Without a session or a cluster, both ways are named.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := runSkiff("app", "list", "--config", none); err == nil || !strings.HasPrefix(err.Error(), "not logged in (skiff login SERVER) and finding a cluster") {
		t.Errorf("list without a session or a cluster: %v", err)
	}
	// Through cobra: the subcommand sees the persistent --kubeconfig as given.
	if _, err := runSkiff("app", "list", "--config", saved, "--kubeconfig", filepath.Join(t.TempDir(), "missing")); err == nil ||
		!strings.Contains(err.Error(), "missing") {
		t.Errorf("list with a saved session and --kubeconfig: %v, want the kubeconfig read", err)
	}
}
