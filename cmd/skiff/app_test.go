package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/appcli"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/manager"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// appNamespace holds the Applications of every test; the one controller of
// this test binary watches it (controller names are unique per process).
const appNamespace = "argocd"

var cluster *testcluster.Cluster

// metricsAddr is where the controller manager serves /metrics.
var metricsAddr string

func TestMain(m *testing.M) {
	if code, ran := runAsSkiff(); ran {
		os.Exit(code)
	}
	configDir := isolateSession()
	var stop func()
	code := testcluster.RunMain(m, func(c *testcluster.Cluster) {
		cluster = c
		var err error
		if stop, err = startManager(c); err != nil {
			fmt.Fprintf(os.Stderr, "starting the controller: %v\n", err)
			os.Exit(1)
		}
	})
	if stop != nil {
		stop()
	}
	_ = os.RemoveAll(configDir)
	os.Exit(code)
}

// isolateSession keeps a developer's `skiff login` and $SKIFF_SERVER away
// from the tests: the config directory is a fresh one and the variables
// are unset (tests of the API server mode give --config or --server). It
// returns the directory.
func isolateSession() string {
	dir, err := os.MkdirTemp("", "skiff-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for key, value := range map[string]string{"XDG_CONFIG_HOME": dir, "SKIFF_SERVER": "", "SKIFF_AUTH_TOKEN": ""} {
		if err := os.Setenv(key, value); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	return dir
}

// startManager runs the real controller manager for appNamespace and waits
// until the Application CRD is served; stop ends it.
func startManager(c *testcluster.Cluster) (stop func(), err error) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		return nil, err
	}
	k, err := client.New(c.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	cacheDir, err := os.MkdirTemp("", "skiff-app-test-")
	if err != nil {
		return nil, err
	}
	if metricsAddr, err = freeLocalAddr(); err != nil {
		return nil, err
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	exited := make(chan struct{})
	var runErr error
	go func() {
		defer close(exited)
		runErr = manager.Run(runCtx, c.Config, manager.Options{
			Namespace: appNamespace, MetricsAddr: metricsAddr, HealthAddr: "0", InstallCRDs: true,
			RefreshPeriod: 3 * time.Second, CacheDir: cacheDir,
		})
	}()
	stop = func() {
		stopRun()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "the controller manager did not stop within 30s")
		}
		_ = os.RemoveAll(cacheDir)
	}
	err = testwait.Until(ctx, "the controller manager to serve Applications", func() error {
		select {
		case <-exited:
			cancel() // a manager that ended will not serve them: stop waiting
			return fmt.Errorf("controller manager: %w", runErr)
		default:
		}
		return k.List(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(appNamespace))
	}, testwait.Timeout(time.Minute), testwait.Interval(200*time.Millisecond))
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// freeLocalAddr is a 127.0.0.1 address with a port free a moment ago.
func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// kube is a client of the test cluster.
func kube(t *testing.T) client.Client {
	t.Helper()
	return cluster.Client(t)
}

// skiff runs `skiff app --core ARGS` against the test cluster and returns
// its output.
func skiff(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runSkiff(append([]string{"app", "--core", "--kubeconfig", cluster.Kubeconfig}, args...)...)
}

