package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The demo's parts, under the examples folder.
const (
	demoAppsDir     = "apps"
	demoRolloutApp  = "bluegreen-demo"
	demoRolloutFile = "bluegreen/rollout.yaml"
	demoImageBefore = "argoproj/rollouts-demo:blue"
	demoImageAfter  = "argoproj/rollouts-demo:green"
)

// demo is what `make run` shows a newcomer: a local git repository seeded
// with the examples folder, the Applications of examples/apps pointed at
// it, and, once the blue-green app is Healthy, a commit of a new image so
// that the UI shows a Rollout promote.
type demo struct {
	examples string
	repo     *testgit.Repo
	client   client.Client
	out      io.Writer
}

// startDemo seeds the repository and creates the Applications once skiff
// server has installed the CRDs; then it commits the new image in the
// background, until ctx ends.
func startDemo(ctx context.Context, cluster *testcluster.Cluster, examples string, out io.Writer) (*demo, error) {
	repo, err := testgit.Init(filepath.Join(cluster.Dir, "demo-repo"))
	if err != nil {
		return nil, fmt.Errorf("creating the demo repository: %w", err)
	}
	files := map[string]string{}
	for _, sub := range []string{"guestbook", "bluegreen"} {
		dirFiles, err := testgit.ReadDir(filepath.Join(examples, sub), sub)
		if err != nil {
			return nil, fmt.Errorf("reading the examples: %w", err)
		}
		for path, content := range dirFiles {
			files[filepath.ToSlash(filepath.Join("examples", path))] = content
		}
	}
	if _, err := repo.CommitFiles(files); err != nil {
		return nil, fmt.Errorf("committing the examples: %w", err)
	}
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	d := &demo{examples: examples, repo: repo, client: c, out: out}
	if err := d.createApps(ctx); err != nil {
		return nil, err
	}
	go d.promoteWhenHealthy(ctx)
	return d, nil
}

// createApps creates the Applications of examples/apps with the local
// repository as their source.
func (d *demo) createApps(ctx context.Context) error {
	// skiff server installs the CRDs as it starts.
	if err := testwait.Until(ctx, "the Application CRD to be served", func() error {
		return d.client.List(ctx, &v1alpha1.ApplicationList{}, client.InNamespace("argocd"))
	}, testwait.Timeout(2*time.Minute), testwait.Interval(500*time.Millisecond)); err != nil {
		return err
	}
	manifests, err := testgit.ReadDir(filepath.Join(d.examples, demoAppsDir), "")
	if err != nil {
		return fmt.Errorf("reading the demo's Applications: %w", err)
	}
	for path, manifest := range manifests {
		var app v1alpha1.Application
		if err := yaml.UnmarshalStrict([]byte(manifest), &app); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if app.Spec.Source == nil {
			return fmt.Errorf("%s: the demo's Applications have one source", path)
		}
		app.Spec.Source.RepoURL = d.repo.URL()
		if err := d.client.Create(ctx, &app); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("creating Application %s: %w", app.Name, err)
		}
	}
	return nil
}

// promoteWhenHealthy commits the Rollout's next image once its app is
// Synced and Healthy, and asks for a refresh so that the app sees it at
// once.
func (d *demo) promoteWhenHealthy(ctx context.Context) {
	if err := d.commitNextImage(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(d.out, "demo: %v\n", err)
	}
}

func (d *demo) commitNextImage(ctx context.Context) error {
	key := types.NamespacedName{Namespace: "argocd", Name: demoRolloutApp}
	if err := testwait.Until(ctx, "Application "+demoRolloutApp+" to be Synced and Healthy", func() error {
		var app v1alpha1.Application
		if err := d.client.Get(ctx, key, &app); err != nil {
			return err
		}
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || app.Status.Health.Status != v1alpha1.HealthStatusHealthy {
			return fmt.Errorf("%s and %s", app.Status.Sync.Status, app.Status.Health.Status)
		}
		return nil
	}, testwait.Timeout(5*time.Minute), testwait.Interval(time.Second)); err != nil {
		return err
	}
	rollout, err := os.ReadFile(filepath.Join(d.examples, demoRolloutFile))
	if err != nil {
		return err
	}
	next := strings.Replace(string(rollout), demoImageBefore, demoImageAfter, 1)
	if next == string(rollout) {
		return fmt.Errorf("%s has no image %s to change", demoRolloutFile, demoImageBefore)
	}
	sha, err := d.repo.CommitFiles(map[string]string{"examples/" + demoRolloutFile: next})
	if err != nil {
		return err
	}
	var app v1alpha1.Application
	if err := d.client.Get(ctx, key, &app); err != nil {
		return err
	}
	patch := client.MergeFrom(app.DeepCopy())
	annotations := app.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[v1alpha1.AnnotationRefresh] = "normal"
	app.SetAnnotations(annotations)
	if err := d.client.Patch(ctx, &app, patch); err != nil {
		return fmt.Errorf("asking for a refresh of %s: %w", demoRolloutApp, err)
	}
	fmt.Fprintf(d.out, "demo: committed %s (%s → %s); the Rollout shows it on its preview Service and promotes it 20 s after its pods are ready\n",
		sha[:7], demoImageBefore, demoImageAfter)
	return nil
}
