package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/shard"
	"github.com/skiffcd/skiff/internal/testgit"
)

// Three replicas with --leader-elect share nine apps. Each app's sync
// waits for its Sync hook when the replica owning the most apps is killed:
// the other two take its apps within the lease duration, and every
// operation completes exactly once (one history entry per app, each hook
// Job created once), none of them twice or on two replicas.
func TestThreeReplicasShareTheAppsAndTakeOverADeadOnesOperations(t *testing.T) {
	ctx := context.Background()
	c := kube(t)
	ns := cluster.Namespace(t)
	replicas := []*replica{startReplica(t, "a", ns), startReplica(t, "b", ns), startReplica(t, "c", ns)}

	repo := testgit.New(t)
	sha := repo.Commit(testgit.Dir(t, "../../internal/controller/application/testdata/hooks", "app"))
	const count = 9
	var apps []*v1alpha1.Application
	for i := range count {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("shared-%d", i), Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: cluster.Namespace(t)},
			},
		}
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		apps = append(apps, app)
	}
	// owners maps each app to the replicas whose metrics report it.
	owners := func(alive []*replica) map[string][]string {
		out := map[string][]string{}
		for _, app := range apps {
			for _, r := range alive {
				if r.ownsApp(t, app.Name) {
					out[app.Name] = append(out[app.Name], r.name)
				}
			}
		}
		return out
	}
	allOwnedOnce := func(alive []*replica) error {
		got := owners(alive)
		for _, app := range apps {
			if n := len(got[app.Name]); n != 1 {
				return fmt.Errorf("app %s is reported by %v", app.Name, got[app.Name])
			}
		}
		return nil
	}
	waitFor(t, "each app to have one owner", func() error { return allOwnedOnce(replicas) })
	shares := map[string]int{}
	for _, rs := range owners(replicas) {
		shares[rs[0]]++
	}
	t.Logf("shares: %v", shares)
	for _, r := range replicas {
		if shares[r.name] == 0 || shares[r.name]*100 > 40*count {
			t.Errorf("replica %s owns %d of %d apps, want a share", r.name, shares[r.name], count)
		}
	}

	token := adminToken(t, c, ns, replicas[0])
	inClusterApps := func(r *replica) error {
		status, body := r.do(t, http.MethodGet, "/api/v1/clusters", token, nil)
		if status != http.StatusOK {
			return fmt.Errorf("GET /api/v1/clusters on %s: %d %s", r.name, status, body)
		}
		var list struct {
			Items []struct {
				Server string        `json:"server"`
				Info   clusters.Info `json:"info"`
			} `json:"items"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return err
		}
		for _, item := range list.Items {
			if item.Server != clusters.InClusterServer {
				continue
			}
			if item.Info.ApplicationsCount != count || item.Info.ConnectionState.Status != clusters.ConnectionSuccessful {
				return fmt.Errorf("in-cluster on %s: %+v, want %d apps, Successful", r.name, item.Info, count)
			}
			return nil
		}
		return fmt.Errorf("no in-cluster entry on %s: %s", r.name, body)
	}
	// Each replica publishes the states of its share; any replica's API
	// answers them merged.
	waitFor(t, "the API to count every replica's apps of the cluster", func() error { return inClusterApps(replicas[2]) })

	for _, app := range apps {
		patch := client.MergeFrom(app.DeepCopy())
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: sha},
			InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
		if err := c.Patch(ctx, app, patch); err != nil {
			t.Fatal(err)
		}
	}
	type hooks struct{ migrate, smoke *batchv1.Job }
	jobs := map[string]hooks{}
	for _, app := range apps {
		dest := app.Spec.Destination.Namespace
		jobs[app.Name] = hooks{
			migrate: waitHookJob(t, c, dest, "migrate", "the migration of "+app.Name, func(j *batchv1.Job) bool { return j.Status.Succeeded > 0 }),
			smoke:   waitHookJob(t, c, dest, "smoke-test", "the Sync hook of "+app.Name, func(*batchv1.Job) bool { return true }),
		}
	}

	victim := replicas[0]
	for _, r := range replicas[1:] {
		if shares[r.name] > shares[victim.name] {
			victim = r
		}
	}
	survivors := slices.DeleteFunc(slices.Clone(replicas), func(r *replica) bool { return r == victim })
	victim.kill(t)
	killed := time.Now()
	waitFor(t, "the survivors to own every app", func() error { return allOwnedOnce(survivors) })
	took := time.Since(killed)
	t.Logf("the survivors took the %d apps of replica %s %v after it died", shares[victim.name], victim.name, took.Round(100*time.Millisecond))
	if limit := haLeaseDuration + 2*haRetryPeriod + takeoverSlack; took > limit {
		t.Errorf("the survivors took the dead replica's apps %v after it died, want within the lease duration (%v)", took.Round(100*time.Millisecond), limit)
	}

	waitFor(t, "the API to count the survivors' apps of the cluster", func() error { return inClusterApps(survivors[0]) })

	for _, app := range apps {
		smoke := jobs[app.Name].smoke.DeepCopy()
		patch := client.MergeFrom(smoke.DeepCopy())
		smoke.Spec.Suspend = new(bool)
		if err := c.Patch(ctx, smoke, patch); err != nil {
			t.Fatal(err)
		}
	}
	for _, app := range apps {
		waitFor(t, "the operation of "+app.Name+" to succeed", func() error {
			got := &v1alpha1.Application{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
				return err
			}
			if op := got.Status.OperationState; op == nil || op.Phase != v1alpha1.OperationSucceeded || got.Operation != nil {
				return fmt.Errorf("operation %+v, requested %+v", got.Status.OperationState, got.Operation)
			}
			if len(got.Status.History) != 1 || got.Status.History[0].Revision != sha {
				return fmt.Errorf("history %+v, want one sync of %s", got.Status.History, sha)
			}
			return nil
		})
		dest := app.Spec.Destination.Namespace
		for _, job := range []*batchv1.Job{jobs[app.Name].migrate, jobs[app.Name].smoke} {
			var now batchv1.Job
			if err := c.Get(ctx, client.ObjectKeyFromObject(job), &now); err != nil {
				t.Errorf("hook Job %s/%s after the sync: %v", dest, job.Name, err)
			} else if now.UID != job.UID {
				t.Errorf("hook Job %s/%s was created again after the takeover", dest, job.Name)
			}
		}
		var list batchv1.JobList
		if err := c.List(ctx, &list, client.InNamespace(dest)); err != nil || len(list.Items) != 2 {
			t.Errorf("Jobs in %s: %d (%v), want the two hooks", dest, len(list.Items), err)
		}
	}
	// Completed once: a second run would have written a second entry.
	time.Sleep(2 * haRetryPeriod)
	for _, app := range apps {
		got := &v1alpha1.Application{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
			t.Fatal(err)
		}
		if len(got.Status.History) != 1 {
			t.Errorf("app %s: %d history entries, want one", app.Name, len(got.Status.History))
		}
	}

	// A replica stopped as a rolling update stops it releases its Lease
	// once its workers have returned: the last one takes its apps at its
	// next listing rather than after the lease duration.
	memberLeases := func() int {
		var leases coordinationv1.LeaseList
		if err := c.List(ctx, &leases, client.InNamespace(ns), client.MatchingLabels{shard.MemberLabel: "true"}); err != nil {
			t.Fatal(err)
		}
		return len(leases.Items)
	}
	before := memberLeases()
	// The survivor that leads (one does, since the kill) stops; the last
	// takes over its apps and the leader Lease.
	leaving, last := survivors[0], survivors[1]
	waitFor(t, "one survivor to lead", func() error {
		if leaving.leads(t) == last.leads(t) {
			return fmt.Errorf("replica %s leads: %v, replica %s: %v", leaving.name, leaving.leads(t), last.name, last.leads(t))
		}
		return nil
	})
	if last.leads(t) {
		leaving, last = last, leaving
	}
	leaving.stop(t)
	stopped := time.Now()
	if after := memberLeases(); after != before-1 {
		t.Errorf("%d member Leases after replica %s stopped, want %d: it keeps its Lease", after, leaving.name, before-1)
	}
	waitFor(t, "the last replica to lead", func() error {
		if !last.leads(t) {
			return fmt.Errorf("replica %s does not lead", last.name)
		}
		return nil
	})
	// Left to expire, the leader Lease would take a lease duration.
	took = time.Since(stopped)
	t.Logf("replica %s led %v after replica %s stopped", last.name, took.Round(100*time.Millisecond), leaving.name)
	if took >= haLeaseDuration {
		t.Errorf("replica %s led %v after the leader stopped, want within the lease duration (%v): the leader Lease was not released", last.name, took.Round(100*time.Millisecond), haLeaseDuration)
	}
	waitFor(t, "the last replica to own every app", func() error { return allOwnedOnce([]*replica{last}) })
	t.Logf("replica %s took the apps of replica %s %v after it stopped", last.name, leaving.name, time.Since(stopped).Round(100*time.Millisecond))
}
