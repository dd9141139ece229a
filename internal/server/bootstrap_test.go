package server

import (
	"context"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Replicas that start together (an HA install's first start) bootstrap
// the same argocd-secret: whichever wins, the password in
// argocd-initial-admin-secret is the one whose hash argocd-secret holds,
// and every replica signs with the one key.
func TestReplicasStartingTogetherAgreeOnTheInitialPassword(t *testing.T) {
	for round := range 3 {
		ns := cluster.Namespace(t)
		k8s := cluster.Client(t)
		const replicas = 3
		var wg sync.WaitGroup
		for range replicas {
			s := &Server{Client: k8s, Namespace: ns}
			wg.Go(func() {
				// bootstrapUntilDone's retries, without its back-off.
				for attempt := 0; attempt < 10; attempt++ {
					if s.Bootstrap(context.Background()) == nil {
						return
					}
				}
				t.Error("a replica's bootstrap failed 10 times")
			})
		}
		wg.Wait()
		var initial, main corev1.Secret
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: InitialAdminSecretName}, &initial); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: SecretName}, &main); err != nil {
			t.Fatal(err)
		}
		if err := bcrypt.CompareHashAndPassword(main.Data[keyAdminPassword], initial.Data["password"]); err != nil {
			t.Errorf("round %d: the password in %s does not match the hash in %s: %v", round, InitialAdminSecretName, SecretName, err)
		}
	}
}
