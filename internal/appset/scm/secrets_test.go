package scm

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// oneSecret is a client.Reader holding the Secret skiff/scm-token.
type oneSecret struct{ client.Reader }

func (oneSecret) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if key != (client.ObjectKey{Namespace: "skiff", Name: "scm-token"}) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	obj.(*corev1.Secret).Data = map[string][]byte{"token": []byte(testToken)}
	return nil
}

func TestSecretsIn(t *testing.T) {
	tests := map[string]struct {
		reader    client.Reader
		name, key string
		want      string
		wantErr   string
	}{
		"a key of a Secret in the namespace is read": {
			reader: oneSecret{}, name: "scm-token", key: "token", want: testToken,
		},
		"a missing Secret is named": {
			reader: oneSecret{}, name: "other", key: "token", wantErr: `reading the Secret other: secrets "other" not found`,
		},
		"a missing key is named": {
			reader: oneSecret{}, name: "scm-token", key: "password", wantErr: "the Secret scm-token has no key password",
		},
		"without a reader it is an error": {
			name: "scm-token", key: "token", wantErr: "tokenRef Secrets are not available here",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SecretsIn(t.Context(), tc.reader, "skiff")(tc.name, tc.key)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), testToken) {
					t.Fatalf("error %v, want one containing %q and not the token", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
