package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/render"
)

// helmOnly are the labels and annotations the chart adds to the objects of
// manifests/: Helm's bookkeeping, and the CRDs kept on uninstall.
var (
	helmOnlyLabels      = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"}
	helmOnlyAnnotations = []string{"helm.sh/resource-policy"}
)

// The chart rendered as Skiff renders charts (Helm v4's engine) equals the
// generated manifest, object for object, modulo Helm's labels.
func TestChartRendersTheInstallManifests(t *testing.T) {
	cases := map[string]struct {
		params   []v1alpha1.HelmParameter
		manifest string
	}{
		"the defaults render install.yaml": {
			manifest: "manifests/install.yaml",
		},
		"ha.enabled renders ha/install.yaml": {
			params:   []v1alpha1.HelmParameter{{Name: "ha.enabled", Value: "true"}},
			manifest: "manifests/ha/install.yaml",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := renderChart(t, tc.params)
			want := readManifest(t, "../../"+tc.manifest)
			for key, w := range want {
				g, ok := got[key]
				if !ok {
					t.Errorf("the chart renders no %s", key)
					continue
				}
				if g != w {
					t.Errorf("%s differs:\nchart:    %s\nmanifest: %s", key, g, w)
				}
			}
			for key := range got {
				if _, ok := want[key]; !ok {
					t.Errorf("the chart renders %s, which %s lacks", key, tc.manifest)
				}
			}
		})
	}
}

// The chart's options reach the objects they configure.
func TestChartValues(t *testing.T) {
	cases := map[string]struct {
		params []v1alpha1.HelmParameter
		key    string
		want   []string
		absent []string
	}{
		"insecure adds --insecure and the ingress uses the http port": {
			params: []v1alpha1.HelmParameter{{Name: "server.insecure", Value: "true"}, {Name: "ingress.enabled", Value: "true"},
				{Name: "ingress.className", Value: "alb"}},
			key:  "networking.k8s.io/v1/Ingress/argocd/skiff-server",
			want: []string{`"ingressClassName":"alb"`, `"port":{"name":"http"}`},
		},
		"a TLS Secret is mounted and named in the flags": {
			params: []v1alpha1.HelmParameter{{Name: "server.tls.secretName", Value: "skiff-tls"}},
			key:    "apps/v1/Deployment/argocd/skiff-server",
			want:   []string{`"--tls-cert=/etc/skiff/tls/tls.crt"`, `"secretName":"skiff-tls"`},
			absent: []string{`"--insecure"`},
		},
		"RBAC settings go to argocd-rbac-cm": {
			params: []v1alpha1.HelmParameter{{Name: "config.rbac.policy\\.default", Value: "role:readonly"}},
			key:    "v1/ConfigMap/argocd/argocd-rbac-cm",
			want:   []string{`"data":{"policy.default":"role:readonly"}`},
		},
		"OIDC goes to argocd-cm": {
			params: []v1alpha1.HelmParameter{{Name: "config.cm.oidc\\.config", Value: "name: Okta"}},
			key:    "v1/ConfigMap/argocd/argocd-cm",
			want:   []string{`"oidc.config":"name: Okta"`},
		},
		"the ServiceMonitor selects the metrics Service": {
			params: []v1alpha1.HelmParameter{{Name: "metrics.serviceMonitor.enabled", Value: "true"}},
			key:    "monitoring.coreos.com/v1/ServiceMonitor/argocd/skiff-server-metrics",
			want:   []string{`"app.kubernetes.io/name":"skiff-server-metrics"`, `"port":"metrics"`},
		},
		"the image tag and the service type are set": {
			params: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "v1.2.3"}, {Name: "service.type", Value: "LoadBalancer"}},
			key:    "apps/v1/Deployment/argocd/skiff-server",
			want:   []string{`"image":"ghcr.io/skiffcd/skiff:v1.2.3"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := renderChart(t, tc.params)[tc.key]
			if !ok {
				t.Fatalf("the chart renders no %s", tc.key)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %s:\n%s", tc.key, w, got)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("%s has %s:\n%s", tc.key, a, got)
				}
			}
		})
	}
	if crds := renderChart(t, []v1alpha1.HelmParameter{{Name: "crds.install", Value: "false"}}); slices.ContainsFunc(mapsKeys(crds), func(k string) bool {
		return strings.Contains(k, "CustomResourceDefinition")
	}) {
		t.Error("crds.install=false still renders CRDs")
	}
}

// renderChart renders charts/skiff into argocd, release skiff, and returns
// its objects by key, normalized.
func renderChart(t *testing.T, params []v1alpha1.HelmParameter) map[string]string {
	t.Helper()
	out, err := render.Render(context.Background(), render.Request{
		Root: "../..", Path: "charts/skiff", AppName: "skiff", Namespace: "argocd",
		Source: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{Parameters: params}},
	})
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]string{}
	for _, m := range out {
		add(t, objs, m.Object)
	}
	return objs
}

func readManifest(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	objs := map[string]string{}
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			add(t, objs, u)
		}
	}
}

// add files u under apiVersion/kind/namespace/name as JSON, without the
// chart's own labels and annotations.
func add(t *testing.T, objs map[string]string, u *unstructured.Unstructured) {
	t.Helper()
	for _, fields := range [][]string{{"metadata"}, {"spec", "template", "metadata"}} {
		for _, f := range []struct {
			name string
			keys []string
		}{{"labels", helmOnlyLabels}, {"annotations", helmOnlyAnnotations}} {
			m, found, _ := unstructured.NestedStringMap(u.Object, append(fields, f.name)...)
			if !found {
				continue
			}
			for _, k := range f.keys {
				delete(m, k)
			}
			if len(m) == 0 {
				unstructured.RemoveNestedField(u.Object, append(fields, f.name)...)
			} else if err := unstructured.SetNestedStringMap(u.Object, m, append(fields, f.name)...); err != nil {
				t.Fatal(err)
			}
		}
	}
	js, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Join([]string{u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()}, "/")
	if _, dup := objs[key]; dup {
		t.Fatalf("two objects %s", key)
	}
	objs[key] = string(js)
}

func mapsKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
