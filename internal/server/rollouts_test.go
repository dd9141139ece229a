package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

func (h *harness) createRollout(name string, annotations map[string]string) {
	h.t.Helper()
	labels := map[string]string{"app": name}
	ro := &v1alpha1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name, Annotations: annotations},
		Spec: v1alpha1.RolloutSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1"}}},
			},
			Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{Steps: []v1alpha1.CanaryStep{
				{SetWeight: ptr.To[int32](50)}, {Pause: &v1alpha1.RolloutPause{}},
			}}},
		},
	}
	if err := h.k8s.Create(context.Background(), ro); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) getRollout(name string) *v1alpha1.Rollout {
	h.t.Helper()
	ro := &v1alpha1.Rollout{}
	if err := h.k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, ro); err != nil {
		h.t.Fatal(err)
	}
	return ro
}

// The rollouts API: readonly users see Rollouts and may run nothing; a
// Rollout an Application manages is guarded by that Application's resource
// actions, as Argo CD guards it (action/argoproj.io/Rollout/abort on
// <project>/<app>); one no Application manages by Skiff's "rollouts"
// resource; the operations send the kubectl plugin's patches.
func TestRolloutsAPI(t *testing.T) {
	h := startServer(t)
	h.addUser("alice", "alice-password")
	h.addUser("bob", "bob-password")
	h.setRBAC(map[string]string{"policy.csv": "g, alice, role:readonly\ng, bob, role:readonly\n" +
		"p, bob, applications, action/argoproj.io/Rollout/abort, default/guestbook, allow\n"})
	h.createApp("guestbook", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "guestbook"})
	h.createRollout("standalone", nil)
	h.createRollout("tracked", map[string]string{clustercache.TrackingAnnotation: "guestbook:argoproj.io/Rollout:" + h.ns + "/tracked"})
	alice, bob := h.login("alice", "alice-password"), h.login("bob", "bob-password")
	admin := h.login("admin", h.password)
	base := "/api/v1/rollouts/" + h.ns + "/"

	r := h.do(http.MethodGet, "/api/v1/rollouts?namespace="+h.ns, alice, nil)
	var list struct{ Items []v1alpha1.Rollout }
	r.json(t, &list)
	if r.status != http.StatusOK || len(list.Items) != 2 {
		t.Fatalf("alice lists: %d, %d rollouts; want both", r.status, len(list.Items))
	}
	var detail rolloutDetail
	r = h.do(http.MethodGet, base+"tracked", alice, nil)
	r.json(t, &detail)
	if r.status != http.StatusOK || detail.Application != "guestbook" || detail.Rollout.Name != "tracked" || detail.Actions["abort"] {
		t.Fatalf("alice gets tracked: %d application %q actions %v", r.status, detail.Application, detail.Actions)
	}
	wantError(t, h.do(http.MethodPost, base+"tracked/abort", alice, nil), http.StatusForbidden)

	// bob may abort the guestbook app's Rollout, not the one no app manages.
	if r := h.do(http.MethodPost, base+"tracked/abort", bob, nil); r.status != http.StatusOK {
		t.Fatalf("bob aborts tracked: %d %s", r.status, r.body)
	}
	if !h.getRollout("tracked").Status.Abort {
		t.Error("status.abort not set by the abort")
	}
	wantError(t, h.do(http.MethodPost, base+"standalone/abort", bob, nil), http.StatusForbidden)
	wantError(t, h.do(http.MethodPost, base+"tracked/retry", bob, nil), http.StatusForbidden)

	// admin: every operation, with the plugin's patches.
	r = h.do(http.MethodGet, base+"standalone", admin, nil)
	detail = rolloutDetail{}
	r.json(t, &detail)
	if !detail.Actions["promote"] || !detail.Actions["set-image"] || !detail.Actions["undo"] {
		t.Errorf("admin's actions %v, want all", detail.Actions)
	}
	if r := h.do(http.MethodPost, base+"standalone/set-image", admin, map[string]any{"images": map[string]string{"app": "nginx:2"}}); r.status != http.StatusOK {
		t.Fatalf("set-image: %d %s", r.status, r.body)
	}
	if img := h.getRollout("standalone").Spec.Template.Spec.Containers[0].Image; img != "nginx:2" {
		t.Errorf("image %s after set-image, want nginx:2", img)
	}
	r = h.do(http.MethodPost, base+"standalone/set-image", admin, map[string]any{"images": map[string]string{"db": "pg"}})
	wantError(t, r, http.StatusBadRequest)
	wantBody(t, r, `rollout standalone has no container named \"db\"`)
	wantError(t, h.do(http.MethodPost, base+"standalone/set-image", admin, map[string]any{"images": map[string]string{"app": ""}}), http.StatusBadRequest)
	wantError(t, h.do(http.MethodPost, base+"standalone/set-image", admin, map[string]any{}), http.StatusBadRequest)
	if r := h.do(http.MethodPost, base+"standalone/promote", admin, nil); r.status != http.StatusOK {
		t.Fatalf("promote: %d %s", r.status, r.body)
	}
	if i := h.getRollout("standalone").Status.CurrentStepIndex; i == nil || *i != 1 {
		t.Errorf("currentStepIndex %v after promote, want 1 (the next step)", i)
	}
	if r := h.do(http.MethodPost, base+"standalone/pause", admin, nil); r.status != http.StatusOK || !h.getRollout("standalone").Spec.Paused {
		t.Errorf("pause: %d, spec.paused %v", r.status, h.getRollout("standalone").Spec.Paused)
	}
	if r := h.do(http.MethodPost, base+"standalone/restart", admin, nil); r.status != http.StatusOK || h.getRollout("standalone").Spec.RestartAt == nil {
		t.Errorf("restart: %d %s, restartAt %v", r.status, r.body, h.getRollout("standalone").Spec.RestartAt)
	}

	// undo: without ReplicaSets a 400 that says so; with them the revision
	// before the newest, and nothing (with the reason) when it is current.
	r = h.do(http.MethodPost, base+"standalone/undo", admin, nil)
	wantError(t, r, http.StatusBadRequest)
	wantBody(t, r, "rollout standalone has no previous revision")
	wantError(t, h.do(http.MethodPost, base+"standalone/undo", admin, []byte(`{"toRevision": "one"}`)), http.StatusBadRequest)
	ro := h.getRollout("standalone")
	first := ro.Spec.Template.DeepCopy()
	first.Spec.Containers[0].Image = "nginx:1"
	h.createReplicaSet(ro, "standalone-1", *first, "1")
	h.createReplicaSet(ro, "standalone-2", ro.Spec.Template, "2")
	var undone rolloutops.Result
	r = h.do(http.MethodPost, base+"standalone/undo", admin, map[string]any{})
	r.json(t, &undone)
	if r.status != http.StatusOK || undone.Skipped != "" || undone.Rollout.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("undo: %d %s", r.status, r.body)
	}
	if img := h.getRollout("standalone").Spec.Template.Spec.Containers[0].Image; img != "nginx:1" {
		t.Errorf("image %s after undo, want revision 1's nginx:1", img)
	}
	undone = rolloutops.Result{}
	r = h.do(http.MethodPost, base+"standalone/undo", admin, map[string]any{"toRevision": 1})
	r.json(t, &undone)
	if r.status != http.StatusOK || undone.Skipped != "skipped rollback (current template already matches revision 1)" {
		t.Errorf("undo to the current revision: %d %s", r.status, r.body)
	}
	r = h.do(http.MethodPost, base+"standalone/undo", admin, map[string]any{"toRevision": 9})
	wantError(t, r, http.StatusBadRequest)
	wantBody(t, r, "rollout standalone has no revision 9")
	wantError(t, h.do(http.MethodPost, base+"tracked/undo", bob, nil), http.StatusForbidden)

	wantError(t, h.do(http.MethodPost, base+"standalone/explode", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, base+"missing", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, base+"tracked", "", nil), http.StatusUnauthorized)
}

