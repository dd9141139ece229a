package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/resourceactions"
	"github.com/skiffcd/skiff/internal/testgit"
)

const actionsDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`

// `skiff app actions` through the API server, as `argocd app actions`:
// list prints Argo CD's table, a read-only user's run is refused with the
// RBAC action, restart stamps the pod template, scale takes its parameter,
// and --core lists and runs the same built-in actions.
func TestAppActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kube(t)
	srv := startAPIServer(t, appNamespace)
	addViewer(t, c, appNamespace, "actions-viewer", "viewer-password")
	admin, viewer := filepath.Join(t.TempDir(), "admin"), filepath.Join(t.TempDir(), "viewer")
	if out, err := runSkiff("login", srv.addr, "--password", srv.password, "--insecure-skip-tls-verify", "--config", admin); err != nil {
		t.Fatalf("login as admin: %v\n%s", err, out)
	}
	if out, err := runSkiff("login", srv.addr, "--username", "actions-viewer", "--password", "viewer-password", "--insecure-skip-tls-verify", "--config", viewer); err != nil {
		t.Fatalf("login as viewer: %v\n%s", err, out)
	}
	asAdmin := func(args ...string) (string, error) {
		return runSkiff(append([]string{"app", "--config", admin}, args...)...)
	}
	mustAdmin := mustWith(t, asAdmin)

	dest := cluster.Namespace(t)
	repo := testgit.New(t)
	repo.Commit(map[string]string{"app/deploy.yaml": actionsDeployment})
	const name = "with-actions"
	mustAdmin("create", name, "--repo", repo.URL(), "--path", "app", "--dest-namespace", dest)
	mustAdmin("sync", name, "--timeout", "60s")

	out := mustAdmin("actions", "list", name, "--kind", "Deployment")
	wantContains(t, out, "GROUP", "KIND", "NAME", "ACTION", "DISABLED")
	for _, row := range [][]string{{"apps", "Deployment", "web", "restart", "false"}, {"apps", "Deployment", "web", "resume", "true"}, {"apps", "Deployment", "web", "scale", "false"}} {
		if !hasRow(out, row) {
			t.Errorf("actions list lacks the row %q:\n%s", row, out)
		}
	}
	wantContains(t, mustAdmin("actions", "list", name, "--kind", "Deployment", "-o", "json"), `"name": "scale"`, `"default": "1"`)

	_, err := runSkiff("app", "--config", viewer, "actions", "run", name, "restart", "--kind", "Deployment")
	if err == nil || !strings.Contains(err.Error(), "permission denied: applications, action/apps/Deployment/restart, default/"+name) {
		t.Errorf("restart as viewer: got %v, want the server's 403", err)
	}
	deploy := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: dest, Name: "web"}
	if err := c.Get(ctx, key, deploy); err != nil || deploy.Spec.Template.Annotations[resourceactions.RestartedAtAnnotation] != "" {
		t.Fatalf("the viewer's refused restart: %v, annotations %v", err, deploy.Spec.Template.Annotations)
	}

	wantContains(t, mustAdmin("actions", "run", name, "restart", "--kind", "Deployment"), "ran restart on apps/Deployment "+dest+"/web")
	if err := c.Get(ctx, key, deploy); err != nil || deploy.Spec.Template.Annotations[resourceactions.RestartedAtAnnotation] == "" {
		t.Fatalf("restart left no restartedAt: %v, annotations %v", err, deploy.Spec.Template.Annotations)
	}
	if _, err := asAdmin("actions", "run", name, "restart"); err == nil || !strings.Contains(err.Error(), "--kind is required") {
		t.Errorf("run without --kind: %v", err)
	}
	mustAdmin("actions", "run", name, "scale", "--kind", "Deployment", "--param", "replicas=2")
	if err := c.Get(ctx, key, deploy); err != nil || *deploy.Spec.Replicas != 2 {
		t.Fatalf("scale to 2: %v, replicas %v", err, deploy.Spec.Replicas)
	}

	out, err = skiff(t, "actions", "list", name, "--kind", "Deployment")
	if err != nil || !hasRow(out, []string{"apps", "Deployment", "web", "pause", "false"}) {
		t.Fatalf("--core actions list: %v\n%s", err, out)
	}
	if out, err := skiff(t, "actions", "run", name, "pause", "--kind", "Deployment", "--resource-name", "web"); err != nil {
		t.Fatalf("--core pause: %v\n%s", err, out)
	}
	if err := c.Get(ctx, key, deploy); err != nil || !deploy.Spec.Paused {
		t.Fatalf("--core pause left the Deployment running: %v", err)
	}
}

// hasRow reports whether a line of a table has exactly fields.
func hasRow(table string, fields []string) bool {
	for _, line := range strings.Split(table, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
