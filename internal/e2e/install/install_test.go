package install

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rollout"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The fixtures other packages test with, committed to git as users would:
// Argo CD's guestbook and the seeds' blue-green Rollout with a Job analysis.
const (
	guestbookFixtures = "../../controller/application/testdata/guestbook"
	rolloutFixtures   = "../../controller/rollout/testdata"
)

// install.yaml, applied with kubectl --server-side, grants Skiff all it
// needs: run with its Deployment's flags as the skiff ServiceAccount, it
// syncs the guestbook and prunes what left git, notifies a webhook, rolls
// out a blue-green Rollout through a Job analysis, and lets the admin log
// in to the API, without one request refused. The sync rule (skiff-sync)
// is narrowed to the kinds in git first, so that Skiff's own work must
// fit the rules listed for it.
func TestClusterInstallDoesItsJobAsItsServiceAccount(t *testing.T) {
	const ns = "argocd"
	applyManifest(t, "install.yaml", ns)
	kubectl(t, "apply", "--server-side", "--force-conflicts", "-f", "testdata/narrow-sync-clusterrole.yaml")
	t.Cleanup(func() {
		kubectl(t, "apply", "--server-side", "--force-conflicts", "-n", ns, "-f", manifestsDir+"/install.yaml")
	})
	args, api, health := serverArgs(t, deployment(t, "install.yaml"), ns)
	c := cluster.Client(t)
	ctx := context.Background()

	var mu sync.Mutex
	var hooks []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hooks = append(hooks, r.URL.Path+" "+string(body))
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	setNotifications(t, c, ns, receiver.URL)

	out := startServer(t, serviceAccountKubeconfig(t, ns, "skiff"), args, health)

	repo := testgit.New(t)
	files := testgit.Dir(t, guestbookFixtures, "guestbook")
	files["guestbook/guestbook-extra.yaml"] = readFile(t, "testdata/guestbook-extra.yaml")
	for _, f := range []string{"test-analysistemp.yml", "rollout-active-service-analysis.yml", "rollout-bg-test-analysis.yml"} {
		files["bluegreen/"+f] = readFile(t, rolloutFixtures+"/"+f)
	}
	repo.Commit(files)
	guestbook := readApp(t, "guestbook-app.yaml", ns, map[string]string{"REPO_URL": repo.URL(), "DEST_NAMESPACE": "guestbook"})
	bluegreen := readApp(t, "bluegreen-app.yaml", ns, map[string]string{"REPO_URL": repo.URL(), "DEST_NAMESPACE": "bluegreen"})
	for _, app := range []*v1alpha1.Application{guestbook, bluegreen} {
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("the guestbook syncs, notifies and prunes", func(t *testing.T) {
		waitSynced(t, c, guestbook)
		extra := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "guestbook", Name: "guestbook-extra"}, extra); err != nil {
			t.Fatalf("the synced ConfigMap: %v", err)
		}
		testwait.Eventually(t, "the sync's webhook notification", func() error {
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(hooks, `/apps/guestbook {"app": "guestbook"}`) {
				return fmt.Errorf("requests %q", hooks)
			}
			return nil
		}, testwait.Timeout(time.Minute))

		repo.Commit(map[string]string{"guestbook/guestbook-extra.yaml": ""})
		refresh(t, c, guestbook)
		testwait.Eventually(t, "the ConfigMap removed from git to be pruned", func() error {
			err := c.Get(ctx, client.ObjectKeyFromObject(extra), &corev1.ConfigMap{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		}, testwait.Timeout(2*time.Minute))
	})

	t.Run("the blue-green Rollout promotes through its Job analysis", func(t *testing.T) {
		waitSynced(t, c, bluegreen)
		key := types.NamespacedName{Namespace: "bluegreen", Name: "rollout-bg-test-analysis"}
		var first string
		testwait.Eventually(t, "the first revision Healthy", func() (err error) {
			first, err = rolloutHealthyAt(c, key)
			return err
		}, testwait.Timeout(2*time.Minute), testwait.Interval(500*time.Millisecond))

		repo.Commit(map[string]string{"bluegreen/rollout-bg-test-analysis.yml": strings.Replace(
			files["bluegreen/rollout-bg-test-analysis.yml"], "nginx:latest", "nginx:stable", 1)})
		refresh(t, c, bluegreen)
		testwait.Eventually(t, "the second revision promoted after its analysis", func() error {
			hash, err := rolloutHealthyAt(c, key)
			if err == nil && hash == first {
				return fmt.Errorf("still at the first revision %s", hash)
			}
			return err
		}, testwait.Timeout(2*time.Minute), testwait.Interval(500*time.Millisecond))
		var runs v1alpha1.AnalysisRunList
		if err := c.List(ctx, &runs, client.InNamespace("bluegreen")); err != nil {
			t.Fatal(err)
		}
		if len(runs.Items) != 1 || runs.Items[0].Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
			t.Errorf("analysis runs %v, want one Successful", runPhases(runs))
		}
	})

	t.Run("the admin logs in and sees the apps", func(t *testing.T) {
		token := login(t, api, ns)
		names := appNames(t, api, token)
		slices.Sort(names)
		if !slices.Equal(names, []string{"bluegreen", "guestbook"}) {
			t.Errorf("the API lists %v, want bluegreen and guestbook", names)
		}
	})

	noForbidden(t, out)
}

