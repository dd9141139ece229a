package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The binary `make build` makes links no Go plugin support: with the
// plugin package linked, the linker keeps every exported symbol and the
// binary costs ~20 MiB more resident memory. Kustomize drops its plugin
// loader under a build tag; a kustomize upgrade that renames the tag, or a
// new dependency that imports plugin, fails here.
func TestTheBuildLinksNoGoPluginSupport(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^GO_TAGS := (.+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no GO_TAGS")
	}
	tags := strings.TrimSpace(string(m[1]))

	for name, tc := range map[string]struct {
		tags       string
		wantPlugin bool
	}{
		"with the Makefile's tags the plugin package is not linked": {tags: tags, wantPlugin: false},
		// Shows that the check can fail: without the tags kustomize links it.
		"without them it is": {tags: "", wantPlugin: true},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-tags="+tc.tags, ".")
			// GOFLAGS from make would add the tags to the untagged case.
			cmd.Env = append(os.Environ(), "GOFLAGS=")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			if got := slices.Contains(strings.Fields(string(out)), "plugin"); got != tc.wantPlugin {
				t.Errorf("package plugin linked = %v, want %v (tags %q)", got, tc.wantPlugin, tc.tags)
			}
		})
	}
}
