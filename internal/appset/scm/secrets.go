package scm

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretsIn reads tokenRef Secrets in namespace (Skiff's) with reader, as
// Client.Secrets: the errors name the Secret and key, never a value.
func SecretsIn(ctx context.Context, reader client.Reader, namespace string) func(name, key string) (string, error) {
	return secretsIn(ctx, reader, namespace, false)
}

// Client is a Client under p reading tokenRef Secrets in namespace with
// reader, only those labelled as SCM credentials in strict mode.
func (p Policy) Client(ctx context.Context, reader client.Reader, namespace string) Client {
	return Client{Secrets: secretsIn(ctx, reader, namespace, p.TokenRefStrict), Policy: p}
}

func secretsIn(ctx context.Context, reader client.Reader, namespace string, strict bool) func(name, key string) (string, error) {
	return func(name, key string) (string, error) {
		if reader == nil {
			return "", errors.New("tokenRef Secrets are not available here")
		}
		var s corev1.Secret
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
			return "", fmt.Errorf("reading the Secret %s: %w", name, err)
		}
		if strict && s.Labels[SCMCredsLabel] != SCMCredsType {
			return "", fmt.Errorf("the Secret %s is not labelled %s: %s, which the server's --appset-tokenref-strict-mode asks of tokenRef Secrets", name, SCMCredsLabel, SCMCredsType)
		}
		v, ok := s.Data[key]
		if !ok {
			return "", fmt.Errorf("the Secret %s has no key %s", name, key)
		}
		return string(v), nil
	}
}
