// Command layering fails when a package of the module imports one that its
// layer may not use; `make lint` runs it. The rules:
//
//   - internal/server and internal/cli/* never import each other: both are
//     faces on the operations packages, and a rule one needs lives there.
//   - internal/*ops and internal/resourceactions never import
//     internal/controller/*: the CLI and the API run operations without the
//     controllers.
//   - api/ imports nothing of ours: everything imports it.
//
// A package breaks a rule when it imports a forbidden package directly,
// through packages the rule does not cover, or from its own test files
// (directly: a test may use a harness that reaches further). Each breach is
// printed as the import chain from the package to the forbidden one.
//
// Usage: go run ./hack/layering [module directory, default .]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
)

// rule forbids the packages matching from to depend on those matching
// forbid, except those matching except. Patterns are module-relative import
// paths with path.Match wildcards per segment; a trailing "/..." also
// matches every package below, and "..." alone every package.
type rule struct {
	from, forbid, except string
	why                  string
}

var rules = []rule{
	{from: "internal/server/...", forbid: "internal/cli/...",
		why: "the API server and the CLI are two faces on the operations packages"},
	{from: "internal/cli/...", forbid: "internal/server/...",
		why: "the CLI and the API server are two faces on the operations packages"},
	{from: "internal/*ops/...", forbid: "internal/controller/...",
		why: "operations run from the CLI and the API without the controllers"},
	{from: "internal/resourceactions/...", forbid: "internal/controller/...",
		why: "operations run from the CLI and the API without the controllers"},
	{from: "api/...", forbid: "...", except: "api/...",
		why: "the API types are imported by everything and import nothing of ours"},
}

// pkg is one package of the module with its imports of the module's
// packages, all module-relative.
type pkg struct {
	path        string
	imports     []string
	testImports []string // of its _test.go files, both packages
}

// violation is one forbidden dependency: chain runs from the package the
// rule covers to the forbidden package.
type violation struct {
	rule  rule
	chain []string
	test  bool // the first import is in a test file
}

func (v violation) String() string {
	from := v.chain[0]
	if v.test {
		from += " (test)"
	}
	forbidden := v.rule.forbid
	if forbidden == "..." {
		forbidden = "any package of the module"
	}
	if v.rule.except != "" {
		forbidden += " outside " + v.rule.except
	}
	return fmt.Sprintf("%s → %s\n\t%s must not import %s: %s",
		from, strings.Join(v.chain[1:], " → "), v.rule.from, forbidden, v.rule.why)
}

// matches reports whether the module-relative package path p matches pattern.
func matches(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	base, tree := strings.CutSuffix(pattern, "/...")
	if ok, _ := path.Match(base, p); ok {
		return true
	}
	if !tree {
		return false
	}
	for i := range len(p) {
		if p[i] == '/' {
			if ok, _ := path.Match(base, p[:i]); ok {
				return true
			}
		}
	}
	return false
}

func (r rule) covers(p string) bool { return matches(r.from, p) }

func (r rule) forbids(p string) bool {
	return matches(r.forbid, p) && (r.except == "" || !matches(r.except, p))
}

// check returns every breach of rules in pkgs, in a stable order. A chain
// stops at the first forbidden package, and goes through no package the
// rule covers (that package's own breaches are reported from it), so each
// forbidden import is named once, at the package that makes it.
func check(pkgs []pkg, rules []rule) []violation {
	byPath := map[string]pkg{}
	for _, p := range pkgs {
		byPath[p.path] = p
	}
	var out []violation
	for _, r := range rules {
		for _, p := range pkgs {
			if !r.covers(p.path) {
				continue
			}
			out = append(out, reach(byPath, r, p)...)
			for _, imp := range p.testImports {
				if r.forbids(imp) {
					out = append(out, violation{rule: r, chain: []string{p.path, imp}, test: true})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := strings.Join(out[i].chain, " "), strings.Join(out[j].chain, " ")
		if a != b {
			return a < b
		}
		return !out[i].test && out[j].test
	})
	return out
}

// reach walks from's imports breadth first and returns a shortest chain to
// each forbidden package it meets.
func reach(byPath map[string]pkg, r rule, from pkg) []violation {
	var out []violation
	seen := map[string]bool{from.path: true}
	chains := [][]string{{from.path}}
	for len(chains) > 0 {
		chain := chains[0]
		chains = chains[1:]
		for _, imp := range byPath[chain[len(chain)-1]].imports {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			next := append(append([]string(nil), chain...), imp)
			switch {
			case r.forbids(imp):
				out = append(out, violation{rule: r, chain: next})
			case !r.covers(imp):
				chains = append(chains, next)
			}
		}
	}
	return out
}

// load lists the packages of the module in dir with go list.
func load(dir string) ([]pkg, error) {
	module, err := goList(dir, "-m", "-f", "{{.Path}} {{.GoMod}}")
	if err != nil {
		return nil, err
	}
	modulePath, goMod, _ := strings.Cut(strings.TrimSpace(string(module)), " ")
	if goMod == "" {
		return nil, fmt.Errorf("go list: %s is in no module", dir)
	}
	out, err := goList(dir, "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
	if err != nil {
		return nil, err
	}
	relative := func(imports []string) []string {
		var rel []string
		for _, imp := range imports {
			if r, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				rel = append(rel, r)
			} else if imp == modulePath {
				rel = append(rel, ".")
			}
		}
		return rel
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
			Error                              *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		// A package go list cannot read may hide imports.
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		self := relative([]string{p.ImportPath})
		if len(self) == 0 {
			continue
		}
		tests := relative(append(p.TestImports, p.XTestImports...))
		// The external test package imports the package itself.
		tests = removeAll(tests, self[0])
		pkgs = append(pkgs, pkg{path: self[0], imports: relative(p.Imports), testImports: tests})
	}
	return pkgs, nil
}

func removeAll(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

func goList(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s in %s: %w\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out, nil
}

// run checks the module in dir, writes what it finds to w and returns the
// exit code: 0 clean, 1 forbidden imports, 2 the packages could not be
// listed.
func run(dir string, w io.Writer) int {
	pkgs, err := load(dir)
	if err != nil {
		fmt.Fprintf(w, "layering: %v\n", err)
		return 2
	}
	found := check(pkgs, rules)
	if len(found) == 0 {
		return 0
	}
	fmt.Fprintf(w, "layering: %d forbidden imports (rules in hack/layering):\n", len(found))
	for _, v := range found {
		fmt.Fprintln(w, v)
	}
	return 1
}

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	os.Exit(run(dir, os.Stderr))
}
