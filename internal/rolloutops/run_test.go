package rolloutops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// These tests run against a real control plane without Skiff's
// controllers: what they read is what they wrote (and what the
// ReplicaSet controller made of it).

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) { cluster = c }))
}

func kube(t *testing.T) client.Client {
	t.Helper()
	return cluster.Client(t)
}

// createRollout creates the canary fixture in ns and returns it as stored.
func createRollout(t *testing.T, c client.Client, ns string) *v1alpha1.Rollout {
	t.Helper()
	ro := canary()
	ro.Namespace, ro.Generation, ro.Status = ns, 0, v1alpha1.RolloutStatus{}
	if err := c.Create(context.Background(), ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

// createReplicaSet creates a ReplicaSet of template at revision, controlled
// by owner unless it is nil, with replicas pods.
func createReplicaSet(t *testing.T, c client.Client, owner *v1alpha1.Rollout, ns, name string, template corev1.PodTemplateSpec, revision string, replicas int32) *appsv1.ReplicaSet {
	t.Helper()
	rs := replicaSet(t, template, revision)
	rs.Name, rs.Namespace = name, ns
	rs.Spec.Replicas = ptr.To(replicas)
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: rs.Spec.Template.Labels}
	if owner != nil {
		rs.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, v1alpha1.GroupVersion.WithKind("Rollout"))}
	}
	if err := c.Create(context.Background(), &rs); err != nil {
		t.Fatal(err)
	}
	return &rs
}

func objectNames[T any, P interface {
	*T
	client.Object
}](items []T) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = P(&items[i]).GetName()
	}
	return out
}

// Load finds what the Rollout controls, and only that: its ReplicaSets
// newest first, their pods by ReplicaSet, its AnalysisRuns; a Rollout that
// is not there is an ErrNotFound.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	c := kube(t)
	ns := cluster.Namespace(t)
	ro := createRollout(t, c, ns)
	old := ro.Spec.Template
	current := *old.DeepCopy()
	current.Spec.Containers[0].Image = "nginx:2"
	running := createReplicaSet(t, c, ro, ns, "demo-old", old, "1", 1)
	createReplicaSet(t, c, ro, ns, "demo-new", current, "2", 0)
	other := canary().Spec.Template
	other.Labels = map[string]string{"app": "other"}
	createReplicaSet(t, c, nil, ns, "not-the-rollouts", other, "3", 0)
	for _, run := range []*v1alpha1.AnalysisRun{
		{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ro, v1alpha1.GroupVersion.WithKind("Rollout"))}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns}},
	} {
		run.Spec.Metrics = []v1alpha1.Metric{{Name: "m"}}
		if err := c.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
	}

	var info *Info
	testwait.Eventually(t, "the pod of "+running.Name, func() error {
		var err error
		if info, err = Load(ctx, c, client.ObjectKeyFromObject(ro)); err != nil {
			return err
		}
		if n := len(info.Pods[running.UID]); n != 1 {
			return fmt.Errorf("%d pods of %s loaded", n, running.Name)
		}
		return nil
	}, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
	if got := objectNames(info.ReplicaSets); !slices.Equal(got, []string{"demo-new", "demo-old"}) {
		t.Errorf("ReplicaSets %v, want the rollout's, newest first", got)
	}
	if pod := info.Pods[running.UID][0]; !strings.HasPrefix(pod.Name, "demo-old-") || len(info.Pods) != 1 {
		t.Errorf("pods %v, want the one of demo-old", info.Pods)
	}
	if got := objectNames(info.AnalysisRuns); !slices.Equal(got, []string{"owned"}) {
		t.Errorf("AnalysisRuns %v, want the rollout's", got)
	}

	_, err := Load(ctx, c, client.ObjectKey{Namespace: ns, Name: "missing"})
	if !errors.Is(err, ErrNotFound) || err.Error() != `reading rollout missing: rollouts.argoproj.io "missing" not found` {
		t.Errorf("load of a missing rollout: %v, want an ErrNotFound", err)
	}
}

// Run sends the plan to the Rollout and its status subresource and
// returns the Rollout as written; a set image on a stale read of the
// containers conflicts and writes nothing.
func TestRun(t *testing.T) {
	ctx := context.Background()
	c := kube(t)
	ns := cluster.Namespace(t)
	ro := createRollout(t, c, ns)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Runner{Client: c, Now: func() time.Time { return at }}
	get := func() *v1alpha1.Rollout {
		t.Helper()
		got, err := Get(ctx, c, client.ObjectKeyFromObject(ro))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	res, err := r.Run(ctx, get(), Request{Op: Promote})
	if err != nil || ptr.Deref(res.Rollout.Status.CurrentStepIndex, -1) != 1 || ptr.Deref(get().Status.CurrentStepIndex, -1) != 1 {
		t.Fatalf("promote: %v, step %v; want step 1 written and returned", err, res)
	}
	if _, err := r.Run(ctx, get(), Request{Op: Restart}); err != nil || !get().Spec.RestartAt.Time.Equal(at) {
		t.Errorf("restart: %v, restartAt %v; want the runner's clock", err, get().Spec.RestartAt)
	}

	stale := get()
	renamed := get()
	renamed.Spec.Template.Spec.Containers[0].Name = "renamed"
	if err := c.Update(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(ctx, stale, Request{Op: SetImage, Images: []ContainerImage{{"web", "nginx:9"}}})
	if !errors.Is(err, ErrConflict) {
		t.Errorf("set image on a stale read: %v, want an ErrConflict", err)
	}
	if img := get().Spec.Template.Spec.Containers[0].Image; img != "nginx:1" {
		t.Errorf("image %s after a refused set image, want nginx:1", img)
	}
	if _, err := r.Run(ctx, get(), Request{Op: SetImage, Images: []ContainerImage{{"renamed", "nginx:2"}}}); err != nil {
		t.Fatal(err)
	}

	// Undo puts back revision 1, the one before the newest.
	first := canary().Spec.Template
	createReplicaSet(t, c, get(), ns, "demo-1", first, "1", 0)
	createReplicaSet(t, c, get(), ns, "demo-2", get().Spec.Template, "2", 0)
	res, err = r.Run(ctx, get(), Request{Op: Undo})
	if err != nil || res.Skipped != "" {
		t.Fatalf("undo: %v %+v", err, res)
	}
	if h := rollout.PodTemplateHash(&get().Spec.Template, nil); h != rollout.PodTemplateHash(&first, nil) {
		t.Errorf("template after undo hashes to %s, want revision 1's", h)
	}
	res, err = r.Run(ctx, get(), Request{Op: Undo, ToRevision: 1})
	if err != nil || res.Skipped != "skipped rollback (current template already matches revision 1)" {
		t.Errorf("undo to the current revision: %v %+v, want it skipped", err, res)
	}
}
