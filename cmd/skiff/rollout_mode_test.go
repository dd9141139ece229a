package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/skiffcd/skiff/internal/cli/rolloutcli"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
)

// `skiff rollout` chooses as `skiff app` does (TestAppMode checks the
// choice itself): the saved session goes to the API server, which needs no
// kubeconfig for the namespace; --core, --kubeconfig or no session go to
// the kubeconfig's cluster.
func TestRolloutMode(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "config")
	if err := (&sessioncli.Config{Server: "skiff.example:443", Token: "saved"}).Save(saved); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(t.TempDir(), "config")
	noKubeconfig := filepath.Join(t.TempDir(), "no-kubeconfig")
	tests := map[string]struct {
		args          []string
		kubeconfigEnv string // "": the test cluster's
		wantAPI       bool
		wantNamespace string
		wantErr       string
	}{
		"a saved session goes to the API server": {args: []string{"--config", saved}, kubeconfigEnv: noKubeconfig,
			wantAPI: true, wantNamespace: "default"},
		"-n names the namespace through the API server": {args: []string{"--config", saved, "-n", "team-a"}, kubeconfigEnv: noKubeconfig,
			wantAPI: true, wantNamespace: "team-a"},
		"--core goes to the kubeconfig":        {args: []string{"--config", saved, "--core"}, wantNamespace: "default"},
		"--kubeconfig goes to the kubeconfig":  {args: []string{"--config", saved, "--kubeconfig", cluster.Kubeconfig}, wantNamespace: "default"},
		"without a session, the kubeconfig":    {args: []string{"--config", none, "-n", "team-b"}, wantNamespace: "team-b"},
		"--kubeconfig and --server do not mix": {args: []string{"--config", saved, "--kubeconfig", "kc", "--server", "x:1"}, wantErr: "exclude each other"},
		"without a session or a cluster, both ways are named": {args: []string{"--config", none}, kubeconfigEnv: noKubeconfig,
			wantErr: "not logged in (skiff login SERVER) and finding a cluster"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := tc.kubeconfigEnv
			if env == "" {
				env = cluster.Kubeconfig
			}
			t.Setenv("KUBECONFIG", env)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			r := &rolloutContext{}
			f := pflag.NewFlagSet("rollout", pflag.ContinueOnError)
			r.addFlags(f)
			if err := f.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			b, err := r.backend()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %T, %v; want an error with %q", b, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, api := b.(*rolloutcli.API); api != tc.wantAPI || r.namespace != tc.wantNamespace {
				t.Errorf("got %T in namespace %q, want the API server %v in %q", b, r.namespace, tc.wantAPI, tc.wantNamespace)
			}
		})
	}
}
