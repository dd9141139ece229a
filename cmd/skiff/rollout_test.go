package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/rolloutcli"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The Rollout controller runs in the manager TestMain starts: it watches
// Rollouts in every namespace. The cluster tests of Rollouts run one after
// the other, before the parallel Application tests, so the two do not
// slow each other down on a busy machine.

// skiffRollout runs `skiff rollout -n NS ARGS` against the test cluster.
func skiffRollout(t *testing.T, ns string, args ...string) (string, error) {
	t.Helper()
	return runSkiff(append([]string{"rollout", "--kubeconfig", cluster.Kubeconfig, "-n", ns}, args...)...)
}

func mustRollout(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, err := skiffRollout(t, ns, args...)
	if err != nil {
		t.Fatalf("skiff rollout %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// createFromTestdata creates every object (Rollouts, AnalysisTemplates,
// Services) of testdata/FILE in ns, passing each Rollout through edit
// (when not nil).
func createFromTestdata(t *testing.T, c client.Client, file, ns string, edit func(*v1alpha1.Rollout)) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLReader(bufioReader(data))
	for {
		raw, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		var obj client.Object
		switch {
		case bytes.Contains(raw, []byte("kind: Rollout")):
			ro := &v1alpha1.Rollout{}
			if err := yaml.UnmarshalStrict(raw, ro); err != nil {
				t.Fatal(err)
			}
			if edit != nil {
				edit(ro)
			}
			obj = ro
		case bytes.Contains(raw, []byte("kind: AnalysisTemplate")):
			obj = &v1alpha1.AnalysisTemplate{}
			if err := yaml.UnmarshalStrict(raw, obj); err != nil {
				t.Fatal(err)
			}
		case bytes.Contains(raw, []byte("kind: Service")):
			obj = &corev1.Service{}
			if err := yaml.UnmarshalStrict(raw, obj); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("testdata/%s: unexpected document:\n%s", file, raw)
		}
		obj.SetNamespace(ns)
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
}

func getRollout(t *testing.T, c client.Client, ns, name string) *v1alpha1.Rollout {
	t.Helper()
	ro := &v1alpha1.Rollout{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

// waitRollout reads the Rollout every 200 ms for up to 90 s until done.
func waitRollout(t *testing.T, c client.Client, ns, name, what string, done func(*v1alpha1.Rollout) bool) *v1alpha1.Rollout {
	t.Helper()
	var last *v1alpha1.Rollout
	testwait.Eventually(t, what, func() error {
		if last = getRollout(t, c, ns, name); done(last) {
			return nil
		}
		phase, msg := rollout.Phase(last)
		return fmt.Errorf("phase %s %q, step %v, pause %v, abort %v, current %s stable %s",
			phase, msg, ptr.Deref(last.Status.CurrentStepIndex, -1), last.Status.PauseConditions, last.Status.Abort,
			last.Status.CurrentPodHash, last.Status.StableRS)
	}, testwait.Timeout(90*time.Second), testwait.Interval(200*time.Millisecond))
	return last
}

// phaseIs holds when the controller has seen the spec and the rollout is
// in phase.
func phaseIs(phase v1alpha1.RolloutPhase) func(*v1alpha1.Rollout) bool {
	return func(ro *v1alpha1.Rollout) bool {
		got, _ := rollout.Phase(ro)
		return got == phase
	}
}

func pausedAtStep(step int32) func(*v1alpha1.Rollout) bool {
	return func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ptr.Deref(ro.Status.CurrentStepIndex, -1) == step
	}
}

func serviceSelector(t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	svc := &corev1.Service{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	return svc.Spec.Selector[rollout.PodTemplateHashLabel]
}

// The seeds' blue-green rollout, with manual promotion: get and list show
// it, set image starts a paused revision that promote finishes, abort
// degrades it and retry resumes it, undo goes back to the first template
// (and its ReplicaSet), pause and restart patch the spec.
func TestRolloutBlueGreen(t *testing.T) {
	c := kube(t)
	ns := cluster.Namespace(t)
	const name = "rollout-bg-test"
	createFromTestdata(t, c, "rollout-service.yml", ns, nil)
	createFromTestdata(t, c, "rollout-bg-test.yml", ns, func(ro *v1alpha1.Rollout) {
		ro.Spec.Strategy.BlueGreen.AutoPromotionEnabled = ptr.To(false)
	})

	out := mustRollout(t, ns, "status", name, "--watch", "--timeout", "80s")
	wantContains(t, out, "Healthy")
	first := getRollout(t, c, ns, name).Status.CurrentPodHash

	out = mustRollout(t, ns, "get", name)
	wantContains(t, out, "Name:", name, "Namespace:", ns, "Status:", "Healthy", "Strategy:", "BlueGreen",
		"Images:", "nginx:latest (stable, active)", "Desired:", "2",
		"NAME", "KIND", "STATUS", "AGE", "INFO", "Rollout", "# revision:1",
		name+"-"+first, "ReplicaSet", "stable,active", "Pod", "Running", "ready:1/1,restarts:0")
	if n := strings.Count(out, " Pod "); n != 2 {
		t.Errorf("tree shows %d pods, want 2:\n%s", n, out)
	}
	out = mustRollout(t, ns, "list")
	wantContains(t, out, "NAME", "STRATEGY", "STATUS", "STEP", "SET-WEIGHT", "READY", "DESIRED", "UP-TO-DATE", "AVAILABLE")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), name+" BlueGreen Healthy - - 2/2 2 2 2") {
		t.Errorf("list lacks the rollout's row:\n%s", out)
	}
	wantContains(t, mustRollout(t, ns, "list", "rollouts", "-o", "name"), name)
	wantContains(t, mustRollout(t, ns, "get", "rollout", name, "-o", "yaml"), "activeService: rollout-active-service", "phase: Healthy")
	wantContains(t, mustRollout(t, ns, "get", name, "-o", "json"), `"autoPromotionEnabled": false`)

	// set image starts revision 2, which waits for promotion.
	wantContains(t, mustRollout(t, ns, "set", "image", name, "nginx-container=nginx:1.27"), "image updated")
	ro := waitRollout(t, c, ns, name, "the new revision to pause", phaseIs(v1alpha1.RolloutPhasePaused))
	second := ro.Status.CurrentPodHash
	if second == first || ro.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Fatalf("set image: hash %s (first %s), image %s", second, first, ro.Spec.Template.Spec.Containers[0].Image)
	}
	out = mustRollout(t, ns, "get", name)
	wantContains(t, out, "Paused", "BlueGreenPause", "# revision:2", "# revision:1", name+"-"+second, "preview",
		"nginx:1.27 (preview)", "nginx:latest (stable, active)")
	wantContains(t, mustRollout(t, ns, "status", name), "Paused - BlueGreenPause")
	if _, err := skiffRollout(t, ns, "set", "image", name, "no-such-container=x"); err == nil || !strings.Contains(err.Error(), "no-such-container") {
		t.Errorf("set image of a missing container: %v", err)
	}

	wantContains(t, mustRollout(t, ns, "promote", name), "rollout '"+name+"' promoted")
	wantContains(t, mustRollout(t, ns, "status", name, "--watch", "--timeout", "80s"), "Healthy")
	if got := serviceSelector(t, c, ns, "rollout-active-service"); got != second {
		t.Errorf("active Service selects %s after promote, want %s", got, second)
	}

	// abort degrades an update until retry; promote then finishes it.
	mustRollout(t, ns, "set", "image", name, "*=nginx:1.28")
	third := waitRollout(t, c, ns, name, "the third revision to pause", phaseIs(v1alpha1.RolloutPhasePaused)).Status.CurrentPodHash
	wantContains(t, mustRollout(t, ns, "abort", name), "rollout '"+name+"' aborted")
	waitRollout(t, c, ns, name, "Degraded after abort", phaseIs(v1alpha1.RolloutPhaseDegraded))
	out, err := skiffRollout(t, ns, "status", name, "--watch", "--timeout", "30s")
	var degraded *rolloutcli.DegradedError
	if !errors.As(err, &degraded) {
		t.Errorf("status --watch on an aborted rollout: got %v, want a Degraded error\n%s", err, out)
	}
	wantContains(t, out, "Degraded - RolloutAborted")
	if got := serviceSelector(t, c, ns, "rollout-active-service"); got != second {
		t.Errorf("active Service selects %s after abort, want the stable %s", got, second)
	}
	wantContains(t, mustRollout(t, ns, "retry", "rollout", name), "rollout '"+name+"' retried")
	ro = waitRollout(t, c, ns, name, "the retried revision to pause", phaseIs(v1alpha1.RolloutPhasePaused))
	if ro.Status.Abort || ro.Status.CurrentPodHash != third {
		t.Errorf("after retry: abort %v, current %s, want false and %s", ro.Status.Abort, ro.Status.CurrentPodHash, third)
	}
	mustRollout(t, ns, "promote", name)
	mustRollout(t, ns, "status", name, "--watch", "--timeout", "80s")

	// undo goes back to the template (and ReplicaSet) of revision 2.
	wantContains(t, mustRollout(t, ns, "undo", name), "rollout '"+name+"' undo")
	ro = getRollout(t, c, ns, name)
	if img := ro.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
		t.Errorf("image after undo %s, want nginx:1.27", img)
	}
	if _, ok := ro.Spec.Template.Labels[rollout.PodTemplateHashLabel]; ok {
		t.Errorf("undo kept the hash label: %v", ro.Spec.Template.Labels)
	}
	if h := rollout.PodTemplateHash(&ro.Spec.Template, ro.Status.CollisionCount); h != second {
		t.Errorf("template after undo hashes to %s, want revision 2's %s", h, second)
	}
	waitRollout(t, c, ns, name, "the undone revision to pause", phaseIs(v1alpha1.RolloutPhasePaused))
	mustRollout(t, ns, "promote", name)
	mustRollout(t, ns, "status", name, "--watch", "--timeout", "80s")
	wantContains(t, mustRollout(t, ns, "undo", name, "--to-revision", "4"), "skipped rollback")
	if _, err := skiffRollout(t, ns, "undo", name, "--to-revision", "99"); err == nil || !strings.Contains(err.Error(), "no revision 99") {
		t.Errorf("undo to a missing revision: %v", err)
	}

	// pause and promote; restart.
	wantContains(t, mustRollout(t, ns, "pause", name), "paused")
	waitRollout(t, c, ns, name, "manual pause", phaseIs(v1alpha1.RolloutPhasePaused))
	wantContains(t, mustRollout(t, ns, "status", name), "Paused - manually paused")
	mustRollout(t, ns, "promote", name)
	if getRollout(t, c, ns, name).Spec.Paused {
		t.Error("promote left spec.paused set")
	}
	mustRollout(t, ns, "status", name, "--watch", "--timeout", "80s")
	before := time.Now().Add(-time.Second)
	wantContains(t, mustRollout(t, ns, "restart", name), "restarts")
	if at := getRollout(t, c, ns, name).Spec.RestartAt; at == nil || at.Time.Before(before) {
		t.Errorf("restartAt %v, want about now", at)
	}
}

// A canary with steps [setWeight 20, pause, setWeight 60, pause]: promote
// moves one step at a time, promote --full ends it.
func TestRolloutCanarySteps(t *testing.T) {
	c := kube(t)
	ns := cluster.Namespace(t)
	const name = "canary-steps"
	createFromTestdata(t, c, "rollout-canary-steps.yml", ns, nil)
	mustRollout(t, ns, "status", name, "--watch", "--timeout", "80s")
	stable := getRollout(t, c, ns, name).Status.StableRS

	mustRollout(t, ns, "set", "image", name, "web=nginx:1.28")
	ro := waitRollout(t, c, ns, name, "the pause after setWeight 20", pausedAtStep(1))
	canaryHash := ro.Status.CurrentPodHash
	out := mustRollout(t, ns, "get", name)
	wantContains(t, out, "Strategy:", "Canary", "Step:", "1/4", "SetWeight:", "20", "ActualWeight:", "20",
		"CanaryPauseStep", "nginx:1.28 (canary)", "nginx:1.27 (stable)", name+"-"+canaryHash, "canary", name+"-"+stable, "stable")
	if !strings.Contains(strings.Join(strings.Fields(mustRollout(t, ns, "list")), " "), name+" Canary Paused 1/4 20") {
		t.Errorf("list lacks step and weight:\n%s", mustRollout(t, ns, "list"))
	}

	wantContains(t, mustRollout(t, ns, "promote", name), "promoted")
	waitRollout(t, c, ns, name, "the pause after setWeight 60", pausedAtStep(3))
	out = mustRollout(t, ns, "get", name)
	wantContains(t, out, "Step:", "3/4", "SetWeight:", "60")
	if rs := replicaSetOf(t, c, ns, canaryHash); rs == nil || ptr.Deref(rs.Spec.Replicas, 0) != 3 {
		t.Errorf("canary ReplicaSet at 60%% of 5: %+v", rs)
	}

	wantContains(t, mustRollout(t, ns, "promote", name, "--full"), "fully promoted")
	out = mustRollout(t, ns, "status", name, "--watch", "--timeout", "80s")
	wantContains(t, out, "Healthy")
	ro = getRollout(t, c, ns, name)
	if ro.Status.StableRS != canaryHash {
		t.Errorf("stable %s after promote --full, want %s", ro.Status.StableRS, canaryHash)
	}
	wantContains(t, mustRollout(t, ns, "get", name), "Step:", "4/4", "SetWeight:", "100", "nginx:1.28 (stable)")
	// get --watch ends at its timeout without an error.
	out = mustRollout(t, ns, "get", name, "--watch", "--timeout", "2s")
	wantContains(t, out, "Name:", name, "Healthy")
}

func replicaSetOf(t *testing.T, c client.Client, ns, hash string) *appsv1.ReplicaSet {
	t.Helper()
	var list appsv1.ReplicaSetList
	if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].Labels[rollout.PodTemplateHashLabel] == hash {
			return &list.Items[i]
		}
	}
	return nil
}

