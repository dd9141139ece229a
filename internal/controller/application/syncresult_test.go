package application

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/testgit"
)

// The write that records a successful sync also carries the comparison with
// what the sync applied: the version of the Application that first says
// Succeeded already says Synced, with no second write needed to get there.
func TestSyncResultCarriesTheComparison(t *testing.T) {
	argocd, dest := cluster.Namespace(t), cluster.Namespace(t)
	c := startController(t, argocd)
	repo := testgit.New(t)
	repo.Commit(map[string]string{
		"app/a.yaml": strings.ReplaceAll(configMapYAML, "%s", "a"),
		"app/b.yaml": strings.ReplaceAll(configMapYAML, "%s", "b"),
	})
	app := newApp(argocd, "one-write", repo.URL(), "app", dest, nil)
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	app = waitApp(t, c, key, "OutOfSync before the sync", statusIs(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusMissing))

	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := wc.Watch(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(argocd),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: app.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	requestSync(t, c, app, v1alpha1.SyncOperation{})

	for ev := range w.ResultChan() {
		got, ok := ev.Object.(*v1alpha1.Application)
		if ev.Type != watch.Modified || !ok || got.Status.OperationState == nil || got.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
			continue
		}
		if got.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
			t.Errorf("the version recording the result says %s, want Synced", got.Status.Sync.Status)
		}
		for _, res := range got.Status.Resources {
			if res.Status != v1alpha1.SyncStatusCodeSynced {
				t.Errorf("resource %s/%s is %s in the result's version", res.Kind, res.Name, res.Status)
			}
		}
		return
	}
	t.Fatalf("no version of the Application recorded a successful sync: %v", ctx.Err())
}

// Whether a comparison's outcome is written, on plain data.
func TestStatusWriteNeeded(t *testing.T) {
	period := 3 * time.Minute
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { v := metav1.NewTime(now.Add(-d)); return &v }
	recordedAgo := func(d time.Duration) *v1alpha1.Application {
		app := &v1alpha1.Application{}
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
		app.Status.ReconciledAt, app.Status.ObservedAt = at(d), at(d)
		return app
	}
	newTimes := func(a *v1alpha1.Application) { a.Status.ReconciledAt, a.Status.ObservedAt = at(0), at(0) }
	cases := map[string]struct {
		orig   *v1alpha1.Application
		change func(*v1alpha1.Application)
		poll   bool
		want   bool
	}{
		"an event-driven comparison that found nothing new is not written": {
			orig: recordedAgo(time.Hour), change: newTimes, want: false},
		"a poll that found nothing new within a period of the last record is not written": {
			orig: recordedAgo(period * 9 / 10), change: newTimes, poll: true, want: false},
		"a poll that found nothing new a period after the last record is written": {
			orig: recordedAgo(period), change: newTimes, poll: true, want: true},
		"the first poll of a new app is written": {
			orig: &v1alpha1.Application{}, change: newTimes, poll: true, want: true},
		"a new sync status is written": {
			orig: recordedAgo(time.Second), change: func(a *v1alpha1.Application) {
				newTimes(a)
				a.Status.Sync.Status = v1alpha1.SyncStatusCodeOutOfSync
			}, want: true},
		"a requested operation is written": {
			orig: recordedAgo(time.Second), change: func(a *v1alpha1.Application) {
				a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
			}, want: true},
		"a removed refresh annotation is written": {
			orig: func() *v1alpha1.Application {
				a := recordedAgo(time.Second)
				a.Annotations = map[string]string{v1alpha1.AnnotationRefresh: "normal"}
				return a
			}(), change: func(a *v1alpha1.Application) { delete(a.Annotations, v1alpha1.AnnotationRefresh) }, poll: true, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			updated := tc.orig.DeepCopy()
			tc.change(updated)
			if got := statusWriteNeeded(tc.orig, updated, tc.poll, now, period); got != tc.want {
				t.Errorf("statusWriteNeeded = %v, want %v", got, tc.want)
			}
		})
	}
}

