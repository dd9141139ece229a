package rollout

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/testwait"
)

// startCanary creates the canary of testdata/canary.yml with its Services,
// waits for its first revision, updates the image and waits for the first
// pause (step 1, after setWeight 20). It returns the stable and new hashes.
func startCanary(t *testing.T, c client.Client, ns string) (ro *v1alpha1.Rollout, stable, canary string) {
	t.Helper()
	ro, first := firstRevision(t, c, ns, "canary-services.yml", "canary.yml")
	stable = first.Status.CurrentPodHash
	if step := ptr.Deref(first.Status.CurrentStepIndex, -1); step != 6 {
		t.Errorf("first revision step index = %d, want 6 (steps skipped)", step)
	}
	canary = setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	waitAtPause(t, c, ro, canary, 1)
	return ro, stable, canary
}

// firstRevision creates the Services of testdata/<services> and the
// Rollout of testdata/<file> in ns and waits until its first revision is
// Healthy, which it returns.
func firstRevision(t *testing.T, c client.Client, ns, services, file string) (*v1alpha1.Rollout, *v1alpha1.Rollout) {
	t.Helper()
	createServices(t, c, services, ns)
	ro := readRollout(t, file, ns)
	create(t, c, ro)
	return ro, waitFor(t, c, ro, "first revision Healthy", healthyAt)
}

// waitAtPause waits until the canary is paused at step index.
func waitAtPause(t *testing.T, c client.Client, ro *v1alpha1.Rollout, hash string, index int32) *v1alpha1.Rollout {
	t.Helper()
	return waitFor(t, c, ro, "the pause at step "+string(rune('0'+index)), func(ro *v1alpha1.Rollout) bool {
		return phaseIs(v1alpha1.RolloutPhasePaused)(ro) && ro.Status.CurrentPodHash == hash &&
			ptr.Deref(ro.Status.CurrentStepIndex, -1) == index
	})
}

// waitForSplit waits until the canary and stable ReplicaSets run and have
// available the given numbers of pods.
func waitForSplit(t *testing.T, c client.Client, ro *v1alpha1.Rollout, canaryHash, stableHash, canary, stable string) {
	t.Helper()
	waitUntil(t, "canary "+canary+" stable "+stable, func() error {
		if gotCanary, gotStable := rsCounts(t, c, ro, canaryHash), rsCounts(t, c, ro, stableHash); gotCanary != canary || gotStable != stable {
			return fmt.Errorf("canary %s stable %s", gotCanary, gotStable)
		}
		return nil
	})
}

// The canary: [setWeight 20, pause {}, setWeight 40, pause 2s,
// setWeight 60, setWeight 80] on 10 replicas, promoted through its pause.
func TestCanaryStepsSplitReplicasAndPromote(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, stable, canary := startCanary(t, c, ns)

	paused := waitAtPause(t, c, ro, canary, 1)
	if len(paused.Status.PauseConditions) != 1 || paused.Status.PauseConditions[0].Reason != v1alpha1.PauseReasonCanaryPauseStep ||
		paused.Status.Message != "CanaryPauseStep" || !paused.Status.ControllerPause {
		t.Errorf("paused status: %s", describe(paused))
	}
	if paused.Status.StableRS != stable || paused.Status.CurrentStepHash == "" {
		t.Errorf("stableRS %s stepHash %q, want %s and a step hash", paused.Status.StableRS, paused.Status.CurrentStepHash, stable)
	}
	waitForSplit(t, c, ro, canary, stable, "2/2", "8/8")
	if cs, ss := serviceHash(t, c, ns, "canary-demo-preview"), serviceHash(t, c, ns, "canary-demo"); cs != canary || ss != stable {
		t.Errorf("canary Service selects %s, stable Service %s; want %s and %s", cs, ss, canary, stable)
	}

	promote(t, c, ro)
	timed := waitAtPause(t, c, ro, canary, 3)
	// The pause ends 2 s after its start as written (to the second, as
	// Argo Rollouts writes it), which can be up to a second before the
	// pass that paused, and the pause is seen a poll after that.
	cond := rollout.FindPause(&timed.Status, v1alpha1.PauseReasonCanaryPauseStep)
	if cond == nil {
		t.Fatalf("paused at step 3 without a CanaryPauseStep condition: %s", describe(timed))
	}
	deadline := cond.StartTime.Add(2 * time.Second)
	waitForSplit(t, c, ro, canary, stable, "4/4", "6/6")
	waitFor(t, c, ro, "the 2 s pause to end", func(ro *v1alpha1.Rollout) bool {
		ended := ptr.Deref(ro.Status.CurrentStepIndex, -1) > 3
		if ended && time.Now().Before(deadline) {
			t.Errorf("the 2 s pause ended at %s, before its end %s", time.Now().UTC().Format(time.RFC3339Nano), deadline)
		}
		return ended
	})

	got := waitFor(t, c, ro, "Healthy on the new revision", healthyAt)
	if got.Status.StableRS != canary || ptr.Deref(got.Status.CurrentStepIndex, -1) != 6 || len(got.Status.PauseConditions) > 0 {
		t.Errorf("final status: %s", describe(got))
	}
	if counts := rsCounts(t, c, ro, stable); !strings.HasPrefix(counts, "0/") {
		t.Errorf("old stable ReplicaSet = %s, want 0 replicas", counts)
	}
	if ss := serviceHash(t, c, ns, "canary-demo"); ss != canary {
		t.Errorf("stable Service selects %s after promotion, want %s", ss, canary)
	}

	var events eventsv1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, e := range events.Items {
		if e.Reason == "RolloutStepCompleted" && e.Regarding.Name == ro.Name {
			steps++
		}
	}
	if steps < 6 {
		t.Errorf("%d RolloutStepCompleted events, want one per step (6)", steps)
	}
}

