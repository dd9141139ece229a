package manager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusterops"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/server"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// namespacedIdentity creates a ServiceAccount whose only rights are the
// Role of testdata/namespaced-role.yaml in ns, and returns a config that
// reaches the API server as it, with a token from the TokenRequest API.
func namespacedIdentity(t *testing.T, ns string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client(t)
	role := &rbacv1.Role{}
	testcluster.ReadYAML(t, "testdata/namespaced-role.yaml", role, ns)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "skiff", Namespace: ns}}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "skiff", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	for _, obj := range []client.Object{role, sa, binding} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return cluster.TokenConfig(t, ns, sa.Name)
}

// `skiff server --namespaced` runs with only a Role in its namespace: an
// app deploying there syncs and turns Healthy; an app deploying to another
// namespace, and one whose render holds a cluster-scoped object, get an
// InvalidSpecError naming what is out of scope, and a sync of the latter
// applies nothing. Nothing Skiff asks the API server is refused.
func TestNamespacedServerRunsWithARoleOnly(t *testing.T) {
	ctx := context.Background()
	ns, other := cluster.Namespace(t), cluster.Namespace(t)
	admin := cluster.Client(t)
	cfg := namespacedIdentity(t, ns)
	forbidden := &testcluster.Refusals{}
	cfg.WrapTransport = forbidden.Wrap

	base := runManager(t, cfg, Options{Namespace: ns, Namespaced: true, LeaderElection: true}, true)

	repo := testgit.New(t)
	files := testgit.Dir(t, "../controller/application/testdata/guestbook", "guestbook")
	// A blue-green Rollout: the Rollout controller's caches and writes
	// work with the Role too.
	for _, name := range []string{"rollout-bg-test.yml", "rollout-service.yml"} {
		data, err := os.ReadFile("../controller/rollout/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		files["rollout/"+name] = string(data)
	}
	for name, data := range testgit.Dir(t, "testdata/with-cluster-role", "with-cluster-role") {
		files[name] = data
	}
	repo.Commit(files)
	newApp := func(name, path, dest string, automated bool) *v1alpha1.Application {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: path, TargetRevision: "HEAD"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			},
		}
		if automated {
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
		}
		if err := admin.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		return app
	}
	inScope := newApp("guestbook", "guestbook", ns, true)
	rollout := newApp("rollout", "rollout", ns, true)
	elsewhere := newApp("elsewhere", "guestbook", other, true)
	clusterScoped := newApp("cluster-scoped", "with-cluster-role", ns, false)

	waitApp(t, admin, inScope, "Synced and Healthy", func(app *v1alpha1.Application) error {
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || app.Status.Health.Status != v1alpha1.HealthStatusHealthy {
			return fmt.Errorf("%s/%s", app.Status.Sync.Status, app.Status.Health.Status)
		}
		return nil
	})
	// Healthy once the Rollout's pods are up and the active Service points
	// at them; Synced although the Rollout steers the Service's selector
	// and the API server defaulted its pod template (with the defaults of
	// the CRDs Skiff ships: a namespaced install cannot read CRDs).
	waitApp(t, admin, rollout, "Synced and Healthy", func(app *v1alpha1.Application) error {
		if op := app.Status.OperationState; op == nil || op.Phase != v1alpha1.OperationSucceeded ||
			app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || app.Status.Health.Status != v1alpha1.HealthStatusHealthy {
			return fmt.Errorf("%s/%s", app.Status.Sync.Status, app.Status.Health.Status)
		}
		return nil
	})
	waitApp(t, admin, elsewhere, "an InvalidSpecError about its destination", conditionSays(v1alpha1.ApplicationConditionInvalidSpecError,
		`spec.destination.namespace "`+other+`": this Skiff is a namespaced install and manages only namespace `+ns))
	clusterRoleMessage := "rbac.authorization.k8s.io/ClusterRole skiff-namespaced-test-reader is cluster-scoped: this Skiff is a namespaced install and manages only namespace " + ns
	app := waitApp(t, admin, clusterScoped, "an InvalidSpecError about the ClusterRole", conditionSays(v1alpha1.ApplicationConditionInvalidSpecError, clusterRoleMessage))

	patch := client.MergeFrom(app.DeepCopy())
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := admin.Patch(ctx, app, patch); err != nil {
		t.Fatal(err)
	}
	waitApp(t, admin, clusterScoped, "the sync to fail on the ClusterRole", func(app *v1alpha1.Application) error {
		op := app.Status.OperationState
		if op == nil || op.Phase == v1alpha1.OperationRunning || !strings.Contains(op.Message, clusterRoleMessage) {
			return errors.New("no failed operation naming the ClusterRole yet")
		}
		return nil
	})
	var beside corev1.ConfigMap
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "beside-the-cluster-role"}, &beside); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap of the refused sync: %v, want not found", err)
	}
	var role rbacv1.ClusterRole
	if err := admin.Get(ctx, client.ObjectKey{Name: "skiff-namespaced-test-reader"}, &role); !apierrors.IsNotFound(err) {
		t.Errorf("the ClusterRole after the refused sync: %v, want not found", err)
	}
	if refused := forbidden.List(); len(refused) > 0 {
		t.Errorf("the API server refused %d requests of the namespaced Skiff:\n%s", len(refused), strings.Join(refused, "\n"))
	}
	// An analysis of a ClusterAnalysisTemplate, which the namespaced
	// install may not read, makes the Rollout InvalidSpec.
	ro := &v1alpha1.Rollout{}
	testcluster.ReadYAML(t, "../controller/rollout/testdata/rollout-bg-test-analysis.yml", ro, ns)
	ro.Spec.Strategy.BlueGreen.PostPromotionAnalysis.Templates[0].ClusterScope = true
	svc := &corev1.Service{}
	testcluster.ReadYAML(t, "../controller/rollout/testdata/rollout-active-service-analysis.yml", svc, ns)
	for _, obj := range []client.Object{svc, ro} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// The first revision runs no analysis; the second does.
	testwait.Eventually(t, "the Rollout's first revision to complete", func() error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(ro), ro); err != nil {
			return err
		}
		if ro.Status.Phase != v1alpha1.RolloutPhaseHealthy {
			return fmt.Errorf("phase %s", ro.Status.Phase)
		}
		return nil
	}, testwait.Timeout(90*time.Second), testwait.Interval(250*time.Millisecond))
	update := client.MergeFrom(ro.DeepCopy())
	ro.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	if err := admin.Patch(ctx, ro, update); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the Rollout to be InvalidSpec for its ClusterAnalysisTemplate", func() error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(ro), ro); err != nil {
			return err
		}
		for _, c := range ro.Status.Conditions {
			if c.Type == v1alpha1.InvalidSpec && strings.Contains(c.Message, "ClusterAnalysisTemplate is cluster-scoped: this Skiff is a namespaced install and reads only namespace "+ns) {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", ro.Status.Conditions)
	}, testwait.Timeout(90*time.Second), testwait.Interval(250*time.Millisecond))

	var initial corev1.Secret
	testwait.Eventually(t, "the API server's initial admin password", func() error {
		return admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: server.InitialAdminSecretName}, &initial)
	})

	// The API answers the controller's state of the cluster it deploys to,
	// as the replica published it on its Lease: up to a retry period (2 s)
	// after the apps synced.
	testwait.Eventually(t, "in-cluster's state through the API", func() error {
		inCluster := apiCluster(t, base, string(initial.Data["password"]), "in-cluster")
		if s := inCluster.Info; s.ConnectionState.Status != clusters.ConnectionSuccessful || s.ServerVersion == "" || s.ApplicationsCount < 2 ||
			s.CacheInfo.ResourcesCount == 0 || s.CacheInfo.LastCacheSyncTime == nil || inCluster.ConnectionState != s.ConnectionState {
			return fmt.Errorf("in-cluster through the API: %+v, info %+v", inCluster.ConnectionState, s)
		}
		return nil
	}, testwait.Timeout(30*time.Second), testwait.Interval(500*time.Millisecond))
}