// After an operation's result, a comparison follows only when the result's
// write did not carry one that found the app Synced; requesting or starting
// an operation triggers none.
func TestPhaseChangeTriggersComparison(t *testing.T) {
	at := func(sec int64) *metav1.Time { v := metav1.Unix(sec, 0); return &v }
	running := func() *v1alpha1.Application {
		app := &v1alpha1.Application{}
		app.Status.ReconciledAt = at(1)
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeOutOfSync
		app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning}
		return app
	}
	finished := func() *v1alpha1.Application {
		app := running()
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
		app.Status.OperationState.Phase = v1alpha1.OperationSucceeded
		return app
	}
	cases := map[string]struct {
		before func() *v1alpha1.Application // the app before the update; running() when nil
		result func(*v1alpha1.Application)
		want   bool
	}{
		"a result without a comparison triggers one": {result: func(a *v1alpha1.Application) {
			a.Status.OperationState.Phase = v1alpha1.OperationSucceeded
		}, want: true},
		"a result carrying a Synced comparison does not": {result: func(a *v1alpha1.Application) {
			a.Status.OperationState.Phase = v1alpha1.OperationSucceeded
			a.Status.ReconciledAt, a.Status.Sync.Status = at(2), v1alpha1.SyncStatusCodeSynced
		}, want: false},
		"a result carrying an OutOfSync comparison does, for auto-sync": {result: func(a *v1alpha1.Application) {
			a.Status.OperationState.Phase = v1alpha1.OperationSucceeded
			a.Status.ReconciledAt = at(2)
		}, want: true},
		"a failed sync triggers one": {result: func(a *v1alpha1.Application) {
			a.Status.OperationState.Phase = v1alpha1.OperationFailed
		}, want: true},
		"a write that changes neither phase nor spec does not": {result: func(a *v1alpha1.Application) {
			a.Status.ReconciledAt = at(2)
		}, want: false},
		"a result that clears the operation and carries a Synced comparison does not": {result: func(a *v1alpha1.Application) {
			a.Operation = nil
			a.Status.OperationState.Phase = v1alpha1.OperationSucceeded
			a.Status.ReconciledAt, a.Status.Sync.Status = at(2), v1alpha1.SyncStatusCodeSynced
		}, want: false},
		"a result that clears the operation without a comparison triggers one": {result: func(a *v1alpha1.Application) {
			a.Operation = nil
			a.Status.OperationState.Phase = v1alpha1.OperationSucceeded
		}, want: true},
		"terminating an operation triggers one": {result: func(a *v1alpha1.Application) {
			a.Status.OperationState.Phase = v1alpha1.OperationTerminating
		}, want: true},
		"requesting the next operation does not": {before: finished, result: func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "b"}}
		}, want: false},
		"starting it does not": {before: finished, result: func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "b"}}
			a.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning}
		}, want: false},
		"an auto-sync requested and started in the comparison's write does not": {before: finished, result: func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "b"}}
			a.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning}
			a.Status.ReconciledAt, a.Status.Sync.Status = at(2), v1alpha1.SyncStatusCodeOutOfSync
		}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oldApp := running()
			if tc.before != nil {
				oldApp = tc.before()
			}
			newApp := oldApp.DeepCopy()
			tc.result(newApp)
			if got := (specChanged{}).Update(event.UpdateEvent{ObjectOld: oldApp, ObjectNew: newApp}); got != tc.want {
				t.Errorf("comparison triggered = %v, want %v", got, tc.want)
			}
		})
	}
}

