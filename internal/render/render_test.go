package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// writeTree writes files (slash paths relative to root) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// summary describes manifests as "file: Kind namespace/name" lines.
func summary(ms []Manifest) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s: %s %s/%s", m.File, m.Object.GetKind(), m.Object.GetNamespace(), m.Object.GetName())
	}
	return out
}

func cm(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
}

func TestDetect(t *testing.T) {
	tests := map[string]struct {
		files   map[string]string
		source  v1alpha1.ApplicationSource
		want    Kind
		wantErr string
	}{
		"a Chart.yaml means Helm": {
			files: map[string]string{"app/Chart.yaml": "name: x\n", "app/kustomization.yaml": ""},
			want:  KindHelm,
		},
		"kustomization.yaml means Kustomize": {
			files: map[string]string{"app/kustomization.yaml": ""},
			want:  KindKustomize,
		},
		"kustomization.yml means Kustomize": {
			files: map[string]string{"app/kustomization.yml": ""},
			want:  KindKustomize,
		},
		"Kustomization means Kustomize": {
			files: map[string]string{"app/Kustomization": ""},
			want:  KindKustomize,
		},
		"plain files mean Directory": {
			files: map[string]string{"app/a.yaml": cm("a")},
			want:  KindDirectory,
		},
		"an explicit directory block wins over a kustomization": {
			files:  map[string]string{"app/kustomization.yaml": ""},
			source: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{}},
			want:   KindDirectory,
		},
		"an explicit kustomize block wins over a chart": {
			files:  map[string]string{"app/Chart.yaml": ""},
			source: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{}},
			want:   KindKustomize,
		},
		"an explicit helm block wins over plain files": {
			files:  map[string]string{"app/a.yaml": cm("a")},
			source: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{}},
			want:   KindHelm,
		},
		"a helm repository chart is Helm": {
			files:  map[string]string{"app/a.yaml": cm("a")},
			source: v1alpha1.ApplicationSource{Chart: "nginx"},
			want:   KindHelm,
		},
		"a plugin is refused": {
			files:   map[string]string{"app/a.yaml": cm("a")},
			source:  v1alpha1.ApplicationSource{Plugin: &v1alpha1.ApplicationSourcePlugin{}},
			wantErr: "config management plugins are not supported",
		},
		"two explicit blocks are refused": {
			files: map[string]string{"app/a.yaml": cm("a")},
			source: v1alpha1.ApplicationSource{
				Helm:      &v1alpha1.ApplicationSourceHelm{},
				Directory: &v1alpha1.ApplicationSourceDirectory{},
			},
			wantErr: "multiple application sources defined: Helm, Directory",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			got, err := Detect(Request{Root: root, Path: "app", Source: tc.source})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Detect() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Detect() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestRenderDirectory(t *testing.T) {
	tests := map[string]struct {
		files     map[string]string
		directory *v1alpha1.ApplicationSourceDirectory
		want      []string
	}{
		"only the top directory is read without recurse": {
			files: map[string]string{"app/a.yaml": cm("a"), "app/sub/b.yaml": cm("b")},
			want:  []string{"app/a.yaml: ConfigMap /a"},
		},
		"recurse reads subdirectories but not hidden ones": {
			files:     map[string]string{"app/a.yaml": cm("a"), "app/sub/b.yml": cm("b"), "app/.git/c.yaml": cm("c")},
			directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true},
			want:      []string{"app/a.yaml: ConfigMap /a", "app/sub/b.yml: ConfigMap /b"},
		},
		"multi-document YAML skips empty and comment-only documents": {
			files: map[string]string{"app/a.yaml": "---\n" + cm("a") + "---\n# only a comment\n---\n---\n" + cm("b")},
			want:  []string{"app/a.yaml: ConfigMap /a", "app/a.yaml: ConfigMap /b"},
		},
		"JSON files are read and other files ignored": {
			files: map[string]string{
				"app/a.json": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns"}}`,
				"app/README": "not yaml",
				"app/x.txt":  "kind: nope",
				"app/b.yaml": cm("b"),
			},
			want: []string{"app/a.json: Secret ns/s", "app/b.yaml: ConfigMap /b"},
		},
		"a List is expanded": {
			files: map[string]string{"app/list.yaml": `apiVersion: v1
kind: ConfigMapList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: first}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: second}}
`},
			want: []string{"app/list.yaml: ConfigMap /first", "app/list.yaml: ConfigMap /second"},
		},
		"include keeps matching paths only, with alternation": {
			files: map[string]string{
				"app/a.yaml": cm("a"), "app/b.yaml": cm("b"), "app/c.json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
			},
			directory: &v1alpha1.ApplicationSourceDirectory{Include: "{a.yaml,*.json}"},
			want:      []string{"app/a.yaml: ConfigMap /a", "app/c.json: ConfigMap /c"},
		},
		"exclude drops matching paths relative to the app directory": {
			files:     map[string]string{"app/a.yaml": cm("a"), "app/env/b.yaml": cm("b"), "app/other/c.yaml": cm("c")},
			directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true, Exclude: "{env/*,a.yaml}"},
			want:      []string{"app/other/c.yaml: ConfigMap /c"},
		},
		"output is sorted by file, then document order": {
			files:     map[string]string{"app/z.yaml": cm("z1") + "---\n" + cm("z0"), "app/a/m.yaml": cm("m")},
			directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true},
			want:      []string{"app/a/m.yaml: ConfigMap /m", "app/z.yaml: ConfigMap /z1", "app/z.yaml: ConfigMap /z0"},
		},
		"a symlink inside the root is followed": {
			files: map[string]string{"shared/s.yaml": cm("s"), "app/a.yaml": cm("a")},
			want:  []string{"app/a.yaml: ConfigMap /a", "app/link.yaml: ConfigMap /s"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			if _, ok := tc.files["shared/s.yaml"]; ok {
				if err := os.Symlink("../shared/s.yaml", filepath.Join(root, "app/link.yaml")); err != nil {
					t.Fatal(err)
				}
			}
			src := v1alpha1.ApplicationSource{Directory: tc.directory}
			got, err := Render(context.Background(), Request{Root: root, Path: "app", Source: src})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summary(got)); diff != "" {
				t.Errorf("Render() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderJsonnet(t *testing.T) {
	files := map[string]string{
		"lib/k.libsonnet": `{ cm(name):: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: name } } }`,
		"app/main.jsonnet": `local k = import "k.libsonnet";
function(suffix, replicas) [
  k.cm(std.extVar("env") + "-" + suffix),
  k.cm("n" + std.toString(std.extVar("count") + replicas)),
]`,
		"app/list.jsonnet": `{ apiVersion: "v1", kind: "List", items: [ (import "../lib/k.libsonnet").cm("from-list") ] }`,
	}
	root := t.TempDir()
	writeTree(t, root, files)
	src := v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: v1alpha1.ApplicationSourceJsonnet{
		ExtVars: []v1alpha1.JsonnetVar{{Name: "env", Value: "prod"}, {Name: "count", Value: "1 + 1", Code: true}},
		TLAs:    []v1alpha1.JsonnetVar{{Name: "suffix", Value: "web"}, {Name: "replicas", Value: "3", Code: true}},
		Libs:    []string{"lib"},
	}}}
	got, err := Render(context.Background(), Request{Root: root, Path: "app", Source: src})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"app/list.jsonnet: ConfigMap /from-list", "app/main.jsonnet: ConfigMap /prod-web", "app/main.jsonnet: ConfigMap /n5"}
	if diff := cmp.Diff(want, summary(got)); diff != "" {
		t.Errorf("Render() (-want +got):\n%s", diff)
	}
}

