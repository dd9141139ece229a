package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appsetops"
)

// listElementApps is a stand-in for the ApplicationSet controller's
// generators below this test of the API's paths: one app per List element
// named by its "name" key. The generators' own tests and the cluster test
// of `skiff appset generate` run the real ones.
func listElementApps(_ context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	var apps []v1alpha1.Application
	for _, g := range set.Spec.Generators {
		if g.List == nil {
			return nil, fmt.Errorf("only list generators here")
		}
		for _, el := range g.List.Elements {
			name := strings.Trim(string(el.Raw), "{}")
			name = strings.TrimPrefix(name, `"name":`)
			apps = append(apps, v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: strings.Trim(name, `"`)}})
		}
	}
	return apps, nil
}

func appSetBody(name, project string, elements ...string) map[string]any {
	var els []map[string]string
	for _, e := range elements {
		els = append(els, map[string]string{"name": e})
	}
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": map[string]any{"name": name, "labels": map[string]string{"team": "web"}},
		"spec": map[string]any{
			"generators": []any{map[string]any{"list": map[string]any{"elements": els}}},
			"template": map[string]any{
				"metadata": map[string]any{"name": "{{name}}"},
				"spec": map[string]any{"project": project,
					"source":      map[string]any{"repoURL": "https://github.com/org/repo", "path": "{{name}}"},
					"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "{{name}}"}},
			},
		},
	}
}

