package manager

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// skiff server's ApplicationSet controller generates with the live inputs:
// a git directories set makes an app per directory, and a directory
// committed later comes with the refresh annotation a push sets, git
// being asked anew rather than its recent answer reused.
func TestApplicationSetsGenerateFromGit(t *testing.T) {
	saved := generateApplications
	generateApplications = nil // the real generators
	t.Cleanup(func() { generateApplications = saved })
	ctx := context.Background()
	ns := cluster.Namespace(t)
	repo := testgit.New(t)
	dir := func(name string) map[string]string {
		return map[string]string{"apps/" + name + "/configmap.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)}
	}
	repo.Commit(dir("a"))
	repo.Commit(dir("b"))
	// The apps' periodic comparisons, which would resolve HEAD anew, wait
	// past the test: only the refresh may show the set the new commit.
	runManager(t, cluster.Config, Options{Namespace: ns, LeaderElection: true, RefreshPeriod: 10 * time.Minute}, false)
	c := cluster.Client(t)
	set := &v1alpha1.ApplicationSet{}
	testcluster.ReadYAML(t, "testdata/appset-git.yaml", set, ns)
	set.Spec.Generators[0].Git.RepoURL = repo.URL()
	set.Spec.Template.Spec.Source.RepoURL = repo.URL()
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	appsAre := func(want ...string) func() error {
		return func() error {
			got, _, err := appsOf(ctx, c, ns)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("apps %v, want %v", got, want)
			}
			return nil
		}
	}
	testwait.Eventually(t, "an app per directory", appsAre("a", "b"), testwait.Timeout(60*time.Second))

	repo.Commit(dir("c"))
	patch := []byte(`{"metadata":{"annotations":{"` + appsetops.RefreshAnnotation + `":"true"}}}`)
	if err := c.Patch(ctx, set, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the committed directory's app after a refresh", appsAre("a", "b", "c"), testwait.Timeout(30*time.Second))
}

// appsOf lists the Applications of ns, with their names sorted.
func appsOf(ctx context.Context, c client.Client, ns string) ([]string, []v1alpha1.Application, error) {
	list := &v1alpha1.ApplicationList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, nil, err
	}
	var names []string
	for _, a := range list.Items {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	return names, list.Items, nil
}
