package applicationset

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// Under the default policy (sync) the set creates its apps, owned by it,
// updates what it owns of them (keeping preserved and ignored fields) and
// deletes the apps no element gives any more.
func TestCreateUpdateDelete(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := startController(t, ns)
	set := readSet(t, "list.yaml", ns)
	set.Spec.PreservedFields = &v1alpha1.ApplicationPreservedFields{Annotations: []string{"owner"}}
	set.Spec.IgnoreApplicationDifferences = []v1alpha1.ApplicationSetResourceIgnoreDifferences{{JSONPointers: []string{"/spec/destination/namespace"}}}
	apps := createSet(t, c, set, 2)
	one := apps["one"]
	if ref := metav1.GetControllerOf(&one); ref == nil || ref.Kind != "ApplicationSet" || ref.Name != set.Name || ref.UID != set.UID {
		t.Errorf("app one's controller %+v, want the set", ref)
	}
	if one.Spec.Source.Path != "apps/one" || one.Labels["app"] != "one" || !one.HasFinalizer(v1alpha1.FinalizerResources) {
		t.Errorf("app one: path %q labels %v finalizers %v", one.Spec.Source.Path, one.Labels, one.Finalizers)
	}
	got := waitSet(t, c, set, "up to date with two resources", func(s *v1alpha1.ApplicationSet) bool {
		return upToDate(s) && s.Status.ResourcesCount == 2
	})
	if r := got.Status.Resources; r[0].Name != "one" || r[0].Kind != "Application" || r[1].Name != "two" {
		t.Errorf("status.resources %+v", r)
	}

	// By hand: an annotation the set preserves, one it does not, and the
	// destination namespace it ignores.
	patch := client.MergeFrom(one.DeepCopy())
	one.Annotations = map[string]string{"owner": "me", "note": "x"}
	one.Spec.Destination.Namespace = "moved"
	if err := c.Patch(ctx, &one, patch); err != nil {
		t.Fatal(err)
	}
	update(t, c, set, func(s *v1alpha1.ApplicationSet) { s.Spec.Template.Spec.Source.TargetRevision = "v2" })
	apps = waitApps(t, c, ns, "the new targetRevision", func(a map[string]v1alpha1.Application) bool {
		return a["one"].Spec.Source.TargetRevision == "v2" && a["two"].Spec.Source.TargetRevision == "v2"
	})
	one = apps["one"]
	if one.Annotations["owner"] != "me" || one.Annotations["note"] != "" || one.Spec.Destination.Namespace != "moved" {
		t.Errorf("annotations %v, namespace %q: want owner kept, note dropped and the ignored namespace kept", one.Annotations, one.Spec.Destination.Namespace)
	}

	update(t, c, set, func(s *v1alpha1.ApplicationSet) { elements(t, s, "name: one") })
	waitApps(t, c, ns, "app two deleted", func(a map[string]v1alpha1.Application) bool { return deleted(a, "two") && !deleted(a, "one") })
	waitSet(t, c, set, "one resource", func(s *v1alpha1.ApplicationSet) bool { return s.Status.ResourcesCount == 1 })

	// A refresh asked (a webhook's, the CLI's) is a pass, and the
	// annotation goes.
	update(t, c, set, func(s *v1alpha1.ApplicationSet) {
		s.Annotations = map[string]string{appsetops.RefreshAnnotation: "true"}
		elements(t, s, "name: one", "name: two")
	})
	waitSet(t, c, set, "the refresh annotation removed", func(s *v1alpha1.ApplicationSet) bool {
		_, asked := s.Annotations[appsetops.RefreshAnnotation]
		return !asked && s.Status.ResourcesCount == 2
	})
}

// deleted reports whether the app called name is gone or going (its
// resources finalizer waits for an Application controller these tests
// mostly do not run).
func deleted(apps map[string]v1alpha1.Application, name string) bool {
	app, ok := apps[name]
	return !ok || app.DeletionTimestamp != nil
}

