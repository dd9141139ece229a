package browser

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/testwait"
)

// A user with the readonly role sees the application but no Sync button.
func TestReadonlyUserCannotSync(t *testing.T) {
	p := newPage(t, 1280, 800)
	newGuestbook(t, "guestbook-ro")
	addReadonlyUser(t, "ro", "ro-password-1")

	p.login("ro", "ro-password-1")
	p.visible(tid("app-tile-guestbook-ro"), 30*time.Second)
	p.until("the New app permission check", attrIs(tid("new-app-button"), "data-perms", "loaded"), 15*time.Second)
	if !p.hasClass(tid("new-app-button"), "hidden") {
		t.Error("a readonly user sees the New app button")
	}
	p.click(tid("app-tile-guestbook-ro"))
	p.visible(tid("app-health"), 30*time.Second)
	p.until("the permissions to load", attrIs(tid("app-actions"), "data-perms", "loaded"), 15*time.Second)
	p.screenshot("readonly-app")
	if p.exists(tid("sync-button")) {
		t.Error("a readonly user sees the Sync button")
	}
	if p.exists(tid("delete-button")) {
		t.Error("a readonly user sees the Delete button")
	}
	if !p.exists(tid("refresh-button")) {
		t.Error("a readonly user does not see the Refresh button")
	}

	// Logging out ends the session: the pages go back to the login form.
	p.click(tid("logout"))
	p.visible(tid("login-page"), 10*time.Second)
	p.open("/applications/guestbook-ro")
	p.visible(tid("login-page"), 10*time.Second)
}

// addReadonlyUser adds a local account with a password and role:readonly,
// as an admin would in argocd-cm, argocd-secret and argocd-rbac-cm, and
// waits until the server lets it log in.
func addReadonlyUser(t *testing.T, name, password string) {
	t.Helper()
	ctx := context.Background()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	setData(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: argocd, Name: "argocd-cm"}}, "accounts."+name, "login")
	setData(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: argocd, Name: "argocd-rbac-cm"}}, "policy.csv", "g, "+name+", role:readonly\n")
	var secret corev1.Secret
	if err := env.k8s.Get(ctx, client.ObjectKey{Namespace: argocd, Name: "argocd-secret"}, &secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["accounts."+name+".password"] = hash
	if err := env.k8s.Update(ctx, &secret); err != nil {
		t.Fatal(err)
	}
	// The server reads settings through a cache: wait until it sees them.
	testwait.Eventually(t, name+" to log in", func() error { return apiLogin(ctx, name, password) },
		testwait.Interval(200*time.Millisecond))
}

// setData sets one key of a ConfigMap, creating it if needed.
func setData(t *testing.T, cm *corev1.ConfigMap, key, value string) {
	t.Helper()
	ctx := context.Background()
	err := env.k8s.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	switch {
	case apierrors.IsNotFound(err):
		cm.Data = map[string]string{key: value}
		err = env.k8s.Create(ctx, cm)
	case err == nil:
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[key] = value
		err = env.k8s.Update(ctx, cm)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// removeData deletes key from the ConfigMap cm names, if it is there.
func removeData(t *testing.T, cm *corev1.ConfigMap, key string) {
	t.Helper()
	ctx := context.Background()
	if err := env.k8s.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	delete(cm.Data, key)
	if err := env.k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
}
