package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
	"github.com/skiffcd/skiff/internal/source/helmrepo/helmrepotest"
)

// helmTestChart is a chart whose ConfigMap reports what the render saw.
var helmTestChart = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	"values.yaml": `greeting: hello
replicas: 1
port: 80
extra: ""
`,
	"templates/_helpers.tpl": `{{- define "app.name" -}}{{ .Release.Name }}-cm{{- end -}}`,
	"templates/NOTES.txt":    "Thanks for installing {{ .Release.Name }}.",
	"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "app.name" . }}
  namespace: {{ .Release.Namespace }}
data:
  greeting: {{ .Values.greeting | quote }}
  replicas: {{ .Values.replicas | quote }}
  portKind: {{ kindOf .Values.port | quote }}
  port: {{ .Values.port | quote }}
  extra: {{ .Values.extra | quote }}
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  hasRollout: {{ .Capabilities.APIVersions.Has "argoproj.io/v1alpha1/Rollout" | quote }}
`,
	"templates/empty.yaml": "{{- if .Values.never }}\nkind: Never\n{{- end }}\n---\n# only a comment\n",
	"templates/hooks.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
---
apiVersion: v1
kind: Pod
metadata:
  name: smoke-test
  annotations:
    helm.sh/hook: test
`,
	"crds/widgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
