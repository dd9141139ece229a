package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/internal/version"
)

func TestVersionPrintsVersionCommitAndKubernetesClient(t *testing.T) {
	tests := map[string]struct {
		args  []string
		check func(t *testing.T, out string)
	}{
		"text output names each part": {
			args: []string{"version"},
			check: func(t *testing.T, out string) {
				for _, want := range []string{"skiff: " + version.Version, "Commit: ", "KubernetesClient: v0.37.2"} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
			},
		},
		"json output decodes": {
			args: []string{"version", "-o", "json"},
			check: func(t *testing.T, out string) {
				var info version.Info
				if err := json.Unmarshal([]byte(out), &info); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out)
				}
				if info.KubeClient != "v0.37.2" || info.Version == "" || info.Commit == "" {
					t.Errorf("incomplete: %+v", info)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := newRootCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetArgs(tc.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			tc.check(t, out.String())
		})
	}
	t.Run("an unknown output format is an error", func(t *testing.T) {
		cmd := newRootCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetArgs([]string{"version", "-o", "yaml"})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "unknown output format") {
			t.Errorf("got %v, want an unknown output format error", err)
		}
	})
}
