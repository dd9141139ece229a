package appops

import (
	"context"
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// newClient is a client of the test cluster for Skiff's kinds.
func newClient(t *testing.T) client.Client {
	t.Helper()
	return cluster.Client(t)
}

// createApp creates a valid app named name in ns and returns it as written.
func createApp(t *testing.T, c client.Client, ns, name string) *v1alpha1.Application {
	t.Helper()
	app := validApp()
	app.Name, app.Namespace = name, ns
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	return app
}

// A sync request writes the operation on the version read: a stale copy
// is ErrChanged, a set operation ErrOperationInProgress, and nothing is
// written either time.
func TestRequestSync(t *testing.T) {
	ctx := context.Background()
	c, ns := newClient(t), cluster.Namespace(t)
	stale := createApp(t, c, ns, "web")
	current, err := Get(ctx, c, client.ObjectKeyFromObject(stale))
	if err != nil {
		t.Fatal(err)
	}
	current.Labels = map[string]string{"team": "a"}
	if err := c.Update(ctx, current); err != nil {
		t.Fatal(err)
	}
	who := v1alpha1.OperationInitiator{Username: "alice"}
	if err := RequestSync(ctx, c, stale, &v1alpha1.SyncOperation{Revision: "v1"}, who); !errors.Is(err, ErrChanged) {
		t.Fatalf("a sync on a stale copy: %v, want ErrChanged", err)
	}
	if err := RequestSync(ctx, c, current, &v1alpha1.SyncOperation{Revision: "v2"}, who); err != nil {
		t.Fatal(err)
	}
	if current.Operation == nil || current.Operation.InitiatedBy.Username != "alice" {
		t.Errorf("the app as written has operation %+v", current.Operation)
	}
	again := current.DeepCopy()
	if err := RequestSync(ctx, c, again, &v1alpha1.SyncOperation{Revision: "v3"}, who); !errors.Is(err, ErrOperationInProgress) {
		t.Fatalf("a second sync: %v, want ErrOperationInProgress", err)
	}
	read, err := Get(ctx, c, client.ObjectKeyFromObject(current))
	if err != nil {
		t.Fatal(err)
	}
	if read.Operation == nil || read.Operation.Sync.Revision != "v2" {
		t.Errorf("operation %+v, want the one sync to v2", read.Operation)
	}
	if _, err := Get(ctx, c, client.ObjectKey{Namespace: ns, Name: "missing"}); !errors.Is(err, ErrNotFound) || err.Error() != "application missing not found" {
		t.Errorf("reading a missing app: %v, want ErrNotFound", err)
	}
}

// Terminate marks a running operation Terminating; without one it is
// ErrNoRunningOperation.
func TestTerminate(t *testing.T) {
	ctx := context.Background()
	c, ns := newClient(t), cluster.Namespace(t)
	app := createApp(t, c, ns, "web")
	key := client.ObjectKeyFromObject(app)
	if err := Terminate(ctx, c, key); !errors.Is(err, ErrNoRunningOperation) {
		t.Fatalf("terminating nothing: %v, want ErrNoRunningOperation", err)
	}
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}
	app.Operation = &op
	app.Status.OperationState = &v1alpha1.OperationState{Operation: op, Phase: v1alpha1.OperationRunning, StartedAt: metav1.Now()}
	if err := c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	if err := Terminate(ctx, c, key); err != nil {
		t.Fatal(err)
	}
	read, err := Get(ctx, c, key)
	if err != nil || read.Status.OperationState.Phase != v1alpha1.OperationTerminating {
		t.Fatalf("after terminate: %v %+v, want Terminating", err, read.Status.OperationState)
	}
}

// Delete sets the resources finalizer cascade asks for before deleting,
// keeps other finalizers, and takes an app already gone as deleted.
func TestDelete(t *testing.T) {
	ctx := context.Background()
	c, ns := newClient(t), cluster.Namespace(t)
	tests := map[string]struct {
		finalizers  []string
		cascade     bool
		propagation string
		want        []string
	}{
		"cascade in the background":          {finalizers: []string{"example.com/hold"}, cascade: true, propagation: "background", want: []string{"example.com/hold", v1alpha1.FinalizerResourcesBackground}},
		"no cascade drops the resources one": {finalizers: []string{"example.com/hold", v1alpha1.FinalizerResources}, want: []string{"example.com/hold"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := validApp()
			app.GenerateName, app.Name, app.Namespace, app.Finalizers = "web-", "", ns, tc.finalizers
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			if err := Delete(ctx, c, app, tc.cascade, tc.propagation); err != nil {
				t.Fatal(err)
			}
			read, err := Get(ctx, c, client.ObjectKeyFromObject(app))
			if err != nil {
				t.Fatal(err)
			}
			if read.DeletionTimestamp == nil || !slices.Equal(read.Finalizers, tc.want) {
				t.Errorf("deletion %v finalizers %v, want deleting with %v", read.DeletionTimestamp, read.Finalizers, tc.want)
			}
			read.Finalizers = nil // let it go
			if err := c.Update(ctx, read); err != nil {
				t.Fatal(err)
			}
			if err := Delete(ctx, c, read, false, ""); err != nil {
				t.Errorf("deleting an app already gone: %v", err)
			}
		})
	}
	stale := createApp(t, c, ns, "stale")
	fresh := stale.DeepCopy()
	fresh.Labels = map[string]string{"team": "a"}
	if err := c.Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, c, stale, true, ""); !errors.Is(err, ErrChanged) {
		t.Errorf("deleting from a stale copy: %v, want ErrChanged", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(stale), &v1alpha1.Application{}); apierrors.IsNotFound(err) {
		t.Error("the app was deleted from a stale copy")
	}
}

// Refresh sets the annotation even when the copy at hand already shows
// it: the controller may have removed it since.
func TestRefresh(t *testing.T) {
	ctx := context.Background()
	c, ns := newClient(t), cluster.Namespace(t)
	created := createApp(t, c, ns, "web")
	copyShowing := created.DeepCopy()
	copyShowing.Annotations = map[string]string{v1alpha1.AnnotationRefresh: v1alpha1.RefreshHard}
	if err := Refresh(ctx, c, copyShowing, v1alpha1.RefreshHard); err != nil {
		t.Fatal(err)
	}
	read, err := Get(ctx, c, client.ObjectKeyFromObject(created))
	if err != nil || read.Annotations[v1alpha1.AnnotationRefresh] != v1alpha1.RefreshHard {
		t.Fatalf("after refresh: %v, annotations %v", err, read.Annotations)
	}
	if err := Refresh(ctx, c, read, "soft"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a refresh of mode soft: %v, want ErrInvalid", err)
	}
	gone := validApp()
	gone.Name, gone.Namespace = "gone", ns
	if err := Refresh(ctx, c, gone, v1alpha1.RefreshNormal); !errors.Is(err, ErrNotFound) {
		t.Errorf("refreshing a missing app: %v, want ErrNotFound", err)
	}
}
