package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"github.com/skiffcd/skiff/internal/testgit"
)

// phase is one row of the table.
type phase struct {
	name string
	// exist and synced run from the first write (the floor's first
	// create, the set's create) until all N apps exist, and are Synced.
	exist, synced time.Duration
	cpu, rss      float64
	// webhook runs from the push event until the new directory's app
	// exists (dirs only), with skiff's CPU meanwhile.
	webhook    time.Duration
	webhookCPU float64
}

func appName(i int) string { return fmt.Sprintf("app-%04d", i) }

func appPath(i int) string { return "apps/" + appName(i) }

// files is app i's directory: one small ConfigMap.
func files(i int) map[string]string {
	return map[string]string{appPath(i) + "/configmap.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  app: %q\n", appName(i), appName(i))}
}

// newRepo is a git repository with the directories of n apps.
func newRepo(dir string, n int) (*testgit.Repo, error) {
	g, err := testgit.Init(dir)
	if err != nil {
		return nil, err
	}
	all := map[string]string{}
	for i := range n {
		for p, content := range files(i) {
			all[p] = content
		}
	}
	_, err = g.CommitFiles(all)
	return g, err
}

// spec is the Applications' spec, in YAML, for the app named by name at
// path (literal values or a set's parameters).
func spec(repoURL, name, path string) string {
	return fmt.Sprintf(`metadata: {name: '%s'}
spec:
  project: default
  source: {repoURL: '%s', path: '%s', targetRevision: HEAD}
  destination: {server: 'https://kubernetes.default.svc', namespace: %s}
  syncPolicy:
    automated: {prune: true, selfHeal: true}
    syncOptions: [CreateNamespace=true]
`, name, repoURL, path, appsNS)
}

// indent puts two more spaces before every line of s.
func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+by) + "\n"
}

// listSet is one ApplicationSet whose List generator has n elements.
func listSet(repoURL string, n int) string {
	var b strings.Builder
	b.WriteString("generators:\n- list:\n    elements:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - {name: %s, path: %s}\n", appName(i), appPath(i))
	}
	b.WriteString("template:\n")
	b.WriteString(indent(spec(repoURL, "{{name}}", "{{path}}"), "  "))
	return b.String()
}

// dirsSet is one ApplicationSet whose git directories generator reads
// apps/* of repoURL.
func dirsSet(repoURL string) string {
	return fmt.Sprintf("generators:\n- git:\n    repoURL: '%s'\n    revision: HEAD\n    directories: [{path: 'apps/*'}]\ntemplate:\n", repoURL) +
		indent(spec(repoURL, "{{path.basename}}", "{{path}}"), "  ")
}

// synced is an app the Application controller has synced.
func synced(a *v1alpha1.Application) bool {
	op := a.Status.OperationState
	return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && op != nil && op.Phase == v1alpha1.OperationSucceeded
}

// waitApps follows the Applications from start until n exist and are
// Synced, and says when each happened.
func waitApps(ctx context.Context, e *env, start time.Time, n int) (exist, syncedAfter time.Duration, err error) {
	newList := func() client.ObjectList { return &v1alpha1.ApplicationList{} }
	progress := time.Now()
	err = benchkit.WaitWatch(ctx, e.c, "apps Synced", *waitTimeout, pollEvery, e.alive, newList, []client.ListOption{client.InNamespace(argocdNS)},
		func(objs map[types.NamespacedName]client.Object, _ *types.NamespacedName) (bool, string) {
			if exist == 0 && len(objs) >= n {
				exist = time.Since(start)
			}
			good := 0
			for _, o := range objs {
				if synced(o.(*v1alpha1.Application)) {
					good++
				}
			}
			if time.Since(progress) >= 30*time.Second {
				progress = time.Now()
				fmt.Printf("  %d apps exist, %d Synced after %s\n", len(objs), good, time.Since(start).Round(time.Second))
			}
			return good >= n, fmt.Sprintf("%d apps exist, %d of %d Synced", len(objs), good, n)
		})
	return exist, time.Since(start), err
}

