package testcluster

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TokenConfig returns a config that reaches the cluster as the
// ServiceAccount namespace/name and nothing else: the cluster's CA and an
// hour's token from the TokenRequest API.
func (c *Cluster) TokenConfig(t testing.TB, namespace, name string) *rest.Config {
	t.Helper()
	token, err := kubernetes.NewForConfigOrDie(c.Config).CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(c.Config)
	cfg.BearerToken = token.Status.Token
	return cfg
}