// Abort mid-way sends everything back to stable and reports Degraded;
// retry starts the steps again.
func TestCanaryAbortAndRetry(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, stable, canary := startCanary(t, c, ns)
	waitForSplit(t, c, ro, canary, stable, "2/2", "8/8")

	patchStatus(t, c, ro, `{"status":{"abort":true}}`)
	got := waitFor(t, c, ro, "Degraded", phaseIs(v1alpha1.RolloutPhaseDegraded))
	if got.Status.Message != "RolloutAborted: Rollout aborted update to revision 2" {
		t.Errorf("message = %q", got.Status.Message)
	}
	waitForSplit(t, c, ro, canary, stable, "0/0", "10/10")
	got = waitFor(t, c, ro, "the step index back at 0", func(ro *v1alpha1.Rollout) bool {
		return ptr.Deref(ro.Status.CurrentStepIndex, -1) == 0
	})
	if got.Status.StableRS != stable || len(got.Status.PauseConditions) > 0 {
		t.Errorf("aborted status: %s", describe(got))
	}
	if cs, ss := serviceHash(t, c, ns, "canary-demo-preview"), serviceHash(t, c, ns, "canary-demo"); cs != stable || ss != stable {
		t.Errorf("after abort canary Service selects %s, stable Service %s; want both on %s", cs, ss, stable)
	}

	patchStatus(t, c, ro, `{"status":{"abort":false}}`)
	waitAtPause(t, c, ro, canary, 1)
	waitForSplit(t, c, ro, canary, stable, "2/2", "8/8")
	if cs := serviceHash(t, c, ns, "canary-demo-preview"); cs != canary {
		t.Errorf("canary Service selects %s after retry, want %s", cs, canary)
	}
}

// promote --full skips the remaining steps.
func TestCanaryPromoteFull(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, stable, canary := startCanary(t, c, ns)

	patchStatus(t, c, ro, `{"status":{"promoteFull":true}}`)
	got := waitFor(t, c, ro, "Healthy on the new revision", healthyAt)
	if got.Status.StableRS != canary || ptr.Deref(got.Status.CurrentStepIndex, -1) != 6 {
		t.Errorf("status after promote --full: %s", describe(got))
	}
	waitForSplit(t, c, ro, canary, stable, "10/10", "0/0")
}

// Undo (the template back to the stable one) goes straight back to stable
// without steps, and the stable ReplicaSet becomes the newest revision.
func TestCanaryUndoToStableSkipsSteps(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, stable, canary := startCanary(t, c, ns)
	waitForSplit(t, c, ro, canary, stable, "2/2", "8/8")

	if back := setImage(t, c, ro, "argoproj/rollouts-demo:blue"); back != stable {
		t.Fatalf("undo gave hash %s, want the stable %s", back, stable)
	}
	got := waitFor(t, c, ro, "Healthy on the stable revision", healthyAt)
	if got.Status.StableRS != stable || ptr.Deref(got.Status.CurrentStepIndex, -1) != 6 {
		t.Errorf("status after undo: %s", describe(got))
	}
	waitForSplit(t, c, ro, canary, stable, "0/0", "10/10")
	if rev := replicaSets(t, c, ro)[stable].Annotations[AnnotationRevision]; rev != "3" {
		t.Errorf("stable ReplicaSet revision after undo = %q, want 3", rev)
	}
}

