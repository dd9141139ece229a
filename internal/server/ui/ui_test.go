package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The app's own routes survive a reload: every unknown path is index.html,
// under a CSP that allows scripts and styles from the server only.
func TestServesIndexForAppRoutes(t *testing.T) {
	for _, path := range []string{"/", "/applications", "/applications/guestbook", "/rollouts/ns/demo", "/login?return=/x"} {
		resp := get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		if b := body(t, resp); !strings.Contains(b, `<script type="module" src="/js/main.js">`) {
			t.Errorf("%s: not index.html: %.80q", path, b)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "style-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", path, csp)
		}
	}
	resp := get(t, "/js/main.js")
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("main.js served as %q: browsers refuse a module of another type", ct)
	}
}

var (
	importRe = regexp.MustCompile(`(?m)^import .* from '\./([^']+)';`)
	assetRe  = regexp.MustCompile(`(?:src|href)="/([^"]+)"`)
	// Markup from strings would bypass the text escaping the UI relies on;
	// inline scripts and styles would be blocked by the CSP.
	forbiddenJS   = regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(|setAttribute\('style'`)
	external      = regexp.MustCompile(`from ['"]https?:|import\(['"]https?:|fetch\(['"]https?:|url\(['"]?https?:|@import`)
	forbiddenHTML = regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=`)
)

// Every module and asset the pages name is embedded, and none of them
// builds HTML from strings.
func TestAssetsAreCompleteAndSafe(t *testing.T) {
	root, err := fs.Sub(assets, "static")
	if err != nil {
		t.Fatal(err)
	}
	exists := func(name string) bool {
		_, err := fs.Stat(root, name)
		return err == nil
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if m := forbiddenHTML.FindString(string(index)); m != "" {
		t.Errorf("index.html: %q", m)
	}
	for _, m := range assetRe.FindAllStringSubmatch(string(index), -1) {
		if !exists(m[1]) {
			t.Errorf("index.html names %s, which is not embedded", m[1])
		}
	}
	css, err := fs.ReadFile(root, "css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	if external.Match(css) {
		t.Error("app.css loads from another origin")
	}
	scripts, err := fs.Glob(root, "js/*.js")
	if err != nil || len(scripts) < 5 {
		t.Fatalf("scripts %v: %v", scripts, err)
	}
	for _, name := range scripts {
		src, err := fs.ReadFile(root, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range importRe.FindAllStringSubmatch(string(src), -1) {
			if !exists("js/" + m[1]) {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
		if m := forbiddenJS.FindString(string(src)); m != "" {
			t.Errorf("%s uses %q", name, m)
		}
		if external.MatchString(string(src)) {
			t.Errorf("%s loads from another origin: everything must be embedded", name)
		}
	}
}