func TestApplicationSetsAPI(t *testing.T) {
	h := startServerWith(t, Options{}, func(s *Server) { s.GenerateAppSet = listElementApps })
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "p, alice, applicationsets, get, team-a/*, allow\n" +
		"p, alice, applicationsets, create, team-a/*, allow\n"})
	alice := h.login("alice", "alice-password")
	admin := h.login("admin", h.password)
	const sets = "/api/v1/applicationsets"

	wantError(t, h.do(http.MethodGet, sets, "", nil), http.StatusUnauthorized)
	if r := h.do(http.MethodPost, sets, alice, appSetBody("web", "team-a", "one")); r.status != http.StatusOK {
		t.Fatalf("alice creates a set of her project: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodPost, sets, alice, appSetBody("ops", "team-b", "one")), http.StatusForbidden)
	wantError(t, h.do(http.MethodPost, sets, alice, appSetBody("any", "{{project}}", "one")), http.StatusForbidden)
	if r := h.do(http.MethodPost, sets, admin, appSetBody("ops", "team-b", "one")); r.status != http.StatusOK {
		t.Fatalf("admin creates ops: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodPost, sets, admin, appSetBody("ops", "team-b", "two")), http.StatusConflict)
	wantError(t, h.do(http.MethodPost, sets+"?upsert=true", alice, appSetBody("web", "team-a", "two")), http.StatusForbidden)
	if r := h.do(http.MethodPost, sets+"?upsert=true", admin, appSetBody("ops", "team-b", "one", "two")); r.status != http.StatusOK {
		t.Fatalf("admin replaces ops: %d %s", r.status, r.body)
	}
	if r := h.do(http.MethodPost, sets+"?dryRun=true", admin, appSetBody("dry", "team-b", "one")); r.status != http.StatusOK {
		t.Fatalf("a dry run: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, sets+"/dry", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodPost, sets, admin, map[string]any{"metadata": map[string]any{"name": "empty"}, "spec": map[string]any{}}), http.StatusBadRequest)

	// Each caller lists what it may get.
	var list v1alpha1.ApplicationSetList
	names := func(token, query string) string {
		list = v1alpha1.ApplicationSetList{}
		h.do(http.MethodGet, sets+query, token, nil).json(t, &list)
		var out []string
		for _, s := range list.Items {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(alice, ""); got != "web" {
		t.Errorf("alice lists %q, want web", got)
	}
	if got := names(admin, ""); got != "ops,web" {
		t.Errorf("admin lists %q, want ops,web", got)
	}
	if got := names(admin, "?projects=team-b"); got != "ops" {
		t.Errorf("admin lists %q of team-b, want ops", got)
	}
	if got := names(admin, "?selector=team%3Dother"); got != "" {
		t.Errorf("admin lists %q of team=other, want none", got)
	}
	var ops v1alpha1.ApplicationSet
	h.do(http.MethodGet, sets+"/ops", admin, nil).json(t, &ops)
	if n := len(ops.Spec.Generators[0].List.Elements); n != 2 {
		t.Errorf("ops has %d elements after the upsert, want 2", n)
	}
	wantError(t, h.do(http.MethodGet, sets+"/ops", alice, nil), http.StatusForbidden)

	// generate previews and writes nothing.
	var gen appSetGenerateResponse
	r := h.do(http.MethodPost, sets+"/generate", alice, map[string]any{"applicationSet": appSetBody("preview", "team-a", "x", "y")})
	r.json(t, &gen)
	if r.status != http.StatusOK || len(gen.Applications) != 2 || gen.Applications[0].Name != "x" || gen.Applications[0].Kind != "Application" {
		t.Errorf("generate: %d %+v", r.status, gen.Applications)
	}
	wantError(t, h.do(http.MethodPost, sets+"/generate", alice, map[string]any{"applicationSet": appSetBody("preview", "team-b", "x")}), http.StatusForbidden)
	var apps v1alpha1.ApplicationList
	if err := h.k8s.List(t.Context(), &apps); err != nil {
		t.Fatal(err)
	}
	for _, a := range apps.Items {
		if a.Name == "x" || a.Name == "y" {
			t.Errorf("generate wrote the application %s", a.Name)
		}
	}

	wantError(t, h.do(http.MethodDelete, sets+"/web", alice, nil), http.StatusForbidden)
	if r := h.do(http.MethodDelete, sets+"/web", admin, nil); r.status != http.StatusOK {
		t.Errorf("admin deletes web: %d %s", r.status, r.body)
	}
	wantError(t, h.do(http.MethodGet, sets+"/web", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodDelete, sets+"/web", admin, nil), http.StatusNotFound)
}

// A push refreshes the ApplicationSets whose git generators read the
// repository, in any spelling of its URL (a matrix's nested generator
// included), and no other.
func TestWebhookRefreshesTheApplicationSetsReadingTheRepo(t *testing.T) {
	h := startServer(t)
	h.setSecretKey(keyGitHubSecret, "gh-secret")
	set := func(name, generators string) {
		t.Helper()
		obj := &v1alpha1.ApplicationSet{}
		if err := yaml.Unmarshal([]byte("metadata: {name: "+name+", namespace: "+h.ns+"}\nspec:\n  generators:\n"+generators+
			"  template:\n    metadata: {name: x}\n    spec: {project: default, destination: {server: https://kubernetes.default.svc, namespace: x}}\n"), obj); err != nil {
			t.Fatal(err)
		}
		if err := h.k8s.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	set("dirs", "  - git: {repoURL: 'git@github.com:Org/repo.git', revision: HEAD, directories: [{path: '*'}]}\n")
	set("nested", "  - matrix:\n      generators:\n      - list: {elements: [{a: b}]}\n      - git: {repoURL: 'https://github.com/org/repo', revision: main, files: [{path: 'x.json'}]}\n")
	set("other", "  - git: {repoURL: 'https://github.com/org/other', revision: HEAD, directories: [{path: '*'}]}\n")
	set("list", "  - list: {elements: [{a: b}]}\n")

	body := []byte(githubPush)
	r := h.do(http.MethodPost, "/api/webhook", "", body, "X-GitHub-Event", "push", "X-Hub-Signature-256", "sha256="+sign("gh-secret", body))
	var answer struct {
		Sets []string `json:"refreshedApplicationSets"`
	}
	r.json(t, &answer)
	if r.status != http.StatusOK || strings.Join(answer.Sets, ",") != "dirs,nested" {
		t.Fatalf("push: %d, refreshed sets %v, want dirs,nested", r.status, answer.Sets)
	}
	for _, name := range []string{"dirs", "nested", "other", "list"} {
		var got v1alpha1.ApplicationSet
		if err := h.k8s.Get(t.Context(), client.ObjectKey{Namespace: h.ns, Name: name}, &got); err != nil {
			t.Fatal(err)
		}
		want := name == "dirs" || name == "nested"
		if has := got.Annotations[appsetops.RefreshAnnotation] == "true"; has != want {
			t.Errorf("%s annotated %v, want %v", name, has, want)
		}
	}
}