// A rollback to a revision within spec.rollbackWindow skips the steps (the
// pause at step 1 included), as Argo Rollouts decides it: by ReplicaSet
// creation times. One further back than the window runs the steps.
func TestCanaryRollbackWithinWindowSkipsSteps(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	createServices(t, c, "canary-services.yml", ns)
	ro := readRollout(t, "canary.yml", ns)
	ro.Spec.Replicas = ptr.To[int32](2)
	ro.Spec.RollbackWindow = &v1alpha1.RollbackWindowSpec{Revisions: 1}
	ro.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{{SetWeight: ptr.To[int32](50)}, {Pause: &v1alpha1.RolloutPause{}}}
	create(t, c, ro)
	first := waitFor(t, c, ro, "first revision Healthy", healthyAt).Status.CurrentPodHash
	var hashes []string
	last := first
	for _, image := range []string{"argoproj/rollouts-demo:yellow", "argoproj/rollouts-demo:red"} {
		// Creation times order the revisions, to the second: the next
		// revision is created in a later second than the last.
		created := replicaSets(t, c, ro)[last].CreationTimestamp.Time
		testwait.Eventually(t, "a second later than revision "+last+"'s creation", func() bool {
			return time.Now().Truncate(time.Second).After(created)
		})
		hash := setImage(t, c, ro, image)
		waitAtPause(t, c, ro, hash, 1)
		promote(t, c, ro)
		waitFor(t, c, ro, image+" Healthy", healthyAt)
		hashes = append(hashes, hash)
		last = hash
	}
	second := hashes[0]

	// Two revisions back is outside a window of 1: the steps run.
	if back := setImage(t, c, ro, "argoproj/rollouts-demo:blue"); back != first {
		t.Fatalf("rollback gave hash %s, want %s", back, first)
	}
	waitAtPause(t, c, ro, first, 1)

	// The revision just before the stable one is inside it: at once.
	setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	got := waitFor(t, c, ro, "the rollback within the window Healthy without a pause", healthyAt)
	if got.Status.CurrentPodHash != second || ptr.Deref(got.Status.CurrentStepIndex, -1) != 2 {
		t.Errorf("status after the rollback: %s", describe(got))
	}
}

// An update replaced mid-way (a third revision while the second runs 6 of
// 10 pods) scales the abandoned revision down within maxUnavailable (2
// pods) as the other revisions' pods come up, as Argo Rollouts does; all 6
// at once would leave only the 4 stable pods serving.
func TestCanaryAbandonedRevisionScalesDownWithinMaxUnavailable(t *testing.T) {
	c := startController(t)
	ns := cluster.Namespace(t)
	ro, first := firstRevision(t, c, ns, "canary-services.yml", "canary-intermediate.yml")
	stable := first.Status.CurrentPodHash
	abandoned := setImage(t, c, ro, "argoproj/rollouts-demo:yellow")
	waitAtPause(t, c, ro, abandoned, 1)
	waitForSplit(t, c, ro, abandoned, stable, "6/6", "4/4")
	abandonedRS := replicaSets(t, c, ro)[abandoned].Name

	replaced := time.Now().Truncate(time.Second)
	setImage(t, c, ro, "argoproj/rollouts-demo:green")
	waitUntil(t, "the abandoned revision drained", func() error {
		if got := rsCounts(t, c, ro, abandoned); got != "0/0" {
			return fmt.Errorf("the abandoned ReplicaSet at %s", got)
		}
		return nil
	})
	var downs []string
	waitUntil(t, "its scale-down events", func() error {
		downs = notes(scaleEvents(t, c, ns, replaced, "Scaled down ReplicaSet "+abandonedRS+" "))
		return lastScaledTo(downs, 0)
	})
	if !strings.HasSuffix(downs[0], " from 6 to 4") {
		t.Errorf("the abandoned revision went %q first, want from 6 to 4 (all scale-downs: %s)", downs[0], strings.Join(downs, "; "))
	}
}

// scaleEvents lists the ScalingReplicaSet events since a time whose note
// starts with prefix, oldest first.
func scaleEvents(t *testing.T, c client.Client, ns string, since time.Time, prefix string) []eventsv1.Event {
	t.Helper()
	var events eventsv1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	sort.Slice(events.Items, func(i, j int) bool { return events.Items[i].EventTime.Before(&events.Items[j].EventTime) })
	var out []eventsv1.Event
	for _, e := range events.Items {
		if e.Reason == eventReasonScalingReplicaSet && !e.EventTime.Time.Before(since) && strings.HasPrefix(e.Note, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// lastScaledTo holds when the last of the scale events' notes ends at
// replicas.
func lastScaledTo(notes []string, replicas int) error {
	if len(notes) == 0 || !strings.HasSuffix(notes[len(notes)-1], fmt.Sprintf(" to %d", replicas)) {
		return fmt.Errorf("scale events %q, want the last to %d", notes, replicas)
	}
	return nil
}

func notes(events []eventsv1.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Note)
	}
	return out
}