// createReplicaSet creates a ReplicaSet of template at revision that ro
// controls, as the controller would (no controller runs here).
func (h *harness) createReplicaSet(ro *v1alpha1.Rollout, name string, template corev1.PodTemplateSpec, revision string) {
	h.t.Helper()
	template = *template.DeepCopy()
	hash := rollout.PodTemplateHash(&template, nil)
	template.Labels[rollout.PodTemplateHashLabel] = hash
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name, Labels: template.Labels,
			Annotations:     map[string]string{v1alpha1.AnnotationRolloutRevision: revision},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ro, v1alpha1.GroupVersion.WithKind("Rollout"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: template.Labels}, Template: template},
	}
	if err := h.k8s.Create(context.Background(), rs); err != nil {
		h.t.Fatal(err)
	}
}

// wantBody fails unless the body of r holds want; no 4xx body names a
// flag of the CLI.
func wantBody(t *testing.T, r response, want string) {
	t.Helper()
	if !strings.Contains(string(r.body), want) || strings.Contains(string(r.body), "--") {
		t.Errorf("body %s, want %s and no CLI flag", r.body, want)
	}
}

// Each kind of error of the operations packages has its status; the others
// are the server's own.
func TestOpStatus(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"a missing rollout is a 404":           {err: fmt.Errorf("reading: %w", rolloutops.ErrNotFound), want: http.StatusNotFound},
		"a request that does not fit is a 400": {err: fmt.Errorf("set image: %w", rolloutops.ErrInvalid), want: http.StatusBadRequest},
		"a rollout changed meanwhile is a 409": {err: fmt.Errorf("patching: %w", rolloutops.ErrConflict), want: http.StatusConflict},
		"a sync while another runs is a 409":   {err: appops.ErrOperationInProgress, want: http.StatusConflict},
		"a rollback under auto-sync is a 400":  {err: appops.ErrAutomatedRollback, want: http.StatusBadRequest},
		"another error is the server's":        {err: errors.New("connection refused")},
		"no error has no status":               {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := opStatus(tc.err); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}
