package browser

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// The ApplicationSets page lists a set with its generators and the
// Applications the controller made from it, linked to their pages; a set
// whose template cannot render shows its error.
func TestApplicationSetsPage(t *testing.T) {
	ctx := context.Background()
	create := func(text string) {
		t.Helper()
		set := &v1alpha1.ApplicationSet{}
		if err := yaml.Unmarshal([]byte(text), set); err != nil {
			t.Fatal(err)
		}
		set.Namespace = argocd
		if err := env.k8s.Create(ctx, set); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.k8s.Delete(context.Background(), set) })
	}
	dest := env.cluster.Namespace(t)
	create(`metadata: {name: teams}
spec:
  goTemplate: true
  generators:
  - list: {elements: [{team: red}, {team: blue}]}
  template:
    metadata: {name: 'team-{{.team}}'}
    spec:
      project: default
      source: {repoURL: 'https://example.invalid/repo.git', path: '{{.team}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: ` + dest + `}
`)
	create(`metadata: {name: broken}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list: {elements: [{team: red}]}
  template:
    metadata: {name: 'broken-{{.nope}}'}
    spec:
      project: default
      source: {repoURL: 'https://example.invalid/repo.git', path: x}
      destination: {server: 'https://kubernetes.default.svc', namespace: ` + dest + `}
`)

	p := newPage(t, 1400, 900)
	p.login("admin", env.password)
	p.click(tid("nav-applicationsets"))
	row := tid("appset-row-teams")
	p.until("the two apps of teams", attrIs(row+" "+tid("appset-apps"), "data-count", "2"), 60*time.Second)
	if g := p.text(row + " " + tid("appset-generators")); g != "list" {
		t.Errorf("teams' generators read %q, want list", g)
	}
	p.visible(tid("appset-row-broken")+" "+tid("appset-error"), 60*time.Second)
	p.screenshot("01-applicationsets")
	p.click(tid("appset-app-team-blue") + " a")
	p.until("the app's page", `location.pathname === '/applications/team-blue'`, 10*time.Second)
	p.visible(tid("app-health"), 30*time.Second)
}
