package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// commitRepo creates a git repository holding files and returns its file:// URL.
func commitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := wt.Commit("init", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	return "file://" + dir
}

func TestRenderPrintsManifestsWithSecretsMasked(t *testing.T) {
	url := commitRepo(t, map[string]string{
		"app/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}\n",
		"app/secret.yaml":         "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: hunter2}\n",
		"chart/Chart.yaml":        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/values.yaml":       "replicas: 1\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\ndata: {replicas: '{{ .Values.replicas }}'}\n",
	})
	tests := map[string]struct {
		args       []string
		want       []string
		notWant    []string
		wantErrHas string
	}{
		"a directory is printed and the Secret value masked": {
			args:    []string{"--path", "app"},
			want:    []string{"name: settings", "level: info", "password: ++++++++"},
			notWant: []string{"hunter2"},
		},
		"--show-secrets prints the value": {
			args: []string{"--path", "app", "--show-secrets"},
			want: []string{"password: hunter2"},
		},
		"a chart takes --helm-set and --release-name": {
			args: []string{"--path", "chart", "--helm-set", "replicas=3", "--release-name", "shop"},
			want: []string{"name: shop", `replicas: "3"`},
		},
		"a missing path is an error that names it": {
			args:       []string{"--path", "nowhere"},
			wantErrHas: "nowhere",
		},
		"an unknown revision is an error that names it": {
			args:       []string{"--path", "app", "--revision", "no-such-branch"},
			wantErrHas: "no-such-branch",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := newRootCommand()
			var out, errOut bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			cmd.SetArgs(append([]string{"render", "--repo", url, "--cache-dir", t.TempDir()}, tc.args...))
			err := cmd.Execute()
			if tc.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) {
					t.Fatalf("got error %v, want one naming %q", err, tc.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.want {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tc.notWant {
				if strings.Contains(out.String(), s) {
					t.Errorf("output shows %q:\n%s", s, out.String())
				}
			}
		})
	}
}
