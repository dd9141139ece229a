package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// `skiff appset` creates, lists, reads and deletes ApplicationSets through
// the API server (RBAC applies) and with --core.
func TestAppSetThroughBothBackends(t *testing.T) {
	t.Parallel()
	c := kube(t)
	ns := cluster.Namespace(t)
	srv := startAPIServer(t, ns)
	addViewer(t, c, ns, "viewer", "viewer-password")
	admin := filepath.Join(t.TempDir(), "admin")
	viewer := filepath.Join(t.TempDir(), "viewer")
	mustSkiff := mustWith(t, runSkiff)
	mustSkiff("login", srv.addr, "--password", srv.password, "--insecure-skip-tls-verify", "--config", admin)
	mustSkiff("login", srv.addr, "--username", "viewer", "--password", "viewer-password", "--insecure-skip-tls-verify", "--config", viewer)
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