// The policies: create-only neither updates nor deletes, create-update
// does not delete, create-delete does not update; the server's policy
// wins over the set's when overrides are off.
func TestPolicies(t *testing.T) {
	createOnly, createDelete := v1alpha1.ApplicationsSyncPolicyCreateOnly, v1alpha1.ApplicationsSyncPolicyCreateDelete
	createUpdate := v1alpha1.ApplicationsSyncPolicyCreateUpdate
	for name, tc := range map[string]struct {
		set                     *v1alpha1.ApplicationsSyncPolicy
		server                  v1alpha1.ApplicationsSyncPolicy
		override                bool
		wantUpdate, wantDeleted bool
	}{
		"create-only keeps apps as they are":           {set: &createOnly, override: true},
		"create-update updates and keeps":              {set: &createUpdate, override: true, wantUpdate: true},
		"create-delete deletes and does not update":    {set: &createDelete, override: true, wantDeleted: true},
		"the server's create-only wins over the set's": {set: ptr.To(v1alpha1.ApplicationsSyncPolicySync), server: createOnly},
	} {
		t.Run(name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			c := startController(t, ns, func(r *Reconciler) { r.Policy, r.PolicyOverride = tc.server, tc.override })
			set := readSet(t, "list.yaml", ns)
			set.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{ApplicationsSync: tc.set}
			createSet(t, c, set, 2)
			// two leaves, three comes, and the template changes; the status
			// naming three is written once that pass made its changes.
			update(t, c, set, func(s *v1alpha1.ApplicationSet) {
				elements(t, s, "name: one", "name: three")
				s.Spec.Template.Spec.Source.TargetRevision = "v2"
			})
			waitSet(t, c, set, "the change handled", func(s *v1alpha1.ApplicationSet) bool {
				return upToDate(s) && slices.ContainsFunc(s.Status.Resources, func(r v1alpha1.ResourceStatus) bool { return r.Name == "three" })
			})
			apps := waitApps(t, c, ns, "apps read", func(map[string]v1alpha1.Application) bool { return true })
			if got := deleted(apps, "two"); got != tc.wantDeleted {
				t.Errorf("app two deleted %v, want %v", got, tc.wantDeleted)
			}
			if got := apps["one"].Spec.Source.TargetRevision == "v2"; got != tc.wantUpdate {
				t.Errorf("app one updated %v, want %v", got, tc.wantUpdate)
			}
		})
	}
}

// A template that renders an invalid app or repeats a name, and a failing
// generator, set ErrorOccurred with the reason and change no app.
func TestInvalidOutputChangesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	c := startController(t, ns)
	set := readSet(t, "list.yaml", ns)
	createSet(t, c, set, 2)
	for name, tc := range map[string]struct {
		elems      []string
		reason     string
		message    string
		paramsTrue bool
	}{
		"a repeated name":        {elems: []string{"name: one", "name: one"}, reason: ReasonValidationError, message: "duplicate name: one", paramsTrue: true},
		"a name the API refuses": {elems: []string{"name: one", "name: Not_A_Name"}, reason: ReasonValidationError, message: "Not_A_Name", paramsTrue: true},
		"an unknown project":     {elems: []string{"name: one"}, reason: ReasonValidationError, message: "project nope which does not exist", paramsTrue: true},
		"a generator that fails": {elems: []string{"name: one", "fail: git is down"}, reason: ReasonGenerationError, message: "git is down"},
	} {
		t.Run(name, func(t *testing.T) {
			update(t, c, set, func(s *v1alpha1.ApplicationSet) {
				elements(t, s, tc.elems...)
				s.Spec.Template.Spec.Source.TargetRevision = "changed"
				s.Spec.Template.Spec.Project = "default"
				if strings.Contains(name, "project") {
					s.Spec.Template.Spec.Project = "nope"
				}
			})
			got := waitSet(t, c, set, "the error condition", func(s *v1alpha1.ApplicationSet) bool {
				e := condition(s, v1alpha1.ApplicationSetConditionErrorOccurred)
				return e.Status == "True" && e.Reason == tc.reason && strings.Contains(e.Message, tc.message)
			})
			if p := condition(got, v1alpha1.ApplicationSetConditionParametersGenerated); (p.Status == "True") != tc.paramsTrue {
				t.Errorf("ParametersGenerated %+v, want True %v", p, tc.paramsTrue)
			}
			if u := condition(got, v1alpha1.ApplicationSetConditionResourcesUpToDate); u.Status != "False" || u.Reason != tc.reason {
				t.Errorf("ResourcesUpToDate %+v", u)
			}
			apps := waitApps(t, c, ns, "apps read", func(map[string]v1alpha1.Application) bool { return true })
			if len(apps) != 2 || apps["one"].Spec.Source.TargetRevision != "main" || apps["two"].Spec.Source.TargetRevision != "main" {
				t.Errorf("apps %v changed: one at %q", names(apps), apps["one"].Spec.Source.TargetRevision)
			}
		})
	}
}

