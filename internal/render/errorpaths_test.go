package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Render errors reach Application conditions and API callers: they name
// files relative to the repository root, never where the server keeps its
// checkouts (a cache directory and a commit SHA).
func TestRenderErrorsNamePathsRelativeToTheRoot(t *testing.T) {
	tests := map[string]struct {
		files   map[string]string
		links   map[string]string // path → target, relative to the root
		path    string
		source  v1alpha1.ApplicationSource
		wantErr string
	}{
		"an application path that does not exist": {
			files:   map[string]string{"app/a.yaml": cm("a")},
			path:    "apps/missing",
			wantErr: `application path "apps/missing"`,
		},
		"a Jsonnet syntax error": {
			files:   map[string]string{"app/bad.jsonnet": "{ a: }\n"},
			path:    "app",
			wantErr: "app/bad.jsonnet",
		},
		"a Jsonnet import of a missing file": {
			files:   map[string]string{"app/main.jsonnet": "import 'lib/missing.libsonnet'\n"},
			path:    "app",
			wantErr: "lib/missing.libsonnet",
		},
		"a symlink loop in the application": {
			files:   map[string]string{"app/a.yaml": cm("a")},
			links:   map[string]string{"app/loop.yaml": "loop.yaml"},
			path:    "app",
			wantErr: "app/loop.yaml",
		},
		"a missing Helm value file": {
			files:   map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n"},
			path:    "chart",
			source:  v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"envs/prod.yaml"}}},
			wantErr: `value file "envs/prod.yaml"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			for link, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Render(context.Background(), Request{Root: root, Path: tc.path, Source: tc.source, AppName: "a"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Render() error = %v, want one naming %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), root) {
				t.Errorf("Render() error %q names the checkout's location %s", err, root)
			}
		})
	}
}