// TestRenderRefuses tries to break each safety rule and checks the error
// names the culprit and the reason.
func TestRenderRefuses(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.yaml": cm("stolen"), "x.libsonnet": "{}"})
	bomb := `apiVersion: v1
kind: ConfigMap
metadata: {name: bomb}
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`
	tests := map[string]struct {
		files    map[string]string
		symlinks map[string]string // link (relative to root) -> target
		path     string
		source   v1alpha1.ApplicationSource
		limits   Limits
		wantErr  []string
	}{
		"a path climbing out with ../": {
			path:    "../etc",
			wantErr: []string{`path "../etc"`, "leaves the repository root"},
		},
		"an absolute path": {
			path:    "/etc",
			wantErr: []string{`path "/etc"`, "absolute paths are not allowed"},
		},
		"an app path that is a symlink to a directory outside": {
			symlinks: map[string]string{"app": outside},
			path:     "app",
			wantErr:  []string{`path "app"`, "resolves outside the repository root"},
		},
		"a symlinked directory inside the app pointing outside": {
			files:    map[string]string{"app/a.yaml": cm("a")},
			symlinks: map[string]string{"app/sub": outside},
			path:     "app",
			source:   v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true}},
			wantErr:  []string{"app/sub", "symlink points outside the repository root"},
		},
		"a symlinked file pointing at /etc/passwd": {
			files:    map[string]string{"app/a.yaml": cm("a")},
			symlinks: map[string]string{"app/passwd.yaml": "/etc/passwd"},
			path:     "app",
			wantErr:  []string{"app/passwd.yaml", "symlink points outside the repository root"},
		},
		"too many files": {
			files:   map[string]string{"app/a.yaml": cm("a"), "app/b.yaml": cm("b"), "app/c.yaml": cm("c")},
			path:    "app",
			limits:  Limits{MaxFiles: 2},
			wantErr: []string{"app", "more than 2 files"},
		},
		"a file too large": {
			files:   map[string]string{"app/a.yaml": cm("a"), "app/big.yaml": cm(strings.Repeat("x", 200))},
			path:    "app",
			limits:  Limits{MaxFileBytes: 100},
			wantErr: []string{"app/big.yaml", "larger than the limit of 100 bytes"},
		},
		"files larger than the output limit, before any is read": {
			files:   map[string]string{"app/a.yaml": cm("a") + "---\n" + cm("b") + "---\n" + cm("c")},
			path:    "app",
			limits:  Limits{MaxOutputBytes: 100},
			wantErr: []string{"app: the manifests to read are larger than the limit of 100 bytes"},
		},
		"output larger than the limit, though the files are not": {
			// Flow style is shorter than the JSON it decodes to.
			files:   map[string]string{"app/a.yaml": "{apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {k: v}}\n"},
			path:    "app",
			limits:  Limits{MaxOutputBytes: 75},
			wantErr: []string{"rendered manifests are larger than the limit of 75 bytes"},
		},
		"a YAML alias bomb": {
			files:   map[string]string{"app/bomb.yaml": bomb},
			path:    "app",
			wantErr: []string{"app/bomb.yaml: document 1", "excessive aliasing"},
		},
		"the same object in two files": {
			files:   map[string]string{"app/a.yaml": cm("same"), "app/b.yaml": cm("other") + "---\n" + cm("same")},
			path:    "app",
			wantErr: []string{"duplicate object ConfigMap same", "app/a.yaml", "app/b.yaml"},
		},
		"an object without a kind": {
			files:   map[string]string{"app/a.yaml": cm("a") + "---\napiVersion: v1\nmetadata: {name: b}\n"},
			path:    "app",
			wantErr: []string{"app/a.yaml: document 2", "object has no kind"},
		},
		"a jsonnet import leaving the root": {
			files:   map[string]string{"app/a.jsonnet": fmt.Sprintf(`import %q`, filepath.Join(outside, "x.libsonnet"))},
			path:    "app",
			wantErr: []string{"app/a.jsonnet", "leaves the repository root"},
		},
		"a relative jsonnet import climbing out of the root": {
			files:   map[string]string{"app/a.jsonnet": `import "../../../../../../../../../../etc/passwd"`},
			path:    "app",
			wantErr: []string{"app/a.jsonnet", "leaves the repository root"},
		},
		"a jsonnet import through a symlink leaving the root": {
			files:    map[string]string{"app/a.jsonnet": `import "lib/x.libsonnet"`},
			symlinks: map[string]string{"app/lib": outside},
			path:     "app",
			wantErr:  []string{"app/lib", "outside the repository root"},
		},
		"a jsonnet library path leaving the root": {
			files: map[string]string{"app/a.jsonnet": `{}`},
			path:  "app",
			source: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{
				Jsonnet: v1alpha1.ApplicationSourceJsonnet{Libs: []string{"../lib"}},
			}},
			wantErr: []string{"app/a.jsonnet", "jsonnet library path", "leaves the repository root"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			for link, target := range tc.symlinks {
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Render(context.Background(), Request{Root: root, Path: tc.path, Source: tc.source, Limits: tc.limits})
			if err == nil {
				t.Fatal("Render() succeeded, want an error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Render() error = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestRenderTimeout(t *testing.T) {
	tests := map[string]struct {
		files map[string]string
	}{
		"a directory render stops at the deadline": {
			files: map[string]string{"app/a.yaml": cm("a")},
		},
		"a slow jsonnet evaluation is abandoned at the deadline": {
			files: map[string]string{"app/slow.jsonnet": `std.length(std.foldl(function(acc, x) acc + [x], std.range(1, 100000), []))`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			_, err := Render(context.Background(), Request{Root: root, Path: "app", Limits: Limits{Timeout: time.Nanosecond}})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Render() error = %v, want context.DeadlineExceeded", err)
			}
		})
	}
}

func TestSecureJoin(t *testing.T) {
	outside := t.TempDir()
	tests := map[string]struct {
		rel     string
		want    string
		wantErr string
	}{
		"an empty path is the root":                            {rel: "", want: "."},
		"a nested path is joined":                              {rel: "a/b/../c", want: "a/c"},
		"a missing file inside the root is allowed":            {rel: "a/missing.yaml", want: "a/missing.yaml"},
		"dot-dot that stays inside is allowed":                 {rel: "a/../a", want: "a"},
		"dot-dot that leaves is refused":                       {rel: "a/../../x", wantErr: "leaves the repository root"},
		"an absolute path is refused":                          {rel: "/etc/passwd", wantErr: "absolute paths are not allowed"},
		"a symlink to a directory outside is refused":          {rel: "out/x", wantErr: "resolves outside the repository root"},
		"a symlink to a file outside is refused":               {rel: "a/passwd", wantErr: "resolves outside the repository root"},
		"a dangling symlink to outside is refused":             {rel: "a/dangling", wantErr: "resolves outside the repository root"},
		"a symlink within the root is allowed":                 {rel: "in/x", want: "in/x"},
		"a symlink that climbs out through dot-dot is refused": {rel: "a/up/x", wantErr: "resolves outside the repository root"},
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a/file": ""})
	for link, target := range map[string]string{
		"out":        outside,
		"a/passwd":   "/etc/passwd",
		"a/dangling": filepath.Join(outside, "nope"),
		"in":         "a",
		"a/up":       "../..",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SecureJoin(root, tc.rel)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("SecureJoin(%q) = %q, %v; want error %q", tc.rel, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != filepath.Join(root, tc.want) {
				t.Fatalf("SecureJoin(%q) = %q, %v; want %q", tc.rel, got, err, filepath.Join(root, tc.want))
			}
		})
	}
}