// lint accepts the seeds' rollout and reports every error of a bad one with
// its field path, exiting non-zero; it needs no cluster.
func TestRolloutLint(t *testing.T) {
	t.Parallel()
	lint := func(file string) (string, error) { return runSkiff("rollout", "lint", file) }
	out, err := lint("testdata/rollout-bg-test.yml")
	if err != nil {
		t.Fatalf("lint of the seeds' rollout: %v\n%s", err, out)
	}
	wantContains(t, out, "1 rollout valid")
	out, err = lint("testdata/rollout-lint-bad.yml")
	if err == nil || !strings.Contains(err.Error(), "3 error(s)") {
		t.Errorf("lint of a bad rollout: got %v, want 3 errors", err)
	}
	wantContains(t, out, "rollout broken",
		"spec.selector: Required value",
		"spec.strategy: Invalid value: \"canary and blueGreen\": Multiple Strategies can not be listed",
		`spec.strategy.canary.steps[1].pause.duration: Invalid value: "two minutes"`)
	if _, err := lint("testdata/no-such-file.yml"); err == nil {
		t.Error("lint of a missing file succeeded")
	}
}

// The namespace defaults to the kubeconfig context's.
func TestRolloutNamespaceFromKubeconfig(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/kubeconfig"
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ns, err := rolloutcli.DefaultNamespace(file)
	if err != nil || ns != "default" {
		t.Fatalf("namespace of a context without one: %q %v, want default", ns, err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, ctx := range cfg["contexts"].([]any) {
		ctx.(map[string]any)["context"].(map[string]any)["namespace"] = "team-a"
	}
	edited, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	if ns, err := rolloutcli.DefaultNamespace(file); err != nil || ns != "team-a" {
		t.Errorf("namespace of the context: %q %v, want team-a", ns, err)
	}
	out, err := runSkiff("rollout", "--kubeconfig", file, "list")
	if err != nil {
		t.Fatalf("list in the context's namespace: %v\n%s", err, out)
	}
	wantContains(t, out, "NAME")
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