// runSkiff runs `skiff ARGS` for up to 90 s and returns its output.
func runSkiff(args ...string) (string, error) {
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// mustSkiff is skiff failing the test on an error.
func mustSkiff(t *testing.T, args ...string) string {
	t.Helper()
	return mustWith(t, func(args ...string) (string, error) { return skiff(t, args...) })(args...)
}

// mustWith returns run (`skiff app ARGS` one way or another) failing the
// test on an error.
func mustWith(t *testing.T, run func(args ...string) (string, error)) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("skiff app %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
}

func wantContains(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// sameOutput runs one command through the API server and over the
// kubeconfig and says how the two outputs differ, if they do.
func sameOutput(viaServer, core func() (string, error)) error {
	server, err := viaServer()
	if err != nil {
		return fmt.Errorf("through the server: %w", err)
	}
	direct, err := core()
	if err != nil {
		return fmt.Errorf("over the kubeconfig: %w", err)
	}
	if server != direct {
		return fmt.Errorf("through the server:\n%s\nover the kubeconfig:\n%s", server, direct)
	}
	return nil
}

// waitFor checks cond every 200 ms for up to 60 s: a command's effect goes
// through the controller, which may take a few passes on a busy machine.
func waitFor[C testwait.Condition](t *testing.T, what string, cond C) {
	t.Helper()
	testwait.Eventually(t, what, cond, testwait.Timeout(60*time.Second), testwait.Interval(200*time.Millisecond))
}

// waitGone waits until every obj is deleted.
func waitGone(t *testing.T, c client.Client, what string, objs ...client.Object) {
	t.Helper()
	gone := make([]func() error, len(objs))
	for i, obj := range objs {
		gone[i] = testcluster.Gone(c, obj)
	}
	waitFor(t, what, func() error {
		var left []error
		for _, g := range gone {
			left = append(left, g())
		}
		return errors.Join(left...)
	})
}

func getApp(t *testing.T, c client.Client, name string) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: appNamespace, Name: name}, app); err != nil {
		t.Fatal(err)
	}
	return app
}

const (
	configMapV1 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: info}\n"
	configMapV2 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: debug}\n"
	secretYAML  = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: hunter2}\n"
)

// The flow of `argocd app`: create, inspect, sync, diff, history, rollback,
// delete with cascade.
func TestAppLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kube(t)
	dest := cluster.Namespace(t)
	repo := testgit.New(t)
	first := repo.Commit(map[string]string{"app/cm.yaml": configMapV1, "app/secret.yaml": secretYAML})
	url := repo.URL()
	const name = "lifecycle"

	out := mustSkiff(t, "create", name, "--repo", url, "--path", "app", "--dest-namespace", dest, "--sync-option", "CreateNamespace=false")
	wantContains(t, out, "application 'lifecycle' created")
	app := getApp(t, c, name)
	if app.Spec.Source.TargetRevision != "HEAD" || app.Spec.Destination.Server != "https://kubernetes.default.svc" ||
		app.Spec.Project != "default" || app.Spec.SyncPolicy == nil || app.Spec.SyncPolicy.SyncOptions[0] != "CreateNamespace=false" {
		t.Errorf("spec not defaulted from flags: %+v", app.Spec)
	}
	waitFor(t, "the first comparison", func() bool {
		return getApp(t, c, name).Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})

	out = mustSkiff(t, "list")
	wantContains(t, out, "NAME", "CLUSTER", "NAMESPACE", "PROJECT", "STATUS", "HEALTH", "SYNCPOLICY", "CONDITIONS", "REPO", "PATH", "TARGET",
		"lifecycle", dest, "OutOfSync", "Manual", url)
	out = mustSkiff(t, "get", name)
	wantContains(t, out, "Name:", "argocd/lifecycle", "Project:", "default", "Repo:", url, "Path:", "app",
		"Sync Policy:", "Manual", "Sync Status:", "OutOfSync to HEAD ("+first[:7]+")",
		"GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "HOOK", "MESSAGE", "ConfigMap", "settings", "Secret")

	out = mustSkiff(t, "sync", name, "--timeout", "60s")
	wantContains(t, out, "Phase:", "Succeeded", "ConfigMap", "Synced")
	if !strings.Contains(out, "configmap created") && !strings.Contains(out, "configmap configured") {
		t.Errorf("output lacks the ConfigMap's result message:\n%s", out)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, &cm); err != nil || cm.Data["level"] != "info" {
		t.Fatalf("ConfigMap after sync: %v %v", err, cm.Data)
	}
	out = mustSkiff(t, "wait", name, "--health", "--sync", "--timeout", "60s")
	wantContains(t, out, "Synced to HEAD", "Healthy")

	out, err := skiff(t, "diff", name, "--cache-dir", t.TempDir())
	if err != nil || strings.Contains(out, "=====") {
		t.Fatalf("diff of a synced app: %v\n%s", err, out)
	}
	changeSecretByHand(t, c, dest)
	out, err = skiff(t, "diff", name, "--cache-dir", t.TempDir())
	var exit *appcli.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("diff with a changed Secret: got %v, want exit code 1\n%s", err, out)
	}
	if code, silent := silentExit(err); !silent || code != 1 {
		t.Errorf("main would exit with %d (silent %v), want a silent 1", code, silent)
	}
	wantContains(t, out, "===== /Secret "+dest+"/db ======", "++++++++ (changed)")
	for _, secretValue := range []string{"hunter2", "changed-by-hand", "aHVudGVyMg", "Y2hhbmdlZC1ieS1oYW5k"} {
		if strings.Contains(out, secretValue) {
			t.Errorf("diff shows the Secret value %q:\n%s", secretValue, out)
		}
	}
	out = mustSkiff(t, "manifests", name, "--cache-dir", t.TempDir())
	wantContains(t, out, "name: settings", "level: info", "password: ++++++++")
	if strings.Contains(out, "hunter2") {
		t.Errorf("manifests show the Secret value:\n%s", out)
	}

	second := repo.Commit(map[string]string{"app/cm.yaml": configMapV2})
	mustSkiff(t, "sync", name, "--revision", second, "--timeout", "60s")
	out = mustSkiff(t, "history", name)
	wantContains(t, out, "ID", "DATE", "REVISION", first, second)
	if n := len(getApp(t, c, name).Status.History); n != 2 {
		t.Fatalf("%d history entries, want 2:\n%s", n, out)
	}

	out = mustSkiff(t, "rollback", name, "--timeout", "60s")
	wantContains(t, out, "Succeeded")
	if err := c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, &cm); err != nil || cm.Data["level"] != "info" {
		t.Errorf("ConfigMap after rollback: %v %v, want level info", err, cm.Data)
	}
	history := getApp(t, c, name).Status.History
	if len(history) != 3 || history[2].Revision != first {
		t.Errorf("history after rollback %+v, want a third entry at %s", history, first)
	}

	mustSkiff(t, "set", name, "--sync-policy", "automated", "--self-heal")
	_, err = skiff(t, "rollback", name, "0")
	if err == nil || !strings.Contains(err.Error(), "auto-sync is enabled") {
		t.Errorf("rollback with automated sync: got %v, want a refusal", err)
	}

	out = mustSkiff(t, "delete", name, "--cascade", "-y")
	wantContains(t, out, "application 'lifecycle' deleted")
	waitGone(t, c, "the application and its resources to go",
		&v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "settings"}})
}