// An app of the same name that another set or nobody controls is left as
// it is, with a condition; the set's other apps are made.
func TestNoTakeover(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := startController(t, ns)
	mine := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: ns}, Spec: v1alpha1.ApplicationSpec{
		Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://example.com/mine.git"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"}}}
	if err := c.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	set := readSet(t, "list.yaml", ns)
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	got := waitSet(t, c, set, "the conflict reported", func(s *v1alpha1.ApplicationSet) bool {
		return strings.Contains(condition(s, v1alpha1.ApplicationSetConditionErrorOccurred).Message, "application one already exists and no ApplicationSet manages it")
	})
	if e := condition(got, v1alpha1.ApplicationSetConditionErrorOccurred); e.Reason != ReasonCreateApplicationError {
		t.Errorf("reason %q", e.Reason)
	}
	other := readSet(t, "list.yaml", ns)
	other.Name = "other"
	elements(t, other, "name: two")
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	waitSet(t, c, other, "the other set's conflict reported", func(s *v1alpha1.ApplicationSet) bool {
		return strings.Contains(condition(s, v1alpha1.ApplicationSetConditionErrorOccurred).Message, "belongs to ApplicationSet "+set.Name)
	})
	apps := waitApps(t, c, ns, "apps read", func(map[string]v1alpha1.Application) bool { return true })
	if one := apps["one"]; metav1.GetControllerOf(&one) != nil || one.Spec.Source.RepoURL != "https://example.com/mine.git" {
		t.Errorf("the unowned app was taken over: %+v %+v", one.OwnerReferences, one.Spec.Source)
	}
	if two := apps["two"]; controllerSet(&two) != set.Name {
		t.Errorf("app two's controller %q, want %s", controllerSet(&two), set.Name)
	}
}

// Deleting the set deletes its apps (owner references, the API server's
// garbage collector); under create-only with the set's finalizer, they
// stay, released.
func TestDeletingTheSet(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := startController(t, ns)
	set := readSet(t, "list.yaml", ns)
	createSet(t, c, set, 2)
	// The apps' resources finalizer would wait for an Application
	// controller, which this test does not run.
	for _, name := range []string{"one", "two"} {
		app := &v1alpha1.Application{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(app.DeepCopy())
		app.Finalizers = nil
		if err := c.Patch(ctx, app, patch); err != nil {
			t.Fatal(err)
		}
	}
	update(t, c, set, func(s *v1alpha1.ApplicationSet) {
		s.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{PreserveResourcesOnDeletion: true}
	})
	if err := c.Delete(ctx, set); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the set deleted", testcluster.Gone(c, set), testwait.Timeout(60*time.Second))
	waitApps(t, c, ns, "its apps deleted", func(a map[string]v1alpha1.Application) bool { return len(a) == 0 })

	kept := readSet(t, "list.yaml", ns)
	kept.Name = "kept"
	kept.Finalizers = []string{v1alpha1.FinalizerResources}
	kept.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{PreserveResourcesOnDeletion: true, ApplicationsSync: ptr.To(v1alpha1.ApplicationsSyncPolicyCreateOnly)}
	createSet(t, c, kept, 2)
	if err := c.Delete(ctx, kept); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the set deleted", testcluster.Gone(c, kept), testwait.Timeout(60*time.Second))
	time.Sleep(2 * time.Second) // the garbage collector's turn
	apps := waitApps(t, c, ns, "apps read", func(map[string]v1alpha1.Application) bool { return true })
	if len(apps) != 2 {
		t.Fatalf("apps %v after deleting a create-only set, want both kept", names(apps))
	}
	for _, app := range apps {
		if len(app.OwnerReferences) != 0 {
			t.Errorf("app %s still refers to the set: %+v", app.Name, app.OwnerReferences)
		}
	}
}

// A cluster Secret added passes every set again: a set over the clusters
// gets the new cluster's app without a change of its own.
func TestClusterChangesPassTheSets(t *testing.T) {
	ns := cluster.Namespace(t)
	registry := clusters.NewStatic()
	perCluster := func(_ context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
		var apps []v1alpha1.Application
		for _, cl := range registry.List() {
			app := v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "c-" + cl.Name}, Spec: *set.Spec.Template.Spec.DeepCopy()}
			app.Spec.Destination.Server = cl.Server
			apps = append(apps, app)
		}
		return apps, nil
	}
	c := startController(t, ns, func(r *Reconciler) { r.Generate, r.Clusters = perCluster, registry })
	createSet(t, c, readSet(t, "list.yaml", ns), 1)
	registry.Set(clusters.Cluster{Name: "east", Server: "https://east.example.com"})
	apps := waitApps(t, c, ns, "the new cluster's app", func(a map[string]v1alpha1.Application) bool { return len(a) == 2 })
	if east := apps["c-east"]; east.Spec.Destination.Server != "https://east.example.com" {
		t.Errorf("c-east deploys to %q", east.Spec.Destination.Server)
	}
}
