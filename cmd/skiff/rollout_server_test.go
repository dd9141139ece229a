package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/rolloutcli"
)

// Every `skiff rollout` command after `skiff login`, through the real API
// server (with its settings in a namespace of its own): a settled rollout
// reads the same as over the kubeconfig; set image, promote, promote
// --full, abort, retry, pause, restart and undo drive the canary as they
// do over the kubeconfig; a read-only user may read but not promote;
// errors are the server's.
func TestRolloutThroughAPIServer(t *testing.T) {
	c := kube(t)
	settings := cluster.Namespace(t)
	srv := startAPIServer(t, settings)
	addViewer(t, c, settings, "viewer", "viewer-password")
	admin := filepath.Join(t.TempDir(), "admin")
	viewer := filepath.Join(t.TempDir(), "viewer")
	if out, err := runSkiff("login", srv.addr, "--password", srv.password, "--insecure-skip-tls-verify", "--config", admin); err != nil {
		t.Fatalf("login as admin: %v\n%s", err, out)
	}
	if out, err := runSkiff("login", srv.addr, "--username", "viewer", "--password", "viewer-password", "--insecure-skip-tls-verify", "--config", viewer); err != nil {
		t.Fatalf("login as viewer: %v\n%s", err, out)
	}
	ns := cluster.Namespace(t)
	// No --core and no --kubeconfig: the saved session decides.
	asAdmin := func(args ...string) (string, error) {
		return runSkiff(append([]string{"rollout", "--config", admin, "-n", ns}, args...)...)
	}
	mustAdmin := func(args ...string) string {
		t.Helper()
		out, err := asAdmin(args...)
		if err != nil {
			t.Fatalf("skiff rollout %s through the server: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	const name = "canary-steps"
	createFromTestdata(t, c, "rollout-canary-steps.yml", ns, nil)
	wantContains(t, mustAdmin("status", name, "--watch", "--timeout", "80s"), "Healthy")
	stable := getRollout(t, c, ns, name).Status.StableRS

	// A settled rollout reads the same both ways.
	for _, args := range [][]string{{"list"}, {"list", "rollouts", "-o", "name"}, {"status", name}} {
		if viaServer, core := mustAdmin(args...), mustRollout(t, ns, args...); viaServer != core {
			t.Errorf("%s through the server:\n%s\nover the kubeconfig:\n%s", strings.Join(args, " "), viaServer, core)
		}
	}
	waitFor(t, "the same tree both ways", func() error {
		return sameOutput(func() (string, error) { return asAdmin("get", name) },
			func() (string, error) { return skiffRollout(t, ns, "get", "rollout", name) })
	})
	wantContains(t, mustAdmin("get", name), "Name:", name, "Strategy:", "Canary", "Step:", "4/4", name+"-"+stable, "ReplicaSet", "Pod")
	wantContains(t, mustAdmin("get", "rollout", name, "-o", "yaml"), "name: canary-steps", "phase: Healthy")
	wantContains(t, mustAdmin("get", name, "--watch", "--timeout", "2s"), "Name:", name, "Healthy")

	out, err := runSkiff("rollout", "--config", viewer, "-n", ns, "get", name)
	if err != nil || !strings.Contains(out, name) {
		t.Errorf("get as viewer: %v\n%s", err, out)
	}
	if _, err := runSkiff("rollout", "--config", viewer, "-n", ns, "promote", name); err == nil ||
		!strings.Contains(err.Error(), "permission denied: rollouts, action/resume, "+ns+"/"+name) {
		t.Errorf("promote as viewer: got %v, want the server's 403 message", err)
	}
	if _, err := runSkiff("rollout", "--server", srv.addr, "--insecure", "--auth-token", "not-a-token", "-n", ns, "list"); err == nil ||
		err.Error() != "not logged in or session expired: run skiff login" {
		t.Errorf("list with a bad token: got %v, want a hint to log in", err)
	}
	if _, err := asAdmin("get", "missing"); err == nil || !strings.Contains(err.Error(), "rollout "+ns+"/missing not found") {
		t.Errorf("get of a missing rollout: %v", err)
	}

	// set image pauses after setWeight 20; promote moves on; abort
	// degrades until retry; promote --full ends the update.
	wantContains(t, mustAdmin("set", "image", name, "web=nginx:1.28"), "rollout '"+name+"' image updated")
	if _, err := asAdmin("set", "image", name, "no-such-container=x"); err == nil || !strings.Contains(err.Error(), `no container named "no-such-container"`) {
		t.Errorf("set image of a missing container: %v", err)
	}
	canaryHash := waitRollout(t, c, ns, name, "the pause after setWeight 20", pausedAtStep(1)).Status.CurrentPodHash
	wantContains(t, mustAdmin("promote", name), "rollout '"+name+"' promoted")
	waitRollout(t, c, ns, name, "the pause after setWeight 60", pausedAtStep(3))
	wantContains(t, mustAdmin("abort", name), "rollout '"+name+"' aborted")
	out, err = asAdmin("status", name, "--watch", "--timeout", "30s")
	var degraded *rolloutcli.DegradedError
	if !errors.As(err, &degraded) {
		t.Errorf("status --watch on an aborted rollout: got %v, want a Degraded error\n%s", err, out)
	}
	wantContains(t, mustAdmin("retry", "rollout", name), "rollout '"+name+"' retried")
	waitRollout(t, c, ns, name, "the retried update to pause", pausedAtStep(1))
	wantContains(t, mustAdmin("promote", name, "--full"), "rollout '"+name+"' fully promoted")
	wantContains(t, mustAdmin("status", name, "--watch", "--timeout", "80s"), "Healthy")
	if ro := getRollout(t, c, ns, name); ro.Status.StableRS != canaryHash {
		t.Errorf("stable %s after promote --full, want %s", ro.Status.StableRS, canaryHash)
	}

	// pause and promote; restart.
	wantContains(t, mustAdmin("pause", name), "rollout '"+name+"' paused")
	waitRollout(t, c, ns, name, "manual pause", phaseIs(v1alpha1.RolloutPhasePaused))
	mustAdmin("promote", name)
	if getRollout(t, c, ns, name).Spec.Paused {
		t.Error("promote left spec.paused set")
	}
	wantContains(t, mustAdmin("restart", name), "rollout '"+name+"' restarts")
	if getRollout(t, c, ns, name).Spec.RestartAt == nil {
		t.Error("restart left spec.restartAt unset")
	}

	// undo: revision 2 is current; revision 1 comes back.
	wantContains(t, mustAdmin("undo", name, "--to-revision", "2"), "skipped rollback (current template already matches revision 2)")
	if _, err := asAdmin("undo", name, "--to-revision", "99"); err == nil || !strings.Contains(err.Error(), "no revision 99") {
		t.Errorf("undo to a missing revision: %v", err)
	}
	wantContains(t, mustAdmin("undo", name), "rollout '"+name+"' undo")
	if img := getRollout(t, c, ns, name).Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
		t.Errorf("image after undo %s, want revision 1's nginx:1.27", img)
	}
}
