package render

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.0
      - name: side
        image: registry.local:5000/side:1.0
`

func kustomizeRoot(t *testing.T, kustomization string) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"base/deployment.yaml":    deployment,
		"base/kustomization.yaml": "resources: [deployment.yaml]\n",
		"app/kustomization.yaml":  kustomization,
		"app/patch.yaml":          "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {minReadySeconds: 7}\n",
		"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations: {component: used}\n",
	})
	return root
}

func field(t *testing.T, obj *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRenderKustomizeOverrides(t *testing.T) {
	tests := map[string]struct {
		kustomization string
		overrides     v1alpha1.ApplicationSourceKustomize
		check         func(t *testing.T, d *unstructured.Unstructured)
	}{
		"without overrides the base is built": {
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if d.GetName() != "web" {
					t.Errorf("name = %q", d.GetName())
				}
			},
		},
		"namePrefix and nameSuffix rename the objects": {
			overrides: v1alpha1.ApplicationSourceKustomize{NamePrefix: "pre-", NameSuffix: "-suf"},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if d.GetName() != "pre-web-suf" {
					t.Errorf("name = %q, want pre-web-suf", d.GetName())
				}
			},
		},
		"images accept name:tag, name=newname:tag and name@digest": {
			kustomization: "resources: [../base]\nimages:\n- {name: nginx, newTag: '0.1'}\n",
			overrides: v1alpha1.ApplicationSourceKustomize{Images: []string{
				"nginx=my.registry/nginx:2.0",
				"registry.local:5000/side@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			}},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				cs := field(t, d, "spec", "template", "spec", "containers").([]any)
				got := []any{cs[0].(map[string]any)["image"], cs[1].(map[string]any)["image"]}
				want := []any{"my.registry/nginx:2.0", "registry.local:5000/side@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("images (-want +got):\n%s", diff)
				}
			},
		},
		"an image name:tag sets the tag": {
			overrides: v1alpha1.ApplicationSourceKustomize{Images: []string{"nginx:3.0"}},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				cs := field(t, d, "spec", "template", "spec", "containers").([]any)
				if got := cs[0].(map[string]any)["image"]; got != "nginx:3.0" {
					t.Errorf("image = %v, want nginx:3.0", got)
				}
			},
		},
		"commonLabels reach metadata and selectors": {
			overrides: v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"team": "a"}},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if d.GetLabels()["team"] != "a" || field(t, d, "spec", "selector", "matchLabels", "team") != "a" {
					t.Errorf("labels = %v, selector = %v", d.GetLabels(), field(t, d, "spec", "selector"))
				}
			},
		},
		"labelWithoutSelector leaves selectors alone": {
			overrides: v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"team": "a"}, LabelWithoutSelector: true},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if d.GetLabels()["team"] != "a" || field(t, d, "spec", "selector", "matchLabels", "team") != nil {
					t.Errorf("labels = %v, selector = %v", d.GetLabels(), field(t, d, "spec", "selector"))
				}
			},
		},
		"commonAnnotations are added, with envsubst": {
			overrides: v1alpha1.ApplicationSourceKustomize{
				CommonAnnotations:         map[string]string{"owner": "app-${ARGOCD_APP_NAME}"},
				CommonAnnotationsEnvsubst: true,
			},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if got := d.GetAnnotations()["owner"]; got != "app-guestbook" {
					t.Errorf("annotation owner = %q, want app-guestbook", got)
				}
			},
		},
		"namespace sets the namespace": {
			overrides: v1alpha1.ApplicationSourceKustomize{Namespace: "team-a"},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if d.GetNamespace() != "team-a" {
					t.Errorf("namespace = %q", d.GetNamespace())
				}
			},
		},
		"replicas set the count by name": {
			overrides: v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{
				{Name: "web", Count: intstr.FromString("4")},
			}},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if got := field(t, d, "spec", "replicas"); got != int64(4) {
					t.Errorf("replicas = %v (%T), want 4", got, got)
				}
			},
		},
		"patches and components are appended": {
			overrides: v1alpha1.ApplicationSourceKustomize{
				Patches: []v1alpha1.KustomizePatch{
					{Path: "patch.yaml"},
					{Patch: `[{"op": "add", "path": "/spec/paused", "value": true}]`, Target: &v1alpha1.KustomizeSelector{Kind: "Deployment", Name: "web"}},
				},
				Components:              []string{"../comp", "../missing"},
				IgnoreMissingComponents: true,
			},
			check: func(t *testing.T, d *unstructured.Unstructured) {
				if field(t, d, "spec", "minReadySeconds") != int64(7) || field(t, d, "spec", "paused") != true {
					t.Errorf("spec = %v", field(t, d, "spec"))
				}
				if d.GetAnnotations()["component"] != "used" {
					t.Errorf("annotations = %v", d.GetAnnotations())
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := tc.kustomization
			if k == "" {
				k = "resources: [../base]\n"
			}
			root := kustomizeRoot(t, k)
			o := tc.overrides
			got, err := Render(context.Background(), Request{
				Root: root, Path: "app", AppName: "guestbook",
				Source: v1alpha1.ApplicationSource{Kustomize: &o},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].File != "app/kustomization.yaml" {
				t.Fatalf("Render() = %v, want one manifest from app/kustomization.yaml", summary(got))
			}
			tc.check(t, got[0].Object)
		})
	}
}

func TestRenderKustomizeRefuses(t *testing.T) {
	tests := map[string]struct {
		kustomization string
		files         map[string]string
		overrides     *v1alpha1.ApplicationSourceKustomize
		wantErr       []string
	}{
		"a remote base over https": {
			kustomization: "resources:\n- https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v1.0.6\n",
			wantErr:       []string{"app/kustomization.yaml", "remote reference", "no network access"},
		},
		"a github shorthand base in a nested kustomization": {
			kustomization: "resources: [../base]\n",
			files:         map[string]string{"base/kustomization.yaml": "resources: [github.com/org/repo//deploy]\n"},
			wantErr:       []string{"base/kustomization.yaml", "remote reference"},
		},
		"a remote patch file": {
			kustomization: "resources: [../base]\npatches:\n- path: http://example.com/patch.yaml\n",
			wantErr:       []string{"remote reference", "http://example.com/patch.yaml"},
		},
		"a remote component added by an override": {
			kustomization: "resources: [../base]\n",
			overrides:     &v1alpha1.ApplicationSourceKustomize{Components: []string{"git@github.com:org/repo.git//comp"}},
			wantErr:       []string{"remote reference"},
		},
		"a base outside the repository": {
			kustomization: "resources: [../../../../../../../../etc]\n",
			wantErr:       []string{"app/kustomization.yaml", "kustomize build"},
		},
		"a label already set without force": {
			kustomization: "resources: [../base]\ncommonLabels: {team: b}\n",
			overrides:     &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"team": "a"}},
			wantErr:       []string{"app/kustomization.yaml", `label "team" is already set`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := kustomizeRoot(t, tc.kustomization)
			writeTree(t, root, tc.files)
			_, err := Render(context.Background(), Request{Root: root, Path: "app", Source: v1alpha1.ApplicationSource{Kustomize: tc.overrides}})
			if err == nil {
				t.Fatal("Render() succeeded, want an error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Render() error = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

// A worker keeps the files of the last immutable root it read (a commit's
// checkout): the next Kustomize render of that commit reads no file. A
// root that may change is read every time.
func TestKustomizeKeepsAnImmutableTreeBetweenRenders(t *testing.T) {
	tests := map[string]struct {
		immutable bool
		want      string
	}{
		"an immutable root is read once": {immutable: true, want: "1"},
		"a mutable root is read again":   {immutable: false, want: "2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pool := NewPool(PoolOptions{Size: 1})
			root := t.TempDir()
			writeTree(t, root, map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml]\n",
				"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {version: \"1\"}\n",
			})
			req := Request{Root: root, Path: "app", ImmutableRoot: tc.immutable, Workers: pool}
			if _, err := Render(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			// Breaks the promise on purpose, to see whether the file is read.
			writeTree(t, root, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {version: \"2\"}\n"})
			out, err := Render(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := field(t, out[0].Object, "data", "version"); got != tc.want {
				t.Errorf("second render saw version %v, want %s", got, tc.want)
			}
		})
	}
}