// The HA manifest applies on top of the cluster install: two replicas
// spread over nodes, and a PodDisruptionBudget keeping one.
func TestHAInstallApplies(t *testing.T) {
	applyManifest(t, "ha/install.yaml", "argocd")
	d := deployment(t, "ha/install.yaml")
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Affinity == nil || d.Spec.Template.Spec.Affinity.PodAntiAffinity == nil {
		t.Errorf("the HA Deployment has %d replicas and affinity %+v", *d.Spec.Replicas, d.Spec.Template.Spec.Affinity)
	}
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--leader-elect") {
		t.Errorf("the HA Deployment's args %v lack --leader-elect", d.Spec.Template.Spec.Containers[0].Args)
	}
	if got := kubectl(t, "-n", "argocd", "get", "pdb", "skiff-server", "-o", "jsonpath={.spec.minAvailable}"); got != "1" {
		t.Errorf("PodDisruptionBudget minAvailable %q, want 1", got)
	}
}

func setNotifications(t *testing.T, c client.Client, ns, url string) {
	t.Helper()
	data := map[string]string{}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(readFile(t, "testdata/notifications-cm.yaml"), "${WEBHOOK_URL}", url)), &data); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "argocd-notifications-cm"}, cm); err != nil {
		t.Fatalf("the install's argocd-notifications-cm: %v", err)
	}
	cm.Data = data
	if err := c.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

// refresh asks for a comparison now, as `argocd app get --refresh` does.
func refresh(t *testing.T, c client.Client, app *v1alpha1.Application) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationRefresh + `":"normal"}}}`)
	if err := c.Patch(context.Background(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// waitSynced waits until app's sync operation succeeded and it is Synced
// with git and Healthy.
func waitSynced(t *testing.T, c client.Client, app *v1alpha1.Application) {
	t.Helper()
	testwait.Eventually(t, app.Name+" synced and Healthy", func() error {
		got := &v1alpha1.Application{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(app), got); err != nil {
			return err
		}
		op := got.Status.OperationState
		if got.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || got.Status.Health.Status != v1alpha1.HealthStatusHealthy ||
			op == nil || op.Phase != v1alpha1.OperationSucceeded {
			var outOfSync []string
			for _, r := range got.Status.Resources {
				if r.Status != v1alpha1.SyncStatusCodeSynced {
					outOfSync = append(outOfSync, r.Kind+"/"+r.Name)
				}
			}
			return fmt.Errorf("sync %s %v, health %s, operation %+v, conditions %+v", got.Status.Sync.Status, outOfSync, got.Status.Health.Status, op, got.Status.Conditions)
		}
		return nil
	}, testwait.Timeout(2*time.Minute), testwait.Interval(500*time.Millisecond))
}

// rolloutHealthyAt returns the pod template hash of the Rollout at key
// once it is Healthy at its current template.
func rolloutHealthyAt(c client.Client, key types.NamespacedName) (string, error) {
	ro := &v1alpha1.Rollout{}
	if err := c.Get(context.Background(), key, ro); err != nil {
		return "", err
	}
	want := rollout.PodTemplateHash(&ro.Spec.Template, ro.Status.CollisionCount)
	if ro.Status.Phase != v1alpha1.RolloutPhaseHealthy || ro.Status.CurrentPodHash != want || ro.Status.StableRS != want {
		return "", fmt.Errorf("phase %s (%s), current %s, stable %s, template %s", ro.Status.Phase, ro.Status.Message, ro.Status.CurrentPodHash, ro.Status.StableRS, want)
	}
	return want, nil
}

func runPhases(runs v1alpha1.AnalysisRunList) []string {
	var out []string
	for _, r := range runs.Items {
		out = append(out, r.Name+"="+string(r.Status.Phase))
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The seeds install Argo CD with a plain, client-side `kubectl apply -n
// argocd -f install.yaml`: the same command installs Skiff. Client-side
// apply stores each object in an annotation of at most 256 KiB, which the
// largest CRD (the Rollout's) must fit.
func TestClientSideApplyInstalls(t *testing.T) {
	ns := "client-side"
	kubectl(t, "create", "namespace", ns)
	kubectl(t, "apply", "-n", ns, "-f", manifestsDir+"/namespace-install.yaml")
	if got := kubectl(t, "-n", ns, "get", "deployment", "skiff-server", "-o", "jsonpath={.spec.template.spec.serviceAccountName}"); got != "skiff" {
		t.Errorf("the client-side applied Deployment runs as %q, want skiff", got)
	}
	if got := kubectl(t, "get", "crd", "rollouts.argoproj.io", "-o", `jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); len(got) == 0 {
		t.Error("the Rollout CRD has no last-applied-configuration after a client-side apply")
	}
}
