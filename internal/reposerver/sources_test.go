package reposerver

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo/helmrepotest"
	"github.com/skiffcd/skiff/internal/testgit"
)

const chartTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  env: {{ .Values.env | quote }}
`

// Argo CD's multi-source pattern: a chart from a Helm repository, with value
// files from a git repository referenced as $values.
func TestChartFromHelmRepositoryWithValueFilesFromAnotherSource(t *testing.T) {
	ctx := context.Background()
	charts := helmrepotest.NewRepo(t, "reader", "chart-pass", helmrepotest.Chart{
		Name: "settings", Version: "1.2.0",
		Files: map[string]string{"values.yaml": "env: default\n", "templates/cm.yaml": chartTemplate},
	}, helmrepotest.Chart{
		Name: "settings", Version: "2.0.0",
		Files: map[string]string{"values.yaml": "env: default\n", "templates/cm.yaml": strings.ReplaceAll(chartTemplate, "settings", "v2")},
	})
	values := testgit.New(t)
	values.Commit(map[string]string{"envs/prod.yaml": "env: production\n"})

	clock := &fakeClock{now: time.Now()}
	server, _ := newTestServer(t, clock, Options{
		Credentials: func(_ context.Context, url string) (source.Credentials, error) {
			if url == charts.URL {
				return source.Credentials{Username: "reader", Password: "chart-pass"}, nil
			}
			return source.Credentials{}, nil
		},
	})
	resp, err := server.Manifests(ctx, Request{AppName: "shop", Namespace: "prod", Sources: []v1alpha1.ApplicationSource{
		{RepoURL: charts.URL, Chart: "settings", TargetRevision: ">=1.0.0 <2.0.0",
			Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/envs/prod.yaml"}}},
		{RepoURL: values.URL(), TargetRevision: "HEAD", Ref: "values"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Manifests) != 1 {
		t.Fatalf("got %d objects, want 1 (the ref-only source renders nothing)", len(resp.Manifests))
	}
	obj := resp.Manifests[0].Object
	env, _, _ := unstructured.NestedString(obj.Object, "data", "env")
	if obj.GetName() != "shop-settings" || env != "production" {
		t.Errorf("got %s with env=%q, want shop-settings with env=production", obj.GetName(), env)
	}
	if resp.Revisions[0] != "1.2.0" || len(resp.Revisions[1]) != 40 {
		t.Errorf("revisions %v, want chart 1.2.0 and a commit SHA", resp.Revisions)
	}
}

func TestWrongHelmRepositoryCredentialsAreAClearErrorWithoutThePassword(t *testing.T) {
	charts := helmrepotest.NewRepo(t, "reader", "right-pass", helmrepotest.Chart{
		Name: "settings", Version: "1.0.0", Files: map[string]string{"templates/cm.yaml": chartTemplate},
	})
	clock := &fakeClock{now: time.Now()}
	server, _ := newTestServer(t, clock, Options{Credentials: StaticCredentials(source.Credentials{Username: "reader", Password: "wrong-pass"})})
	_, err := server.Manifests(context.Background(), Request{AppName: "a", Sources: []v1alpha1.ApplicationSource{
		{RepoURL: charts.URL, Chart: "settings", TargetRevision: "1.0.0"},
	}})
	if err == nil {
		t.Fatal("wrong credentials were accepted")
	}
	if strings.Contains(err.Error(), "wrong-pass") || !strings.Contains(err.Error(), "401") {
		t.Errorf("error should report the 401 and hide the password: %v", err)
	}
}

func TestObjectsDefinedByTwoSourcesAreRefused(t *testing.T) {
	a, b := testgit.New(t), testgit.New(t)
	a.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	b.Commit(map[string]string{"app/cm.yaml": configMapYAML})
	clock := &fakeClock{now: time.Now()}
	server, _ := newTestServer(t, clock, Options{})
	_, err := server.Manifests(context.Background(), Request{AppName: "a", Sources: []v1alpha1.ApplicationSource{
		{RepoURL: a.URL(), Path: "app"}, {RepoURL: b.URL(), Path: "app"},
	}})
	if err == nil || !strings.Contains(err.Error(), "duplicate object ConfigMap settings") {
		t.Errorf("got %v, want a duplicate object error", err)
	}
}
