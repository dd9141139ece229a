package reposerver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/source"
)

// Users keep their Argo CD repository Secrets; Skiff reads them from the
// cluster as they are.
func TestSecretCredentialsReadArgoCDRepositorySecrets(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := []*corev1.Secret{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "private-repo", Namespace: ns,
				Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository"}},
			StringData: map[string]string{"url": "https://git.example.com/team/app.git", "username": "deploy", "password": "s3cret"},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "org-creds", Namespace: ns,
				Labels: map[string]string{"argocd.argoproj.io/secret-type": "repo-creds"}},
			StringData: map[string]string{"url": "https://git.example.com/org/", "username": "bot", "password": "t0ken"},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "unlabelled", Namespace: ns},
			StringData: map[string]string{"url": "https://git.example.com/other/x.git", "username": "nobody", "password": "x"},
		},
	}
	for _, s := range secrets {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	lookup := SecretCredentials(c, ns)
	tests := map[string]struct {
		url  string
		want source.Credentials
	}{
		"a repository secret matches its URL": {
			url: "https://git.example.com/team/app.git", want: source.Credentials{Username: "deploy", Password: "s3cret"}},
		"a repo-creds secret matches by prefix": {
			url: "https://git.example.com/org/service.git", want: source.Credentials{Username: "bot", Password: "t0ken"}},
		"a secret without the label is ignored": {
			url: "https://git.example.com/other/x.git", want: source.Credentials{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := lookup(ctx, tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if got.Username != tc.want.Username || got.Password != tc.want.Password {
				t.Errorf("got user %q password set=%v, want %q", got.Username, got.Password != "", tc.want.Username)
			}
		})
	}
}