// floorPhase creates the N Applications directly, 20 in flight.
func floorPhase(ctx context.Context, e *env, repo *testgit.Repo) (phase, error) {
	apps := make([]*v1alpha1.Application, *n)
	for i := range *n {
		a := &v1alpha1.Application{}
		if err := yaml.Unmarshal([]byte(spec(repo.URL(), appName(i), appPath(i))), a); err != nil {
			return phase{}, err
		}
		a.Namespace = argocdNS
		apps[i] = a
	}
	start := time.Now()
	if err := benchkit.ForEach(*n, inFlight, func(i int) error { return e.c.Create(ctx, apps[i]) }); err != nil {
		return phase{}, err
	}
	return measure(ctx, e, start)
}

// measure waits for the phase's N apps and reads skiff's figures.
func measure(ctx context.Context, e *env, start time.Time) (phase, error) {
	var p phase
	var err error
	if p.exist, p.synced, err = waitApps(ctx, e, start, *n); err != nil {
		return p, err
	}
	p.cpu, p.rss = e.proc.Phase()
	fmt.Printf("%d apps exist after %s, Synced after %s; skiff %.2f CPU-s, peak RSS %.1f MiB\n", *n, secs(p.exist), secs(p.synced), p.cpu, p.rss)
	return p, nil
}

// createSet creates the ApplicationSet bench of spec.
func createSet(ctx context.Context, e *env, specYAML string) error {
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: argocdNS}}
	if err := yaml.Unmarshal([]byte(specYAML), &set.Spec); err != nil {
		return fmt.Errorf("the set's spec: %w", err)
	}
	return e.c.Create(ctx, set)
}

// setPhase creates one set and waits for its N apps.
func setPhase(ctx context.Context, e *env, specYAML string) (phase, error) {
	start := time.Now()
	if err := createSet(ctx, e, specYAML); err != nil {
		return phase{}, err
	}
	return measure(ctx, e, start)
}

// dirsPhase is setPhase for the git directories set, then one more
// directory committed and announced by a push webhook.
func dirsPhase(ctx context.Context, e *env, repo *testgit.Repo) (phase, error) {
	p, err := setPhase(ctx, e, dirsSet(repo.URL()))
	if err != nil {
		return p, err
	}
	if _, err := repo.CommitFiles(files(*n)); err != nil {
		return p, err
	}
	start := time.Now()
	if err := pushWebhook(ctx, e.apiAddr, repo.URL()); err != nil {
		return p, err
	}
	key := types.NamespacedName{Namespace: argocdNS, Name: appName(*n)}
	err = benchkit.WaitWatch(ctx, e.c, "the new directory's app", *waitTimeout, pollEvery, e.alive,
		func() client.ObjectList { return &v1alpha1.ApplicationList{} }, []client.ListOption{client.InNamespace(argocdNS)},
		func(objs map[types.NamespacedName]client.Object, _ *types.NamespacedName) (bool, string) {
			_, exists := objs[key]
			return exists, fmt.Sprintf("%d apps, not yet %s", len(objs), key.Name)
		})
	if err != nil {
		return p, err
	}
	p.webhook = time.Since(start)
	p.webhookCPU, _ = e.proc.Phase()
	fmt.Printf("commit + push webhook: %s exists after %s; skiff %.2f CPU-s\n", key.Name, secs(p.webhook), p.webhookCPU)
	return p, nil
}

// pushWebhook sends skiff's API a signed GitHub push event of repoURL's
// master and checks that it refreshed the set.
func pushWebhook(ctx context.Context, apiAddr, repoURL string) error {
	out, err := benchkit.PushWebhook(ctx, apiAddr, repoURL, webhookSecret)
	if err != nil {
		return err
	}
	if !slices.Contains(out.Sets, "bench") {
		return fmt.Errorf("push webhook refreshed the sets %v, not bench", out.Sets)
	}
	return nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