// apiLogin logs in to the API server at base as admin and returns the
// session token.
func apiLogin(t *testing.T, base, password string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": "admin", "password": password})
	resp, err := http.Post(base+"/api/v1/session", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var login struct{ Token string }
	err = json.NewDecoder(resp.Body).Decode(&login)
	resp.Body.Close()
	if err != nil || login.Token == "" {
		t.Fatalf("logging in: %d, %v", resp.StatusCode, err)
	}
	return login.Token
}

// apiCall sends an API request with token and decodes the JSON answer
// into out; it returns the status.
func apiCall(t *testing.T, method, url, token string, in, out any) int {
	t.Helper()
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, data)
		}
	}
	if resp.StatusCode != http.StatusOK {
		t.Logf("%s %s: %d %s", method, url, resp.StatusCode, data)
	}
	return resp.StatusCode
}

// apiCluster logs in to the API server at base as admin and reads the
// cluster of a name or server.
func apiCluster(t *testing.T, base, password, id string) clusterops.Cluster {
	t.Helper()
	var c clusterops.Cluster
	if status := apiCall(t, http.MethodGet, base+"/api/v1/clusters/"+url.PathEscape(id), apiLogin(t, base, password), nil, &c); status != http.StatusOK {
		t.Fatalf("GET cluster %s: %d", id, status)
	}
	return c
}

// waitApp reads the Application until check passes (up to 90 s) and
// returns it.
func waitApp(t *testing.T, c client.Client, app *v1alpha1.Application, what string, check func(*v1alpha1.Application) error) *v1alpha1.Application {
	t.Helper()
	got := &v1alpha1.Application{}
	testwait.Eventually(t, app.Name+": "+what, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(app), got); err != nil {
			return err
		}
		if err := check(got); err != nil {
			status, _ := yaml.Marshal(got.Status)
			return fmt.Errorf("%w; status:\n%s", err, status)
		}
		return nil
	}, testwait.Timeout(90*time.Second), testwait.Interval(250*time.Millisecond))
	return got
}

// conditionSays checks that the app has a condition of type kind whose
// message contains msg.
func conditionSays(kind v1alpha1.ApplicationConditionType, msg string) func(*v1alpha1.Application) error {
	return func(app *v1alpha1.Application) error {
		for _, c := range app.Status.Conditions {
			if c.Type == kind && strings.Contains(c.Message, msg) {
				return nil
			}
		}
		return fmt.Errorf("no %s saying %q", kind, msg)
	}
}
