package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// `skiff appset` creates, lists, reads and deletes ApplicationSets through
// the API server (RBAC applies) and with --core.
func TestAppSetThroughBothBackends(t *testing.T) {
	t.Parallel()
	c := kube(t)
	ns := cluster.Namespace(t)
	admin, viewer := adminAndViewer(t, c, ns)
	mustSkiff := mustWith(t, runSkiff)
	const file = "testdata/appset-guestbook.yaml"

	if out, err := runSkiff("appset", "create", file, "--config", viewer); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a viewer created a set: %v\n%s", err, out)
	}
	if out := mustSkiff("appset", "create", file, "--dry-run", "--config", admin); !strings.Contains(out, "would be created") {
		t.Errorf("dry run said %q", out)
	}
	if out := mustSkiff("appset", "list", "-o", "name", "--config", admin); strings.TrimSpace(out) != "" {
		t.Errorf("after a dry run the sets are %q, want none", out)
	}
	if out := mustSkiff("appset", "create", file, "--config", admin); !strings.Contains(out, "ApplicationSet 'guestbook' created") {
		t.Errorf("create said %q", out)
	}
	if out, err := runSkiff("appset", "create", file, "--config", admin); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second create: %v\n%s", err, out)
	}
	mustSkiff("appset", "create", file, "--upsert", "--config", admin)
	out := mustSkiff("appset", "list", "--config", viewer)
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "guestbook") || !strings.Contains(out, "default") {
		t.Errorf("the viewer's list:\n%s", out)
	}
	if out := mustSkiff("appset", "get", "guestbook", "--config", viewer); !strings.Contains(out, "missingkey=error") || !strings.Contains(out, "engineering-prod") {
		t.Errorf("get lost fields:\n%s", out)
	}
	if out := mustSkiff("appset", "list", "-o", "name", "--core", "--kubeconfig", cluster.Kubeconfig, "-N", ns); strings.TrimSpace(out) != "guestbook" {
		t.Errorf("--core lists %q", out)
	}
	if out, err := runSkiff("appset", "delete", "guestbook", "--config", viewer); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a viewer deleted a set: %v\n%s", err, out)
	}
	mustSkiff("appset", "delete", "guestbook", "--yes", "--config", admin)
	if out, err := runSkiff("appset", "get", "guestbook", "--core", "--kubeconfig", cluster.Kubeconfig, "-N", ns); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("get after delete: %v\n%s", err, out)
	}
	if out, err := runSkiff("appset", "create", "testdata/appset-guestbook-missing.yaml", "--config", admin); err == nil {
		t.Errorf("a missing file was created: %s", out)
	}
}

// `skiff appset generate` prints the Applications a git-directories set
// makes from a real repository, through the API server and with --core,
// and writes nothing.
func TestAppSetGenerateReadsGit(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	srv := startAPIServer(t, ns)
	repo := testgit.New(t)
	repo.Commit(map[string]string{"apps/web/cm.yaml": "x: 1\n", "apps/db/cm.yaml": "x: 1\n", "apps/skip/cm.yaml": "x: 1\n", "README.md": "r"})
	set := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: dirs
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: %s
      revision: HEAD
      directories:
      - path: apps/*
      - path: apps/skip
        exclude: true
  template:
    metadata:
      name: 'dir-{{.path.basename}}'
    spec:
      project: default
      source: {repoURL: %s, path: '{{.path.path}}', targetRevision: HEAD}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.path.basename}}'}
`, repo.URL(), repo.URL())
	file := filepath.Join(t.TempDir(), "set.yaml")
	if err := os.WriteFile(file, []byte(set), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := filepath.Join(t.TempDir(), "admin")
	mustSkiff := mustWith(t, runSkiff)
	mustSkiff("login", srv.addr, "--password", srv.password, "--insecure-skip-tls-verify", "--config", admin)

	for name, args := range map[string][]string{
		"through the API server": {"--config", admin},
		"with --core":            {"--core", "--kubeconfig", cluster.Kubeconfig, "-N", ns, "--cache-dir", t.TempDir()},
	} {
		out := mustSkiff(append([]string{"appset", "generate", file}, args...)...)
		for _, want := range []string{"dir-db", "dir-web", "apps/web"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: generate printed no %q:\n%s", name, want, out)
			}
		}
		if strings.Contains(out, "dir-skip") {
			t.Errorf("%s: the excluded directory made an app:\n%s", name, out)
		}
	}
	var apps v1alpha1.ApplicationList
	if err := kube(t).List(t.Context(), &apps, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(apps.Items) != 0 {
		t.Errorf("generate wrote %d applications", len(apps.Items))
	}
}

// adminAndViewer starts an API server on ns and returns the config files of
// two sessions with it: admin's and a read-only viewer's.
func adminAndViewer(t *testing.T, c client.Client, ns string) (admin, viewer string) {
	t.Helper()
	srv := startAPIServer(t, ns)
	addViewer(t, c, ns, "viewer", "viewer-password")
	admin = filepath.Join(t.TempDir(), "admin")
	viewer = filepath.Join(t.TempDir(), "viewer")
	mustSkiff := mustWith(t, runSkiff)
	mustSkiff("login", srv.addr, "--password", srv.password, "--insecure-skip-tls-verify", "--config", admin)
	mustSkiff("login", srv.addr, "--username", "viewer", "--password", "viewer-password", "--insecure-skip-tls-verify", "--config", viewer)
	return admin, viewer
}
