package reposerver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/source"
)

// secretTypeLabel marks Argo CD's repository Secrets.
const secretTypeLabel = "argocd.argoproj.io/secret-type"

// SecretCredentials reads credentials from Argo CD's repository Secrets in
// namespace: `repository` Secrets match one URL, `repo-creds` Secrets a URL
// prefix. The reader is normally the manager's cache, so a lookup costs no
// API call.
func SecretCredentials(reader client.Reader, namespace string) CredentialsFunc {
	return func(ctx context.Context, repoURL string) (source.Credentials, error) {
		req, err := labels.NewRequirement(secretTypeLabel, selection.In, []string{"repository", "repo-creds"})
		if err != nil {
			return source.Credentials{}, err
		}
		var secrets corev1.SecretList
		if err := reader.List(ctx, &secrets, client.InNamespace(namespace),
			client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}); err != nil {
			return source.Credentials{}, fmt.Errorf("listing repository secrets in %s: %w", namespace, err)
		}
		return source.CredentialsForURL(secrets.Items, repoURL), nil
	}
}
