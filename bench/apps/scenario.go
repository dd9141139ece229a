package main

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testgit"
)

func appName(i int) string { return fmt.Sprintf("app-%04d", i) }

func appNS(i int) string { return fmt.Sprintf("bench-%04d", i) }

// manifests returns the files of app i (path → YAML); rev varies one ConfigMap.
func manifests(i, rev int) map[string]string {
	name := appName(i)
	dir := "apps/" + name + "/"
	if *shape == "configmap" {
		return map[string]string{dir + "configmap-0.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-config-0\ndata:\n  revision: %q\n", name, strconv.Itoa(rev))}
	}
	files := map[string]string{
		dir + "deployment.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: 10m, memory: 16Mi}}
`, name),
		dir + "service.yaml": fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  clusterIP: None
  selector: {app: %[1]s}
  ports: [{port: 80, targetPort: 80}]
`, name),
	}
	for k := range 3 {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-config-%d\ndata:\n", name, k)
		if k == 0 {
			fmt.Fprintf(&b, "  revision: %q\n", strconv.Itoa(rev))
		}
		for line := 0; line < 14; line++ { // ~1 KiB of data
			fmt.Fprintf(&b, "  key-%02d: %q\n", line, strings.Repeat(string(rune('a'+line)), 56))
		}
		files[fmt.Sprintf("%sconfigmap-%d.yaml", dir, k)] = b.String()
	}
	return files
}

// application is app i, deploying to the cluster of server dest.
func application(i int, repoURL, dest string) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: appName(i), Namespace: argocdNS},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: "apps/" + appName(i), TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: dest, Namespace: appNS(i)},
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true},
				SyncOptions: []string{"CreateNamespace=true"},
			},
		},
	}
}

func syncedAt(sha string) func(*v1alpha1.Application) bool {
	return func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Sync.Revision == sha &&
			op != nil && op.SyncResult != nil && op.SyncResult.Revision == sha
	}
}

// repo is the scenario's git repository: a directory per app.
type repo struct{ *testgit.Repo }

func newRepo(dir string, n int) (*repo, error) {
	g, err := testgit.Init(dir)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for i := range n {
		for p, content := range manifests(i, 0) {
			files[p] = content
		}
	}
	if _, err := g.CommitFiles(files); err != nil {
		return nil, err
	}
	return &repo{g}, nil
}

// touchAll changes the first ConfigMap of every app in one commit.
func (g *repo) touchAll(n, rev int) (string, error) {
	files := map[string]string{}
	for i := range n {
		p := fmt.Sprintf("apps/%s/configmap-0.yaml", appName(i))
		files[p] = manifests(i, rev)[p]
	}
	return g.CommitFiles(files)
}
