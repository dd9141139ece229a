package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/resourceactions"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// actionsPath is the path of the resource actions of an object of app shop.
func actionsPath(suffix, group, kind, ns, name string) string {
	q := url.Values{"group": {group}, "kind": {kind}, "namespace": {ns}, "resourceName": {name}}
	return "/api/v1/applications/shop/resource/actions" + suffix + "?" + q.Encode()
}

// Resource actions through the API, on a real control plane: the actions
// of a Deployment as Argo CD lists them; a user without the grant is
// refused and nothing changes; restart (Argo CD's first form) stamps the
// pod template and the Deployment controller starts a new ReplicaSet; scale
// (the second form, with a parameter) sets replicas; a CronJob's
// create-job creates its Job; a Rollout's abort and retry write the status
// the kubectl plugin writes; objects outside the app are 404; each action
// leaves an Event on the app.
func TestResourceActionsAPI(t *testing.T) {
	h := startFullServer(t, func(s *Server) { s.Now = func() time.Time { return time.Now().Truncate(time.Second) } })
	h.addUser("alice", "alice-password")
	h.addUser("bob", "bob-password")
	h.setRBAC(map[string]string{"policy.csv": "g, alice, role:readonly\ng, bob, role:readonly\n" +
		"p, bob, applications, action/apps/Deployment/*, default/shop, allow\n"})
	ctx := context.Background()
	deploy, cron := &appsv1.Deployment{}, &batchv1.CronJob{}
	testcluster.ReadYAML(t, "testdata/tree-deployment.yaml", deploy, h.ns)
	testcluster.ReadYAML(t, "testdata/actions-cronjob.yaml", cron, h.ns)
	for _, obj := range []client.Object{deploy, cron} {
		if err := h.k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	h.createRollout("canary", nil)
	ro := h.getRollout("canary")
	ro.Status.CurrentPodHash, ro.Status.StableRS = "new", "old" // an update under way
	if err := h.k8s.Status().Update(ctx, ro); err != nil {
		t.Fatal(err)
	}
	h.createApp("shop", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "shop"})
	h.setResources("shop",
		v1alpha1.ResourceStatus{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: h.ns, Name: "web"},
		v1alpha1.ResourceStatus{Group: "batch", Version: "v1", Kind: "CronJob", Namespace: h.ns, Name: "report"},
		v1alpha1.ResourceStatus{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout", Namespace: h.ns, Name: "canary"})
	admin, alice, bob := h.login("admin", h.password), h.login("alice", "alice-password"), h.login("bob", "bob-password")
	web := func(suffix string) string { return actionsPath(suffix, "apps", "Deployment", h.ns, "web") }

	var list struct{ Actions []resourceactions.Action }
	r := h.do(http.MethodGet, web(""), alice, nil)
	r.json(t, &list)
	if r.status != http.StatusOK || fmt.Sprint(list.Actions) != "[{pause [] false  } {restart [] false  } {resume [] true  } {scale [{replicas  number 1}] false  }]" {
		t.Fatalf("alice lists the Deployment's actions: %d %v", r.status, list.Actions)
	}

	// alice may read but run nothing; nothing changes.
	r = h.do(http.MethodPost, web(""), alice, "restart")
	wantError(t, r, http.StatusForbidden)
	wantBody(t, r, "action/apps/Deployment/restart")
	wantError(t, h.do(http.MethodPost, web("/v2"), alice, map[string]any{"action": "restart"}), http.StatusForbidden)
	current := &appsv1.Deployment{}
	if err := h.k8s.Get(ctx, client.ObjectKeyFromObject(deploy), current); err != nil {
		t.Fatal(err)
	}
	if _, stamped := current.Spec.Template.Annotations[resourceactions.RestartedAtAnnotation]; stamped {
		t.Fatal("alice's refused restart stamped the pod template")
	}

	// bob restarts in Argo CD's first form: a new ReplicaSet follows.
	firstRS := h.waitReplicaSets(deploy, 1)
	if r := h.do(http.MethodPost, web(""), bob, "restart"); r.status != http.StatusOK || string(r.body) != "{}\n" {
		t.Fatalf("bob restarts: %d %s", r.status, r.body)
	}
	if err := h.k8s.Get(ctx, client.ObjectKeyFromObject(deploy), current); err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, current.Spec.Template.Annotations[resourceactions.RestartedAtAnnotation])
	if err != nil || time.Since(at) > time.Minute {
		t.Fatalf("restartedAt %q (%v), want the time of the restart", current.Spec.Template.Annotations[resourceactions.RestartedAtAnnotation], err)
	}
	if rss := h.waitReplicaSets(deploy, 2); rss[0] == firstRS[0] && rss[1] == firstRS[0] {
		t.Errorf("ReplicaSets %v after the restart, want a new one beside %v", rss, firstRS)
	}

	// Scale in the second form, with its parameter; a bad one is a 400.
	r = h.do(http.MethodPost, "/api/v1/applications/shop/resource/actions/v2", admin, map[string]any{
		"name": "shop", "namespace": h.ns, "resourceName": "web", "group": "apps", "version": "v1", "kind": "Deployment",
		"action": "scale", "resourceActionParameters": []map[string]string{{"name": "replicas", "value": "3"}}})
	if r.status != http.StatusOK {
		t.Fatalf("scale: %d %s", r.status, r.body)
	}
	if err := h.k8s.Get(ctx, client.ObjectKeyFromObject(deploy), current); err != nil || *current.Spec.Replicas != 3 {
		t.Fatalf("replicas %d (%v) after scale, want 3", *current.Spec.Replicas, err)
	}
	wantError(t, h.do(http.MethodPost, web("/v2"), admin, map[string]any{"action": "scale",
		"resourceActionParameters": []map[string]string{{"name": "replicas", "value": "many"}}}), http.StatusBadRequest)
	wantError(t, h.do(http.MethodPost, web(""), admin, "resume"), http.StatusConflict) // not paused
	wantError(t, h.do(http.MethodPost, web(""), admin, "explode"), http.StatusBadRequest)

	// create-job on the CronJob; bob's grant is for Deployments only.
	report := actionsPath("", "batch", "CronJob", h.ns, "report")
	wantError(t, h.do(http.MethodPost, report, bob, "create-job"), http.StatusForbidden)
	if r := h.do(http.MethodPost, report, admin, "create-job"); r.status != http.StatusOK {
		t.Fatalf("create-job: %d %s", r.status, r.body)
	}
	var jobs batchv1.JobList
	if err := h.k8s.List(ctx, &jobs, client.InNamespace(h.ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || !strings.HasPrefix(jobs.Items[0].Name, "report-") || jobs.Items[0].Labels["team"] != "data" ||
		jobs.Items[0].Annotations[resourceactions.InstantiateAnnotation] != "manual" || string(jobs.Items[0].OwnerReferences[0].UID) != h.getCronJobUID(cron) {
		t.Fatalf("jobs after create-job: %+v", jobs.Items)
	}

	// The Rollout's abort and retry write the plugin's status.abort.
	canary := actionsPath("", "argoproj.io", "Rollout", h.ns, "canary")
	if r := h.do(http.MethodPost, canary, admin, "abort"); r.status != http.StatusOK {
		t.Fatalf("abort: %d %s", r.status, r.body)
	}
	if got := h.getRollout("canary").Status; !got.Abort || got.CurrentPodHash != "new" {
		t.Fatalf("status after abort %+v, want abort and the rest kept", got)
	}
	wantError(t, h.do(http.MethodPost, canary, admin, "abort"), http.StatusConflict) // aborted already
	if r := h.do(http.MethodPost, canary, admin, "retry"); r.status != http.StatusOK {
		t.Fatalf("retry: %d %s", r.status, r.body)
	}
	if h.getRollout("canary").Status.Abort {
		t.Fatal("status.abort still set after retry")
	}

	// Only objects of the app's tree, of an app that exists.
	wantError(t, h.do(http.MethodGet, actionsPath("", "apps", "Deployment", h.ns, "elsewhere"), admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodPost, actionsPath("", "apps", "Deployment", "other-ns", "web"), admin, "restart"), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, strings.Replace(web(""), "/shop/", "/missing/", 1), admin, nil), http.StatusNotFound)
	wantError(t, h.do(http.MethodGet, actionsPath("", "apps", "Deployment", h.ns, ""), admin, nil), http.StatusBadRequest)

	var events corev1.EventList
	if err := h.k8s.List(ctx, &events, client.InNamespace(h.ns)); err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, e := range events.Items {
		if e.Reason == EventReasonResourceActionRan && e.InvolvedObject.Kind == "Application" && e.InvolvedObject.Name == "shop" {
			ran = append(ran, e.Message)
		}
	}
	want := []string{"bob ran action restart on apps/Deployment " + h.ns + "/web", "admin ran action scale on apps/Deployment " + h.ns + "/web"}
	for _, w := range want {
		if !strings.Contains(strings.Join(ran, "\n"), w) {
			t.Errorf("events %q, want one %q", ran, w)
		}
	}
	if len(ran) != 5 {
		t.Errorf("%d action events %q, want 5 (restart, scale, create-job, abort, retry)", len(ran), ran)
	}
}

// waitReplicaSets waits for the Deployment to own n ReplicaSets and
// returns their names.
func (h *harness) waitReplicaSets(d *appsv1.Deployment, n int) []string {
	h.t.Helper()
	var names []string
	testwait.Eventually(h.t, fmt.Sprintf("%d ReplicaSets of %s", n, d.Name), func() error {
		var list appsv1.ReplicaSetList
		if err := h.k8s.List(context.Background(), &list, client.InNamespace(h.ns), client.MatchingLabels{"app": d.Name}); err != nil {
			return err
		}
		names = names[:0]
		for _, rs := range list.Items {
			names = append(names, rs.Name)
		}
		if len(names) != n {
			return fmt.Errorf("ReplicaSets %v", names)
		}
		return nil
	}, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
	return names
}

func (h *harness) getCronJobUID(cj *batchv1.CronJob) string {
	h.t.Helper()
	got := &batchv1.CronJob{}
	if err := h.k8s.Get(context.Background(), client.ObjectKeyFromObject(cj), got); err != nil {
		h.t.Fatal(err)
	}
	return string(got.UID)
}

// luaTouch is argocd-cm's custom action set of ConfigMaps in Lua: touch
// labels the ConfigMap with its parameter.
var luaTouch = resourceactions.LuaActions{Scripts: func(gk schema.GroupKind) (resourceactions.Scripts, bool) {
	return resourceactions.Scripts{
		Discovery: `return {touch = {displayName = "Touch", params = {{name = "by"}}}}`,
		Actions: map[string]string{"touch": `obj.metadata.labels = obj.metadata.labels or {}
obj.metadata.labels["touched"] = actionParams["by"]
return obj`},
	}, gk == schema.GroupKind{Kind: "ConfigMap"}
}}

// An action defined in Lua plugs into the API without changing it: listed,
// run with its parameter, and guarded by action//ConfigMap/touch (the
// core group is empty, as in Argo CD).
func TestLuaResourceActionsAPI(t *testing.T) {
	h := startFullServer(t, func(s *Server) { s.CustomActions = luaTouch })
	h.addUser("bob", "bob-password")
	h.setRBAC(map[string]string{"policy.csv": "g, bob, role:readonly\n"})
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "settings"}}
	if err := h.k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	h.createApp("shop", "default", nil, v1alpha1.ApplicationSource{RepoURL: "https://github.com/org/repo", Path: "shop"})
	h.setResources("shop", v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: h.ns, Name: "settings"})
	admin, bob := h.login("admin", h.password), h.login("bob", "bob-password")
	path := actionsPath("", "", "ConfigMap", h.ns, "settings")

	var list struct{ Actions []resourceactions.Action }
	r := h.do(http.MethodGet, path, bob, nil)
	r.json(t, &list)
	if r.status != http.StatusOK || len(list.Actions) != 1 || list.Actions[0].Name != "touch" || list.Actions[0].DisplayName != "Touch" {
		t.Fatalf("actions of the ConfigMap: %d %s", r.status, r.body)
	}
	run := map[string]any{"namespace": h.ns, "resourceName": "settings", "version": "v1", "kind": "ConfigMap", "action": "touch",
		"resourceActionParameters": []map[string]string{{"name": "by", "value": "admin"}}}
	r = h.do(http.MethodPost, "/api/v1/applications/shop/resource/actions/v2", bob, run)
	wantError(t, r, http.StatusForbidden)
	wantBody(t, r, "action//ConfigMap/touch")
	if r := h.do(http.MethodPost, "/api/v1/applications/shop/resource/actions/v2", admin, run); r.status != http.StatusOK {
		t.Fatalf("touch: %d %s", r.status, r.body)
	}
	if err := h.k8s.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil || cm.Labels["touched"] != "admin" {
		t.Fatalf("labels after touch %v (%v), want touched=admin", cm.Labels, err)
	}
}
