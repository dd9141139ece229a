package clusterops

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clusters"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/opserr"
)

func newOps(t *testing.T) (Ops, client.Client) {
	t.Helper()
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "clusterops-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return Ops{Reader: c, Client: c, Namespace: ns.Name}, c
}

func TestSaveGetListDelete(t *testing.T) {
	ops, c := newOps(t)
	ctx := context.Background()
	prod := clusters.Cluster{Name: "prod", Server: "https://prod.example.com:6443", Namespaces: []string{"web"},
		Labels: map[string]string{"env": "prod"}, Config: clusters.Config{BearerToken: "tok-s3cret"}}

	saved, err := ops.Save(ctx, prod, false)
	if err != nil {
		t.Fatal(err)
	}
	wantSecret, _ := clusters.SecretName(prod.Server)
	if saved.SecretName != wantSecret || saved.Config.BearerToken == "tok-s3cret" {
		t.Errorf("saved %+v, want Secret %s and a masked token", saved, wantSecret)
	}
	var secret corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: ops.Namespace, Name: wantSecret}, &secret); err != nil {
		t.Fatal(err)
	}
	if got, err := clusters.FromSecret(&secret); err != nil || got.Config.BearerToken != "tok-s3cret" || got.Labels["env"] != "prod" {
		t.Errorf("the Secret reads back as %v (%v)", got, err)
	}

	if _, err := ops.Save(ctx, prod, false); !errors.Is(err, opserr.ErrConflict) {
		t.Errorf("adding it again: %v, want a conflict", err)
	}
	prod.Project = "team-a"
	if _, err := ops.Save(ctx, prod, true); err != nil {
		t.Errorf("upsert: %v", err)
	}

	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ops.Namespace},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Name: "prod", Namespace: "web"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/r.git", Path: "."}}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	got, err := ops.Get(ctx, "https://prod.example.com:6443/")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "prod" || got.Project != "team-a" || strings.Join(got.Applications, ",") != "web" || got.ConnectionState.Status != "Unknown" {
		t.Errorf("Get = %+v", got)
	}

	list, err := ops.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(list)
	if strings.Contains(string(body), "s3cret") {
		t.Errorf("the list shows a credential: %s", body)
	}
	if len(list.Items) != 2 || list.Items[0].Name != "in-cluster" || list.Items[1].Name != "prod" {
		t.Errorf("list = %s", body)
	}

	if err := ops.Delete(ctx, "prod", false); !errors.Is(err, opserr.ErrConflict) || !strings.Contains(err.Error(), "web") {
		t.Errorf("removing a cluster an app targets: %v, want a conflict naming the app", err)
	}
	if err := ops.Delete(ctx, "in-cluster", true); !errors.Is(err, opserr.ErrInvalid) {
		t.Errorf("removing the implicit cluster: %v, want ErrInvalid", err)
	}
	if err := ops.Delete(ctx, "prod", true); err != nil {
		t.Fatalf("forced removal: %v", err)
	}
	if _, err := ops.Get(ctx, "prod"); !errors.Is(err, opserr.ErrNotFound) {
		t.Errorf("after removal: %v, want not found", err)
	}
}

func TestUpdateKeepsTheServer(t *testing.T) {
	ops, _ := newOps(t)
	ctx := context.Background()
	if _, err := ops.Save(ctx, clusters.Cluster{Name: "a", Server: "https://a.example.com"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Update(ctx, "a", clusters.Cluster{Name: "a", Server: "https://b.example.com"}); !errors.Is(err, opserr.ErrInvalid) {
		t.Errorf("moving a cluster to a new server: %v, want ErrInvalid", err)
	}
	got, err := ops.Update(ctx, "a", clusters.Cluster{Name: "renamed", Config: clusters.Config{BearerToken: "t"}})
	if err != nil || got.Name != "renamed" || got.Server != "https://a.example.com" {
		t.Errorf("Update = %+v, %v", got, err)
	}
}