`,
}

func TestRenderHelm(t *testing.T) {
	repo := helmrepotest.NewRepo(t, "", "",
		helmrepotest.Chart{Name: "remote", Version: "1.0.0", Files: map[string]string{
			"templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: remote-{{ .Chart.Version }}\n",
		}},
		helmrepotest.Chart{Name: "remote", Version: "1.4.0", Files: map[string]string{
			"templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: remote-{{ .Chart.Version }}\n",
		}},
		helmrepotest.Chart{Name: "remote", Version: "2.0.0"},
	)
	repoClient := helmrepo.New(t.TempDir(), repo.Client())
	fetch := func(ctx context.Context, repoURL, chart, version string) (string, error) {
		dir, _, err := repoClient.Fetch(ctx, repoURL, chart, version, helmrepo.Credentials{})
		return dir, err
	}

	outside := t.TempDir()
	writeHelmFiles(t, outside, map[string]string{"secret.yaml": "greeting: stolen\n"})

	tests := map[string]struct {
		// chartDir is where the test chart goes, relative to the root.
		chartDir string
		// files are added to (or replace) the root's files; REPO is the test
		// repository's URL, OUTSIDE a directory outside the root.
		files map[string]string
		// links are symlinks to create: path relative to the root → target.
		links map[string]string
		helm  *v1alpha1.ApplicationSourceHelm
		req   func(r *Request)

		wantData    map[string]string
		wantObjects []string
		wantErr     string
	}{
		"the release name and namespace default to the application's": {
			wantObjects: []string{
				"CustomResourceDefinition/widgets.example.com crds/widgets.yaml",
				"ConfigMap/myapp-cm templates/configmap.yaml",
				"Job/migrate templates/hooks.yaml",
				"Pod/smoke-test templates/hooks.yaml",
			},
			wantData: map[string]string{"greeting": "hello", "portKind": "float64"},
		},
		"releaseName and namespace options win over the application's": {
			helm:     &v1alpha1.ApplicationSourceHelm{ReleaseName: "rel", Namespace: "other"},
			wantData: map[string]string{"greeting": "hello"},
			req: func(r *Request) {
				r.AppName = "unused"
			},
		},
		"value files merge in order after the chart's values": {
			files: map[string]string{
				"values-a.yaml": "greeting: from-a\nreplicas: 3\n",
				"values-b.yaml": "greeting: from-b\n",
			},
			helm:     &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-a.yaml", "values-b.yaml"}},
			wantData: map[string]string{"greeting": "from-b", "replicas": "3"},
		},
		"a value file elsewhere in the root is read relative to the chart": {
			chartDir: "charts/app",
			files:    map[string]string{"envs/prod.yaml": "greeting: prod\n"},
			helm:     &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"../../envs/prod.yaml"}},
			wantData: map[string]string{"greeting": "prod"},
		},
		"a $ref value file is read from the ref's checkout": {
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/env/prod.yaml"}},
			req: func(r *Request) {
				refRoot := t.TempDir()
				writeHelmFiles(t, refRoot, map[string]string{"env/prod.yaml": "greeting: from-ref\n"})
				r.RefRoots = map[string]string{"values": refRoot}
			},
			wantData: map[string]string{"greeting": "from-ref"},
		},
		"a $ref value file may not leave the ref's checkout": {
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/../secret.yaml"}},
			req: func(r *Request) {
				r.RefRoots = map[string]string{"values": t.TempDir()}
			},
			wantErr: "leaves",
		},
		"an unknown ref is an error": {
			helm:    &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$nope/values.yaml"}},
			wantErr: `no source has ref "nope"`,
		},
		"a value file climbing out of the root is refused": {
			helm:    &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"../secret.yaml"}},
			wantErr: "leaves",
		},
		"an absolute value file is refused": {
			helm:    &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"OUTSIDE/secret.yaml"}},
			wantErr: "absolute",
		},
		"a value file symlinked out of the root is refused": {
			chartDir: "app",
			links:    map[string]string{"env/linked.yaml": "OUTSIDE/secret.yaml"},
			helm:     &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"../env/linked.yaml"}},
			wantErr:  `value file "../env/linked.yaml"`,
		},
		"a value file URL is read from what the caller fetched": {
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"https://example.com/values.yaml"}},
			req: func(r *Request) {
				r.RemoteValueFiles = map[string][]byte{"https://example.com/values.yaml": []byte("greeting: fetched\n")}
			},
			wantData: map[string]string{"greeting": "fetched"},
		},
		"a value file URL the caller did not fetch is an error without its credentials": {
			helm:    &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"https://user:pw@example.com/values.yaml"}},
			wantErr: `value file "https://example.com/values.yaml": file does not exist (not fetched before the render)`,
		},
		"a value file URL the caller found missing is skipped with ignoreMissingValueFiles": {
			helm:     &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"https://example.com/values.yaml"}, IgnoreMissingValueFiles: true},
			wantData: map[string]string{"greeting": "hello"},
		},
		"a missing value file is an error": {
			helm:    &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"missing.yaml"}},
			wantErr: `value file "missing.yaml"`,
		},
		"a missing value file is skipped with ignoreMissingValueFiles": {
			helm:     &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"missing.yaml"}, IgnoreMissingValueFiles: true},
			wantData: map[string]string{"greeting": "hello"},
		},
		"values win over value files": {
			files:    map[string]string{"values-a.yaml": "greeting: from-file\nreplicas: 3\n"},
			helm:     &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-a.yaml"}, Values: "greeting: inline\n"},
			wantData: map[string]string{"greeting": "inline", "replicas": "3"},
		},
		"valuesObject replaces values": {
			helm: &v1alpha1.ApplicationSourceHelm{
				Values:       "greeting: inline\nreplicas: 5\n",
				ValuesObject: &runtime.RawExtension{Raw: []byte(`{"greeting":"object"}`)},
			},
			wantData: map[string]string{"greeting": "object", "replicas": "1"},
		},
		"parameters win over values and forceString keeps strings": {
			helm: &v1alpha1.ApplicationSourceHelm{
				Values: "greeting: inline\n",
				Parameters: []v1alpha1.HelmParameter{
					{Name: "greeting", Value: "a,b"},
					{Name: "port", Value: "8080", ForceString: true},
					{Name: "replicas", Value: "4"},
				},
			},
			wantData: map[string]string{"greeting": "a,b", "port": "8080", "portKind": "string", "replicas": "4"},
		},
		"a parameter without forceString is typed": {
			helm:     &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "port", Value: "8080"}}},
			wantData: map[string]string{"port": "8080", "portKind": "int64"},
		},
		"fileParameters win over parameters": {
			files: map[string]string{"files/extra.txt": "line one, with a comma\n"},
			helm: &v1alpha1.ApplicationSourceHelm{
				Parameters:     []v1alpha1.HelmParameter{{Name: "extra", Value: "from-param"}},
				FileParameters: []v1alpha1.HelmFileParameter{{Name: "extra", Path: "files/extra.txt"}},
			},
			wantData: map[string]string{"extra": "line one, with a comma\n"},
		},
		"a fileParameter outside the root is refused": {
			helm:    &v1alpha1.ApplicationSourceHelm{FileParameters: []v1alpha1.HelmFileParameter{{Name: "extra", Path: "../secret.yaml"}}},
			wantErr: "leaves",
		},
		"skipCrds drops the crds directory": {
			helm: &v1alpha1.ApplicationSourceHelm{SkipCrds: true},
			wantObjects: []string{
				"ConfigMap/myapp-cm templates/configmap.yaml",
				"Job/migrate templates/hooks.yaml",
				"Pod/smoke-test templates/hooks.yaml",
			},
		},
		"skipTests drops test hooks and keeps the others": {
			helm: &v1alpha1.ApplicationSourceHelm{SkipTests: true},
			wantObjects: []string{
				"CustomResourceDefinition/widgets.example.com crds/widgets.yaml",
				"ConfigMap/myapp-cm templates/configmap.yaml",
				"Job/migrate templates/hooks.yaml",
			},
		},
		"the cluster's kube version and API versions are capabilities": {
			req: func(r *Request) {
				r.KubeVersion = "v1.31.4"
				r.APIVersions = []string{"argoproj.io/v1alpha1/Rollout"}
			},
			wantData: map[string]string{"kubeVersion": "v1.31.4", "hasRollout": "true"},
		},
		"the source's kube version and API versions win over the cluster's": {
			helm: &v1alpha1.ApplicationSourceHelm{KubeVersion: "1.29.0", APIVersions: []string{"argoproj.io/v1alpha1/Rollout"}},
			req: func(r *Request) {
				r.KubeVersion = "v1.31.4"
				r.APIVersions = []string{"apps/v1"}
			},
			wantData: map[string]string{"kubeVersion": "v1.29.0", "hasRollout": "true"},
		},
		"without API versions a custom kind is absent": {
			wantData: map[string]string{"hasRollout": "false"},
		},
		"a template rendering invalid YAML is named in the error": {
			files:   map[string]string{"templates/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n"},
			wantErr: "template templates/broken.yaml",
		},
		"a template object without a kind is an error": {
			files:   map[string]string{"templates/nokind.yaml": "apiVersion: v1\nmetadata:\n  name: x\n"},
			wantErr: "template templates/nokind.yaml: document 1 has no apiVersion or kind",
		},
		"a chart file symlinked out of the root is refused": {
			links:   map[string]string{"templates/leak.yaml": "OUTSIDE/secret.yaml"},
			wantErr: "templates/leak.yaml: symlink leaves the source root",
		},
		"a chart file symlinked inside the root is read": {
			files: map[string]string{"shared/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"},
			links: map[string]string{"templates/shared.yaml": "../shared/cm.yaml"},
			wantObjects: []string{
				"CustomResourceDefinition/widgets.example.com crds/widgets.yaml",
				"ConfigMap/myapp-cm templates/configmap.yaml",
				"Job/migrate templates/hooks.yaml",
				"Pod/smoke-test templates/hooks.yaml",
				"ConfigMap/shared templates/shared.yaml",
			},
		},
		"a chart's kubeVersion constraint is checked": {
			files:   map[string]string{"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\nkubeVersion: '>=1.40.0-0'\n"},
			req:     func(r *Request) { r.KubeVersion = "v1.31.0" },
			wantErr: "chart requires kubeVersion",
		},
		"a vendored dependency in charts/ is rendered with its values": {
			files: map[string]string{
				"Chart.yaml":                  "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.2.0\n",
				"values.yaml":                 helmTestChart["values.yaml"] + "sub:\n  color: blue\n",
				"charts/sub/Chart.yaml":       "apiVersion: v2\nname: sub\nversion: 0.2.0\n",
				"charts/sub/templates/x.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: sub-{{ .Values.color }}\n",
			},
			helm:        &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true},
			wantObjects: []string{"Secret/sub-blue charts/sub/templates/x.yaml", "ConfigMap/myapp-cm templates/configmap.yaml", "Job/migrate templates/hooks.yaml"},
		},
		"a disabled dependency is not rendered": {
			files: map[string]string{
				"Chart.yaml":                  "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.2.0\n  condition: sub.enabled\n",
				"charts/sub/Chart.yaml":       "apiVersion: v2\nname: sub\nversion: 0.2.0\n",
				"charts/sub/templates/x.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: sub\n",
			},
			helm:        &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true, Values: "sub:\n  enabled: false\n"},
			wantObjects: []string{"ConfigMap/myapp-cm templates/configmap.yaml", "Job/migrate templates/hooks.yaml"},
		},
		"a dependency missing from charts/ is fetched from its Helm repository": {
			files: map[string]string{
				"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: remote\n  version: ^1.0.0\n  repository: REPO\n",
			},
			helm:        &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true},
			wantObjects: []string{"Service/remote-1.4.0 charts/remote/templates/svc.yaml", "ConfigMap/myapp-cm templates/configmap.yaml", "Job/migrate templates/hooks.yaml"},
		},
		"a dependency's Chart.lock version wins over its range": {
			files: map[string]string{
				"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: remote\n  version: ^1.0.0\n  repository: REPO\n",
				"Chart.lock": "dependencies:\n- name: remote\n  version: 1.0.0\n  repository: REPO\ndigest: sha256:0\ngenerated: \"2024-01-01T00:00:00Z\"\n",
			},
			helm:        &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true},
			wantObjects: []string{"Service/remote-1.0.0 charts/remote/templates/svc.yaml", "ConfigMap/myapp-cm templates/configmap.yaml", "Job/migrate templates/hooks.yaml"},
		},
		"a file:// dependency inside the root is loaded": {
			chartDir: "apps/app",
			files: map[string]string{
				"apps/app/Chart.yaml":       "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: 0.1.0\n  repository: file://../../libs/lib\n",
				"libs/lib/Chart.yaml":       "apiVersion: v2\nname: lib\nversion: 0.1.0\n",
				"libs/lib/templates/a.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: lib\n",
			},
			helm:        &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true},
			wantObjects: []string{"ServiceAccount/lib apps/app/charts/lib/templates/a.yaml", "ConfigMap/myapp-cm apps/app/templates/configmap.yaml", "Job/migrate apps/app/templates/hooks.yaml"},
		},
		"a file:// dependency outside the root is refused": {
			files: map[string]string{
				"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: 0.1.0\n  repository: file://../lib\n",
			},
			wantErr: "dependency lib",
		},
		"a dependency without a repository and not vendored is an error": {
			files: map[string]string{
				"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: gone\n  version: 0.1.0\n",
			},
			wantErr: "dependency gone: not in charts/",
		},
		"an OCI dependency not vendored is an error": {
			files: map[string]string{
				"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: oci\n  version: 0.1.0\n  repository: oci://example.com/charts\n",
			},
			wantErr: "vendor it in charts/",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			chartFiles := map[string]string{}
			for k, v := range helmTestChart {
				chartFiles[filepath.Join(tc.chartDir, k)] = v
			}
			for k, v := range tc.files {
				chartFiles[k] = strings.ReplaceAll(v, "REPO", repo.URL)
			}
			writeHelmFiles(t, root, chartFiles)
			for link, target := range tc.links {
				target = strings.ReplaceAll(target, "OUTSIDE", outside)
				p := filepath.Join(root, link)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
			}
			helm := tc.helm
			if helm != nil {
				h := *helm
				for i, vf := range h.ValueFiles {
					h.ValueFiles = append([]string(nil), h.ValueFiles...)
					h.ValueFiles[i] = strings.ReplaceAll(vf, "OUTSIDE", outside)
				}
				helm = &h
			}
			req := Request{
				Root:      root,
				Path:      tc.chartDir,
				AppName:   "myapp",
				Namespace: "dest-ns",
				Source:    v1alpha1.ApplicationSource{Helm: helm},

				FetchDependency: fetch,
			}
			if tc.req != nil {
				tc.req(&req)
			}

			got, err := renderHelm(context.Background(), req, filepath.Join(root, tc.chartDir))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("renderHelm error = %v, want one containing %q", err, tc.wantErr)
				}
				t.Logf("error: %v", err)
				if strings.Contains(err.Error(), root) {
					t.Errorf("error %q names the server's checkout path", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantObjects != nil {
				var objs []string
				for _, m := range got {
					objs = append(objs, m.Object.GetKind()+"/"+m.Object.GetName()+" "+m.File)
				}
				if diff := cmp.Diff(tc.wantObjects, objs); diff != "" {
					t.Errorf("objects (-want +got):\n%s", diff)
				}
			}
			if tc.wantData != nil {
				cm := helmFindConfigMap(t, got)
				wantName, wantNS := "myapp-cm", "dest-ns"
				if tc.helm != nil && tc.helm.ReleaseName != "" {
					wantName = tc.helm.ReleaseName + "-cm"
				}
				if tc.helm != nil && tc.helm.Namespace != "" {
					wantNS = tc.helm.Namespace
				}
				if cm.GetName() != wantName {
					t.Errorf("ConfigMap name = %s, want %s", cm.GetName(), wantName)
				}
				if cm.GetNamespace() != wantNS {
					t.Errorf("ConfigMap namespace = %s, want %s", cm.GetNamespace(), wantNS)
				}
				data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
				for k, want := range tc.wantData {
					if data[k] != want {
						t.Errorf("data.%s = %q, want %q", k, data[k], want)
					}
				}
			}
		})
	}
	if n := repoClient.Stats().IndexDownloads; n != 1 {
		t.Errorf("the dependency repository index was downloaded %d times, want 1", n)
	}
}

func TestRenderHelmStopsWhenCancelled(t *testing.T) {
	root := t.TempDir()
	writeHelmFiles(t, root, helmTestChart)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := renderHelm(ctx, Request{Root: root, AppName: "a"}, root)
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("renderHelm error = %v, want context canceled", err)
	}
}

func helmFindConfigMap(t *testing.T, ms []Manifest) *unstructured.Unstructured {
	t.Helper()
	for _, m := range ms {
		if m.Object.GetKind() == "ConfigMap" && strings.HasSuffix(m.Object.GetName(), "-cm") {
			return m.Object
		}
	}
	t.Fatal("no ConfigMap rendered")
	return nil
}

func writeHelmFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
