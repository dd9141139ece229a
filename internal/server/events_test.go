package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// createEvent records an Event about obj in ns at the given time.
func (h *harness) createEvent(name string, obj corev1.ObjectReference, at time.Time) {
	h.t.Helper()
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: h.ns, Name: name},
		InvolvedObject: obj,
		Reason:         name,
		Message:        "about " + obj.Name,
		Type:           corev1.EventTypeNormal,
		FirstTimestamp: metav1.NewTime(at),
		LastTimestamp:  metav1.NewTime(at),
		Source:         corev1.EventSource{Component: "test"},
	}
	if err := h.k8s.Create(context.Background(), e); err != nil {
		h.t.Fatal(err)
	}
}

// The events of an app and of one of its resources, oldest first; other
// apps' and other objects' events stay out, and a resource outside the app
// is 404.
func TestEvents(t *testing.T) {
	h := startFullServer(t)
	h.addUser("alice", "alice-password")
	h.setRBAC(map[string]string{"policy.csv": "p, alice, applications, get, default/other, allow\n"})
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "settings"}}
	outside := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "outside"}}
	for _, obj := range []*corev1.ConfigMap{cm, outside} {
		if err := h.k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	src := v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "shop"}
	h.createApp("shop", "default", nil, src)
	h.createApp("other", "default", nil, src)
	h.setResources("shop", v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: h.ns, Name: "settings"})
	appRef := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application", Namespace: h.ns, Name: name}
	}
	cmRef := func(c *corev1.ConfigMap) corev1.ObjectReference {
		return corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: h.ns, Name: c.Name, UID: c.UID}
	}
	now := time.Now()
	h.createEvent("synced", appRef("shop"), now)
	h.createEvent("created", appRef("shop"), now.Add(-time.Hour)) // created later, happened earlier
	h.createEvent("other-synced", appRef("other"), now)
	h.createEvent("cm-updated", cmRef(cm), now)
	h.createEvent("outside-updated", cmRef(outside), now)
	admin, alice := h.login("admin", h.password), h.login("alice", "alice-password")

	reasons := func(path string) []string {
		t.Helper()
		r := h.do(http.MethodGet, path, admin, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var list struct{ Items []corev1.Event }
		r.json(t, &list)
		var out []string
		for _, e := range list.Items {
			out = append(out, e.Reason)
		}
		return out
	}
	if got := reasons("/api/v1/applications/shop/events"); len(got) != 2 || got[0] != "created" || got[1] != "synced" {
		t.Errorf("app events %v, want created then synced", got)
	}
	base := "/api/v1/applications/shop/events?resourceNamespace=" + h.ns + "&resourceName="
	if got := reasons(base + "settings&resourceUID=" + string(cm.UID)); len(got) != 1 || got[0] != "cm-updated" {
		t.Errorf("resource events %v, want cm-updated", got)
	}
	if got := reasons(base + "settings"); len(got) != 1 {
		t.Errorf("resource events without uid %v, want cm-updated", got)
	}
	wantError(t, h.do(http.MethodGet, base+"outside", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, base+"settings&resourceUID=not-its-uid", admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/shop/events?resourceUID=x", admin, nil), http.StatusBadRequest)
	wantError(t, h.do(http.MethodGet, "/api/v1/applications/shop/events", alice, nil), http.StatusForbidden)
}
