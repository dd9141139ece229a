package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	tests := map[string]struct {
		pattern, pkg string
		want         bool
	}{
		"a tree pattern matches its root":                     {"internal/server/...", "internal/server", true},
		"a tree pattern matches a package below its root":     {"internal/server/...", "internal/server/ui", true},
		"a tree pattern does not match a longer sibling name": {"internal/server/...", "internal/serverless", false},
		"a wildcard segment matches every package it fits":    {"internal/*ops/...", "internal/rolloutops", true},
		"a wildcard tree pattern matches below a fitting one": {"internal/*ops/...", "internal/appops/plan", true},
		"a wildcard segment needs the whole segment to fit":   {"internal/*ops/...", "internal/opsx", false},
		"a plain pattern matches only its package":            {"internal/cli", "internal/cli/appcli", false},
		"the bare tree pattern matches every package":         {"...", "cmd/skiff", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := matches(tc.pattern, tc.pkg); got != tc.want {
				t.Errorf("matches(%q, %q) = %v, want %v", tc.pattern, tc.pkg, got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	serverCLI := rule{from: "internal/server/...", forbid: "internal/cli/..."}
	opsControllers := rule{from: "internal/*ops/...", forbid: "internal/controller/..."}
	apiAlone := rule{from: "api/...", forbid: "...", except: "api/..."}
	tests := map[string]struct {
		pkgs  []pkg
		rules []rule
		want  []string
	}{
		"a direct import across a rule is named by its edge": {
			pkgs:  []pkg{{path: "internal/server", imports: []string{"internal/cli/appcli"}}, {path: "internal/cli/appcli"}},
			rules: []rule{serverCLI},
			want:  []string{"internal/server → internal/cli/appcli"},
		},
		"an import through packages the rule does not cover is named by the whole chain": {
			pkgs: []pkg{
				{path: "internal/appops", imports: []string{"internal/util"}},
				{path: "internal/util", imports: []string{"internal/controller/application"}},
				{path: "internal/controller/application"},
			},
			rules: []rule{opsControllers},
			want:  []string{"internal/appops → internal/util → internal/controller/application"},
		},
		"an import made by a covered package is named once, at that package": {
			pkgs: []pkg{
				{path: "internal/server", imports: []string{"internal/server/ui"}},
				{path: "internal/server/ui", imports: []string{"internal/cli/appcli"}},
				{path: "internal/cli/appcli"},
			},
			rules: []rule{serverCLI},
			want:  []string{"internal/server/ui → internal/cli/appcli"},
		},
		"a chain ends at the first forbidden package": {
			pkgs: []pkg{
				{path: "internal/server", imports: []string{"internal/cli/appcli"}},
				{path: "internal/cli/appcli", imports: []string{"internal/cli/sessioncli"}},
				{path: "internal/cli/sessioncli"},
			},
			rules: []rule{serverCLI},
			want:  []string{"internal/server → internal/cli/appcli"},
		},
		"a test file's import counts and is marked as a test's": {
			pkgs:  []pkg{{path: "internal/server", testImports: []string{"internal/cli/sessioncli"}}, {path: "internal/cli/sessioncli"}},
			rules: []rule{serverCLI},
			want:  []string{"internal/server (test) → internal/cli/sessioncli"},
		},
		"a rule's exception may be imported": {
			pkgs:  []pkg{{path: "api/v1alpha1", imports: []string{"api/common"}}, {path: "api/common"}},
			rules: []rule{apiAlone},
			want:  nil,
		},
		"everything else of ours is forbidden to the API types": {
			pkgs:  []pkg{{path: "api/v1alpha1", imports: []string{"api/common"}}, {path: "api/common", imports: []string{"internal/mask"}}, {path: "internal/mask"}},
			rules: []rule{apiAlone},
			want:  []string{"api/common → internal/mask"},
		},
		"packages no rule covers import what they like": {
			pkgs: []pkg{
				{path: "cmd/skiff", imports: []string{"internal/server", "internal/cli/appcli", "internal/controller/application"}},
				{path: "internal/server"}, {path: "internal/cli/appcli"}, {path: "internal/controller/application"},
			},
			rules: []rule{serverCLI, opsControllers, apiAlone},
			want:  nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, v := range check(tc.pkgs, tc.rules) {
				got = append(got, strings.SplitN(v.String(), "\n", 2)[0])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("check() found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// The checker run on a module: the fixture (laid out as Skiff is) passes,
// and each import planted in a copy of it fails the check, named.
func TestPlantedImportsFailTheCheck(t *testing.T) {
	const module = "example.com/layered/"
	tests := map[string]struct {
		file, source string
		want         string // "" for a clean pass
	}{
		"the fixture as it is passes": {},
		"the API server importing a CLI package fails": {
			file:   "internal/server/planted.go",
			source: "package server\n\nimport _ \"" + module + "internal/cli/appcli\"\n",
			want:   "internal/server → internal/cli/appcli",
		},
		"a CLI package importing the API server fails": {
			file:   "internal/cli/sessioncli/planted.go",
			source: "package sessioncli\n\nimport _ \"" + module + "internal/server/ui\"\n",
			want:   "internal/cli/sessioncli → internal/server/ui",
		},
		"a test of the API server importing a CLI package fails": {
			file:   "internal/server/planted_test.go",
			source: "package server_test\n\nimport _ \"" + module + "internal/cli/sessioncli\"\n",
			want:   "internal/server (test) → internal/cli/sessioncli",
		},
		"an operations package reaching a controller through a shared package fails": {
			file:   "internal/util/planted.go",
			source: "package util\n\nimport _ \"" + module + "internal/controller/application\"\n",
			want:   "internal/appops → internal/util → internal/controller/application",
		},
		"the API types importing a package of ours fails": {
			file:   "api/v1/planted.go",
			source: "package v1\n\nimport _ \"" + module + "internal/serverless\"\n",
			want:   "api/v1 → internal/serverless",
		},
		"a package only named like the server may import the CLI": {
			file:   "internal/serverless/planted.go",
			source: "package serverless\n\nimport _ \"" + module + "internal/cli/appcli\"\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("testdata/layered")); err != nil {
				t.Fatal(err)
			}
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.source), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			code := run(dir, &out)
			if tc.want == "" {
				if code != 0 || out.Len() != 0 {
					t.Fatalf("exit %d, output:\n%s\nwant a clean pass", code, &out)
				}
				return
			}
			if code != 1 {
				t.Fatalf("exit %d, want 1; output:\n%s", code, &out)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			// A header, then the one breach and the rule it breaks.
			if len(lines) != 3 || lines[1] != tc.want {
				t.Errorf("output:\n%s\nwant the one breach %q", &out, tc.want)
			}
		})
	}
}

// A module go list cannot read is an error of its own, not a pass.
func TestUnreadableModuleIsAnError(t *testing.T) {
	var out bytes.Buffer
	if code := run(t.TempDir(), &out); code != 2 || !strings.Contains(out.String(), "in no module") {
		t.Errorf("exit %d, output %q; want 2 and go list's complaint", code, &out)
	}
}