// Event-driven comparisons wait for an operation only in its first
// seconds; an auto-sync this process requested waits for an operation
// worker however long the queue, and once a worker begins it, the grace
// counts from then.
func TestCompareDeferral(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	app := func(op bool, phase v1alpha1.OperationPhase, age time.Duration) *v1alpha1.Application {
		a := &v1alpha1.Application{}
		if op {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
		}
		if phase != "" {
			a.Status.OperationState = &v1alpha1.OperationState{Phase: phase, StartedAt: metav1.NewTime(now.Add(-age))}
		}
		return a
	}
	running := func(requested time.Duration) *v1alpha1.Application {
		return app(true, v1alpha1.OperationRunning, requested)
	}
	queued := ptr.To(time.Duration(-1))
	cases := map[string]struct {
		app     *v1alpha1.Application
		refresh bool
		begun   *time.Duration // ago; queued: requested, not begun; nil: not requested by this process
		want    time.Duration
	}{
		"an operation started a second ago":                          {app: running(time.Second), want: operationCompareDeferral},
		"an operation running for a minute":                          {app: running(time.Minute)},
		"no operation":                                               {app: app(false, "", 0)},
		"a finished operation":                                       {app: app(false, v1alpha1.OperationSucceeded, time.Second)},
		"an operation requested, not yet started":                    {app: app(true, "", 0)},
		"a terminating operation started a second ago":               {app: app(true, v1alpha1.OperationTerminating, time.Second), want: operationCompareDeferral},
		"a request a minute old, still queued, waits":                {app: running(time.Minute), begun: queued, want: operationCompareGrace},
		"a request a second old, still queued, waits the deferral":   {app: running(time.Second), begun: queued, want: operationCompareDeferral},
		"a request a minute old that a worker began a second ago":    {app: running(time.Minute), begun: ptr.To(time.Second), want: operationCompareDeferral},
		"a request a minute old that a worker began a minute ago":    {app: running(time.Minute), begun: ptr.To(time.Minute)},
		"a finished operation is not queued though recorded as such": {app: app(false, "", 0), begun: queued},
		"a refresh never waits, even for an operation just started":  {app: running(time.Second), refresh: true},
		"a refresh never waits for a queued request":                 {app: running(time.Minute), begun: queued, refresh: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var begun time.Time
			if tc.begun != nil && *tc.begun >= 0 {
				begun = now.Add(-*tc.begun)
			}
			if got := compareDeferral(tc.app, tc.refresh, begun, tc.begun != nil, now); got != tc.want {
				t.Errorf("compareDeferral = %s, want %s", got, tc.want)
			}
		})
	}
}

// The operation worker reads an Application uncached only while the cache
// is older than its own last write of it.
func TestCacheOlderThanOurWrite(t *testing.T) {
	r := &Reconciler{}
	key := client.ObjectKey{Namespace: "argocd", Name: "guestbook"}
	if r.ourWrites.CacheOlder(key, "10") {
		t.Error("without a write of ours the cache counts as current")
	}
	app := &v1alpha1.Application{}
	app.Namespace, app.Name, app.ResourceVersion = key.Namespace, key.Name, "20"
	r.wrote(app)
	if !r.ourWrites.CacheOlder(key, "19") {
		t.Error("a cached copy older than our write counts as current")
	}
	if r.ourWrites.CacheOlder(key, "20") {
		t.Error("a cached copy at our write counts as stale")
	}
	if r.ourWrites.Recorded(key) {
		t.Error("the record outlived the cache catching up")
	}
}

// The comparison after a sync takes, per object, the later of the cached
// copy and the one the sync wrote.
func TestNewerOfCachedAndWritten(t *testing.T) {
	at := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetResourceVersion(rv)
		return u
	}
	cases := map[string]struct {
		cached, written *unstructured.Unstructured
		want            string
	}{
		"the cache has not seen the write yet":         {cached: at("10"), written: at("12"), want: "12"},
		"the cache holds a later version (a status)":   {cached: at("15"), written: at("12"), want: "15"},
		"the cache holds the write":                    {cached: at("12"), written: at("12"), want: "12"},
		"an object the cache has not seen at all":      {written: at("12"), want: "12"},
		"an object the sync did not write":             {cached: at("10"), want: "10"},
		"opaque versions: the write wins unless equal": {cached: at("b"), written: at("a"), want: "a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := newer(tc.cached, tc.written); got.GetResourceVersion() != tc.want {
				t.Errorf("newer = %s, want %s", got.GetResourceVersion(), tc.want)
			}
		})
	}
}