// changeSecretByHand changes the password of the Secret db of secretYAML
// in ns, as an operator could with kubectl.
func changeSecretByHand(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["password"] = []byte("changed-by-hand")
	if err := c.Update(ctx, &secret); err != nil {
		t.Fatal(err)
	}
}

// create -f reads a manifest; set changes fields; list and get print them.
func TestAppCreateFromFileSetAndOutputs(t *testing.T) {
	t.Parallel()
	c := kube(t)
	dest := cluster.Namespace(t)
	url := commitRepo(t, map[string]string{"one/cm.yaml": configMapV1, "two/cm.yaml": configMapV2})
	manifest := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: from-file
spec:
  project: default
  source: {repoURL: %q, path: one, targetRevision: HEAD}
  destination: {server: "https://kubernetes.default.svc", namespace: %s}
`, url, dest)
	file := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	wantContains(t, mustSkiff(t, "create", "-f", file), "application 'from-file' created")
	wantContains(t, mustSkiff(t, "create", "-f", file), "unchanged")
	if _, err := skiff(t, "create", "-f", file, "--path", "two"); err == nil || !strings.Contains(err.Error(), "--upsert") {
		t.Errorf("create over a different spec: got %v, want a hint at --upsert", err)
	}

	wantContains(t, mustSkiff(t, "set", "from-file", "--path", "two", "--sync-policy", "automated", "--auto-prune",
		"--sync-option", "ServerSideApply=true", "--revision", "main"), "updated")
	app := getApp(t, c, "from-file")
	if s := app.Spec; s.Source.Path != "two" || s.Source.TargetRevision != "main" || !app.IsAutomated() ||
		!s.SyncPolicy.Automated.Prune || s.SyncPolicy.SyncOptions[0] != "ServerSideApply=true" {
		t.Errorf("spec after set: %+v %+v", s.Source, s.SyncPolicy)
	}
	wantContains(t, mustSkiff(t, "list", "-o", "name"), "from-file")
	wantContains(t, mustSkiff(t, "list"), "from-file", "Auto-Prune", "two", "main")
	wantContains(t, mustSkiff(t, "get", "from-file", "-o", "yaml"), "path: two", "targetRevision: main", "prune: true")
	wantContains(t, mustSkiff(t, "get", "from-file", "-o", "json"), `"path": "two"`)
	mustSkiff(t, "set", "from-file", "--sync-policy", "none")
	if getApp(t, c, "from-file").IsAutomated() {
		t.Error("--sync-policy none left automated sync on")
	}
	if _, err := skiff(t, "get", "no-such-app"); err == nil || !strings.Contains(err.Error(), "no-such-app") {
		t.Errorf("get of a missing app: %v", err)
	}
	mustSkiff(t, "delete", "from-file", "--cascade=false", "-y")
}

// A manifest the API server rejects fails the sync: the command fails with
// the operation's message and shows the resource's error.
func TestAppSyncFailureIsAnError(t *testing.T) {
	t.Parallel()
	dest := cluster.Namespace(t)
	bad := "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 99999}]\n"
	url := commitRepo(t, map[string]string{"app/svc.yaml": bad})
	mustSkiff(t, "create", "broken", "--repo", url, "--path", "app", "--dest-namespace", dest)
	out, err := skiff(t, "sync", "broken", "--timeout", "60s")
	var opErr *appcli.OperationError
	if !errors.As(err, &opErr) || opErr.Phase != v1alpha1.OperationFailed {
		t.Fatalf("got %v, want a failed operation\n%s", err, out)
	}
	wantContains(t, err.Error(), "failed")
	wantContains(t, out, "Failed", "Service", "SyncFailed", "99999")
	mustSkiff(t, "delete", "broken", "-y")
}

// terminate-op stops a sync that waits on a resource that never becomes
// healthy (pods no node accepts).
func TestAppTerminateOperation(t *testing.T) {
	t.Parallel()
	terminateFlow(t, "stuck", func(args ...string) (string, error) { return skiff(t, args...) })
}

// terminateFlow creates the app name whose sync never ends, syncs it
// (a second sync is refused), terminates the sync and deletes the app,
// running `skiff app ARGS` with run.
func terminateFlow(t *testing.T, name string, run func(args ...string) (string, error)) {
	t.Helper()
	must := mustWith(t, run)
	c := kube(t)
	dest := cluster.Namespace(t)
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck}
spec:
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: c, image: nginx}]
`
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: after, annotations: {argocd.argoproj.io/sync-wave: \"1\"}}\n"
	url := commitRepo(t, map[string]string{"app/deploy.yaml": deploy, "app/cm.yaml": cm})
	must("create", name, "--repo", url, "--path", "app", "--dest-namespace", dest)
	wantContains(t, must("sync", name, "--async"), "requested")
	if _, err := run("sync", name, "--async"); err == nil || !strings.Contains(err.Error(), "already in progress") {
		t.Errorf("a second sync: got %v, want a refusal", err)
	}
	waitFor(t, "the sync to run", func() bool {
		s := getApp(t, c, name).Status.OperationState
		return s != nil && s.Phase == v1alpha1.OperationRunning
	})
	wantContains(t, must("terminate-op", name), "terminating")
	must("wait", name, "--operation", "--timeout", "60s")
	s := getApp(t, c, name).Status.OperationState
	if s.Phase != v1alpha1.OperationFailed || !strings.Contains(s.Message, "terminated") {
		t.Errorf("operation %s %q, want Failed and terminated", s.Phase, s.Message)
	}
	if _, err := run("terminate-op", name); err == nil {
		t.Error("terminate-op without a running operation succeeded")
	}
	if _, err := run("wait", name, "--health", "--timeout", "1s"); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("wait --health on a Progressing app: got %v, want a timeout", err)
	}
	must("delete", name, "-y")
}
