// Command render benchmarks the repo server: it builds a git repository with
// 200 applications (directory, Kustomize and Helm), renders them all cold
// (empty caches) and warm, and times one ls-remote against the unchanged
// repository. Figures are printed with a baseline measured in the same run
// (parsing every YAML file of the checkout once), since the machine is
// shared and absolute times are noisy.
//
//	go run ./bench/render [-apps 200]
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
)

func main() {
	apps := flag.Int("apps", 200, "number of applications")
	flag.Parse()
	if err := run(*apps); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type app struct {
	name, path, kind string
}

func run(n int) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "skiff-bench-render-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	repoDir := filepath.Join(work, "repo")
	apps, err := buildRepo(repoDir, n)
	if err != nil {
		return err
	}
	url := "file://" + repoDir

	baseline, err := parseAllYAML(repoDir)
	if err != nil {
		return err
	}

	git := source.NewCache(filepath.Join(work, "cache", "repos"), source.Options{})
	server := reposerver.New(git, helmrepo.New(filepath.Join(work, "cache", "charts"), nil), reposerver.Options{})
	perKind := map[string]time.Duration{}
	renderAll := func() (time.Duration, int, error) {
		start := time.Now()
		objects := 0
		for _, a := range apps {
			appStart := time.Now()
			resp, err := server.Manifests(ctx, reposerver.Request{
				AppName: a.name, Namespace: "bench",
				Sources: []v1alpha1.ApplicationSource{{RepoURL: url, Path: a.path, TargetRevision: "HEAD"}},
			})
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %w", a.name, err)
			}
			objects += len(resp.Manifests)
			perKind[a.kind] += time.Since(appStart)
		}
		return time.Since(start), objects, nil
	}

	kinds := map[string]int{}
	for _, a := range apps {
		kinds[a.kind]++
	}
	heapBefore := heapInUse()
	cold, objects, err := renderAll()
	if err != nil {
		return err
	}
	heapAfter := heapInUse()
	coldPerKind := perKind
	perKind = map[string]time.Duration{}
	warm, _, err := renderAll()
	if err != nil {
		return err
	}

	var lsRemote []time.Duration
	for range 20 {
		start := time.Now()
		if _, err := git.LsRemote(ctx, url, source.Credentials{}); err != nil {
			return err
		}
		lsRemote = append(lsRemote, time.Since(start))
	}
	sort.Slice(lsRemote, func(i, j int) bool { return lsRemote[i] < lsRemote[j] })

	fmt.Printf("render benchmark: %d apps (%d directory, %d kustomize, %d helm), %d objects, GOMAXPROCS=%d\n",
		len(apps), kinds["directory"], kinds["kustomize"], kinds["helm"], objects, runtime.GOMAXPROCS(0))
	fmt.Printf("  baseline (parse every YAML file once):   %10s\n", baseline.Round(time.Microsecond))
	fmt.Printf("  cold render, empty caches:               %10s  = %6.1fx baseline  (%s per app)\n",
		cold.Round(time.Microsecond), ratio(cold, baseline), (cold / time.Duration(len(apps))).Round(time.Microsecond))
	for _, k := range []string{"directory", "kustomize", "helm"} {
		fmt.Printf("    %-9s cold: %10s  (%s per app)\n", k, coldPerKind[k].Round(time.Microsecond),
			(coldPerKind[k] / time.Duration(max(kinds[k], 1))).Round(time.Microsecond))
	}
	fmt.Printf("  warm render, same commit:                %10s  = %6.2fx baseline  (%s per app)\n",
		warm.Round(time.Microsecond), ratio(warm, baseline), (warm / time.Duration(len(apps))).Round(time.Microsecond))
	fmt.Printf("  warm / cold:                             %10.4f\n", ratio(warm, cold))
	fmt.Printf("  ls-remote, unchanged repo (median of 20): %9s  = %6.2fx baseline\n",
		lsRemote[len(lsRemote)/2].Round(time.Microsecond), ratio(lsRemote[len(lsRemote)/2], baseline))
	fmt.Printf("  heap held by caches after cold render:   %7.1f MiB (%.1f KiB per app)\n",
		float64(heapAfter-heapBefore)/(1<<20), float64(heapAfter-heapBefore)/1024/float64(len(apps)))
	st := git.Stats()
	fmt.Printf("  git: %d ls-remote, %d fetch, %d clone, %d checkout\n", st.LsRemotes, st.Fetches, st.Clones, st.Checkouts)
	return nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// parseAllYAML is the baseline: the least work any renderer must do.
func parseAllYAML(root string) (time.Duration, error) {
	start := time.Now()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				return nil // templates are not YAML before rendering; the baseline skips them
			}
		}
		return nil
	})
	return time.Since(start), err
}

// buildRepo commits n applications, a third of each kind in rotation.
func buildRepo(dir string, n int) ([]app, error) {
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		return nil, err
	}
	var apps []app
	files := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("app-%03d", i)
		switch i % 5 {
		case 0, 1: // directory
			p := "directory/" + name
			files[p+"/deploy.yaml"] = deployment(name)
			files[p+"/service.yaml"] = service(name)
			files[p+"/config.yaml"] = configMap(name)
			apps = append(apps, app{name, p, "directory"})
		case 2, 3: // kustomize overlay on a shared base
			p := "kustomize/" + name
			files[p+"/kustomization.yaml"] = "resources:\n- ../base\nnamePrefix: " + name + "-\nimages:\n- name: nginx\n  newTag: \"1.27\"\ncommonLabels:\n  app.kubernetes.io/instance: " + name + "\n"
			apps = append(apps, app{name, p, "kustomize"})
		case 4: // helm
			p := "helm/" + name
			files[p+"/Chart.yaml"] = "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n"
			files[p+"/values.yaml"] = "replicas: 2\nimage: nginx:1.27\n"
			files[p+"/templates/deploy.yaml"] = helmDeployment
			files[p+"/templates/service.yaml"] = helmService
			apps = append(apps, app{name, p, "helm"})
		}
	}
	files["kustomize/base/kustomization.yaml"] = "resources:\n- deploy.yaml\n- service.yaml\n- config.yaml\n"
	files["kustomize/base/deploy.yaml"] = deployment("web")
	files["kustomize/base/service.yaml"] = service("web")
	files["kustomize/base/config.yaml"] = configMap("web")

	wt, err := repo.Worktree()
	if err != nil {
		return nil, err
	}
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	if err := wt.AddGlob("."); err != nil {
		return nil, err
	}
	_, err = wt.Commit("apps", &git.CommitOptions{Author: &object.Signature{Name: "bench", Email: "bench@example.com", When: time.Now()}})
	return apps, err
}

func deployment(name string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
spec:
  replicas: 2
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: 10m, memory: 32Mi}}
`
}

func service(name string) string {
	return "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + name + "\nspec:\n  selector: {app: " + name + "}\n  ports: [{port: 80, targetPort: 80}]\n"
}

func configMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "-config\ndata:\n  LOG_LEVEL: info\n  FEATURE_X: \"true\"\n"
}

const helmDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: web
        image: {{ .Values.image }}
`

const helmService = `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80}]
`
