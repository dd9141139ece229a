package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// settings is what one request needs from argocd-cm, argocd-secret and
// argocd-rbac-cm.
type settings struct {
	accounts map[string]account
	signKey  []byte
	secret   map[string][]byte
	// url is argocd-cm's external URL; oidc its oidc.config (nil without
	// one, or when it is invalid: oidcErr says why).
	url     string
	oidc    *oidcConfig
	oidcErr error
}

// errNotReady means Skiff has not written its secret key yet.
var errNotReady = errors.New("the server's secret key is not in argocd-secret yet")

// loadSettings reads the configuration objects from s.Settings (a cache in
// production, so this costs no API call).
func (s *Server) loadSettings(ctx context.Context) (*settings, error) {
	var cm corev1.ConfigMap
	if err := s.Settings.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: ConfigMapName}, &cm); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading %s: %w", ConfigMapName, err)
	}
	var secret corev1.Secret
	if err := s.Settings.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: SecretName}, &secret); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading %s: %w", SecretName, err)
	}
	key := secret.Data[keyServerSecretKey]
	if len(key) == 0 {
		return nil, errNotReady
	}
	// Every authenticated call loads the settings: parse them once per
	// version of the two objects (both are read only after this).
	version := cm.ResourceVersion + "/" + secret.ResourceVersion
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	if s.parsed != nil && s.parsedVersion == version {
		return s.parsed, nil
	}
	st := &settings{accounts: parseAccounts(cm.Data, secret.Data), signKey: key, secret: secret.Data,
		url: strings.TrimSuffix(strings.TrimSpace(cm.Data[keyURL]), "/")}
	st.oidc, st.oidcErr = parseOIDCConfig(cm.Data, secret.Data)
	s.parsed, s.parsedVersion = st, version
	return st, nil
}

// bootstrap makes sure argocd-secret holds a signing key and, while the
// admin account has no password, generates one as Argo CD does: its bcrypt
// hash goes to argocd-secret and its clear text to argocd-initial-admin-secret.
// It reads and writes through the API directly (the cache may not run yet).
//
// Replicas that start together race here. argocd-secret is written first,
// under an optimistic lock (a create, or an update of the version read),
// so one replica wins; the others fail, and their next attempt finds what
// the winner wrote. Only the winner then stores its clear password: a
// loser that stored its own first would leave a password that matches no
// hash. Until that store succeeds the password is kept here and the next
// attempt stores it.
func (s *Server) bootstrap(ctx context.Context) error {
	s.bootstrapMu.Lock()
	defer s.bootstrapMu.Unlock()
	if s.unsavedPassword != "" {
		if err := s.storeInitialPassword(ctx, s.unsavedPassword); err != nil {
			return err
		}
		s.unsavedPassword = ""
	}
	var cm corev1.ConfigMap
	if err := s.APIReader.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: ConfigMapName}, &cm); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading %s: %w", ConfigMapName, err)
	}
	adminEnabled := true
	if v, ok := cm.Data[keyAdminEnabled]; ok {
		adminEnabled = isTrue(v)
	}
	var secret corev1.Secret
	err := s.APIReader.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: SecretName}, &secret)
	exists := err == nil
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading %s: %w", SecretName, err)
	}
	if !exists {
		secret = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: SecretName,
			Labels: map[string]string{"app.kubernetes.io/name": SecretName, "app.kubernetes.io/part-of": "argocd"}}}
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	changed := false
	if len(secret.Data[keyServerSecretKey]) == 0 {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		secret.Data[keyServerSecretKey] = []byte(base64.StdEncoding.EncodeToString(key))
		changed = true
	}
	var clearPassword string
	if adminEnabled && len(secret.Data[keyAdminPassword]) == 0 {
		if clearPassword, err = randomPassword(16); err != nil {
			return err
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(clearPassword), bcrypt.DefaultCost)
		if err != nil {
			return err
		}
		secret.Data[keyAdminPassword] = hash
		secret.Data[keyAdminPasswordMtime] = formatMtime(s.now())
		changed = true
	}
	if !changed {
		return nil
	}
	if exists {
		err = s.Client.Update(ctx, &secret)
	} else {
		err = s.Client.Create(ctx, &secret)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", SecretName, err)
	}
	if clearPassword == "" {
		return nil
	}
	if err := s.storeInitialPassword(ctx, clearPassword); err != nil {
		s.unsavedPassword = clearPassword
		return err
	}
	return nil
}

func (s *Server) storeInitialPassword(ctx context.Context, password string) error {
	initial := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: InitialAdminSecretName,
			Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Data: map[string][]byte{"password": []byte(password)},
	}
	err := s.Client.Create(ctx, initial)
	if apierrors.IsAlreadyExists(err) {
		var old corev1.Secret
		if err := s.APIReader.Get(ctx, client.ObjectKeyFromObject(initial), &old); err != nil {
			return err
		}
		old.Data = initial.Data
		err = s.Client.Update(ctx, &old)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", InitialAdminSecretName, err)
	}
	return nil
}

// policy returns the compiled RBAC policy of the current argocd-rbac-cm,
// compiling it again only when the ConfigMap changed.
func (s *Server) policy(ctx context.Context) (*policy, error) {
	var cm corev1.ConfigMap
	if err := s.Settings.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: RBACConfigMapName}, &cm); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading %s: %w", RBACConfigMapName, err)
	}
	version := string(cm.UID) + "/" + cm.ResourceVersion
	s.policyMu.Lock()
	defer s.policyMu.Unlock()
	if s.compiled != nil && s.compiledVersion == version {
		return s.compiled, nil
	}
	p, err := newPolicy(userPolicy(cm.Data), cm.Data[keyPolicyDefault])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RBACConfigMapName, err)
	}
	p.scopes = parseScopes(cm.Data[keyScopes])
	s.compiled, s.compiledVersion = p, version
	return p, nil
}
