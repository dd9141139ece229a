package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"sort"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMainWithCRDs(m, func(c *testcluster.Cluster) { cluster = c }))
}

// recordingRefresher records the apps a webhook asked to refresh and passes
// them on to next, if any.
type recordingRefresher struct {
	next Refresher

	mu    sync.Mutex
	calls map[string][]string // repoURL → apps
}

func (r *recordingRefresher) RefreshApps(ctx context.Context, repoURL string, apps []string) error {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[string][]string{}
	}
	r.calls[repoURL] = append(r.calls[repoURL], apps...)
	r.mu.Unlock()
	if r.next != nil {
		return r.next.RefreshApps(ctx, repoURL, apps)
	}
	return nil
}

func (r *recordingRefresher) refreshed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, apps := range r.calls {
		out = append(out, apps...)
	}
	sort.Strings(out)
	return out
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness is an API server on 127.0.0.1 (TLS with its self-signed
// certificate) for one test namespace.
type harness struct {
	t        *testing.T
	ns       string
	url      string
	k8s      client.Client
	http     *http.Client
	refresh  *recordingRefresher
	clock    *clock
	password string // admin's generated password
	opts     Options
	stop     func() // stops the server (once)
}

// startServer runs Server.Start (the manager Runnable) until the test ends
// and waits until it has written the initial admin password.
func startServer(t *testing.T) *harness {
	t.Helper()
	return startServerWith(t, Options{})
}

// startServerWith is startServer with options (Listener is set here);
// configure may set more of the Server before it starts.
func startServerWith(t *testing.T, opts Options, configure ...func(*Server)) *harness {
	t.Helper()
	ns := cluster.Namespace(t)
	k8s := cluster.Client(t)
	h := &harness{t: t, ns: ns, k8s: k8s,
		refresh: &recordingRefresher{next: &AnnotationRefresher{Client: k8s, Namespace: ns}},
		clock:   &clock{now: time.Now()}}
	h.http = &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // its self-signed certificate
	}
	h.serve(opts, configure...)
	h.password = h.waitInitialPassword()
	return h
}

// replica starts another Server on h's namespace, port and clock aside
// (a second replica, or the next start after h.stop), and returns the
// harness that talks to it.
func (h *harness) replica(configure ...func(*Server)) *harness {
	h.t.Helper()
	r := *h
	r.serve(h.opts, configure...)
	return &r
}

// serve runs Server.Start (the manager Runnable) on a new port of
// 127.0.0.1 until h.stop or the end of the test.
func (h *harness) serve(opts Options, configure ...func(*Server)) {
	h.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	h.opts = opts
	h.url = "https://" + ln.Addr().String()
	if opts.Insecure {
		h.url = "http://" + ln.Addr().String()
	}
	s := &Server{Client: h.k8s, Namespace: h.ns, Refresher: h.refresh, Now: h.clock.Now, Options: opts}
	s.Options.Listener = ln
	for _, c := range configure {
		c(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t, client := h.t, h.http
	h.stop = sync.OnceFunc(func() {
		// A connection the client dialed but never used counts as busy
		// for 5 s, as long as the server's whole shutdown may take.
		client.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server did not stop within 10s")
		}
	})
	t.Cleanup(h.stop)
}

// startCache starts a cache of the test cluster until the test ends.
func startCache(t *testing.T, opts cache.Options) cache.Cache {
	t.Helper()
	c, err := cache.New(cluster.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// waitInitialPassword reads argocd-initial-admin-secret, waiting at most 20 s.
func (h *harness) waitInitialPassword() string {
	h.t.Helper()
	var password string
	testwait.Eventually(h.t, "the initial admin password", func() error {
		var secret corev1.Secret
		if err := h.k8s.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: InitialAdminSecretName}, &secret); err != nil {
			if !apierrors.IsNotFound(err) {
				h.t.Fatal(err)
			}
			return err
		}
		if len(secret.Data["password"]) == 0 {
			return fmt.Errorf("%s has no password", InitialAdminSecretName)
		}
		// argocd-secret is written before it (see bootstrap); read it too.
		var main corev1.Secret
		if err := h.k8s.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: SecretName}, &main); err != nil {
			return err
		}
		if len(main.Data[keyAdminPassword]) == 0 {
			return fmt.Errorf("%s has no admin password", SecretName)
		}
		password = string(secret.Data["password"])
		return nil
	}, testwait.Timeout(20*time.Second))
	return password
}

// response is a decoded API answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// do sends a request with an optional bearer token and JSON body.
func (h *harness) do(method, path, token string, body any, headers ...string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return h.send(h.http, req)
}

// send sends req with c and reads the whole answer.
func (h *harness) send(c *http.Client, req *http.Request) response {
	h.t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// wantError checks an error answer: status and JSON {error, code}.
func wantError(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d (%s), want %d", r.status, r.body, status)
	}
	var e apiError
	r.json(t, &e)
	if e.Code != status || e.Error == "" {
		t.Errorf("error body %s, want code %d and a message", r.body, status)
	}
	if cliFlag.MatchString(e.Error) {
		t.Errorf("error %q names a CLI flag: the API speaks in its own terms", e.Error)
	}
}

// cliFlag matches a command-line flag such as --sync-policy.
var cliFlag = regexp.MustCompile(`(^|\s|\()--[a-z]`)

// login returns a session token for user.
func (h *harness) login(user, password string) string {
	h.t.Helper()
	r := h.do(http.MethodPost, "/api/v1/session", "", map[string]string{"username": user, "password": password})
	if r.status != http.StatusOK {
		h.t.Fatalf("login %s: %d %s", user, r.status, r.body)
	}
	var out struct {
		Token string `json:"token"`
	}
	r.json(h.t, &out)
	if out.Token == "" {
		h.t.Fatalf("login %s: no token in %s", user, r.body)
	}
	return out.Token
}

// addUser adds a local user with a password to argocd-cm and argocd-secret.
func (h *harness) addUser(name, password string) {
	h.t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: ConfigMapName}}
	if err := h.k8s.Get(ctx, client.ObjectKeyFromObject(cm), cm); apierrors.IsNotFound(err) {
		cm.Data = map[string]string{"accounts." + name: "login"}
		if err := h.k8s.Create(ctx, cm); err != nil {
			h.t.Fatal(err)
		}
	} else if err != nil {
		h.t.Fatal(err)
	} else {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["accounts."+name] = "login"
		if err := h.k8s.Update(ctx, cm); err != nil {
			h.t.Fatal(err)
		}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		h.t.Fatal(err)
	}
	var secret corev1.Secret
	if err := h.k8s.Get(ctx, types.NamespacedName{Namespace: h.ns, Name: SecretName}, &secret); err != nil {
		h.t.Fatal(err)
	}
	secret.Data["accounts."+name+".password"] = hash
	if err := h.k8s.Update(ctx, &secret); err != nil {
		h.t.Fatal(err)
	}
}

// setSecretKey sets one key of argocd-secret.
func (h *harness) setSecretKey(key, value string) {
	h.t.Helper()
	var secret corev1.Secret
	if err := h.k8s.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: SecretName}, &secret); err != nil {
		h.t.Fatal(err)
	}
	secret.Data[key] = []byte(value)
	if err := h.k8s.Update(context.Background(), &secret); err != nil {
		h.t.Fatal(err)
	}
}

// setRBAC writes argocd-rbac-cm.
func (h *harness) setRBAC(data map[string]string) {
	h.t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: RBACConfigMapName}}
	if err := h.k8s.Get(ctx, client.ObjectKeyFromObject(cm), cm); apierrors.IsNotFound(err) {
		cm.Data = data
		if err := h.k8s.Create(ctx, cm); err != nil {
			h.t.Fatal(err)
		}
		return
	} else if err != nil {
		h.t.Fatal(err)
	}
	cm.Data = data
	if err := h.k8s.Update(ctx, cm); err != nil {
		h.t.Fatal(err)
	}
}

// createApp creates an Application in the test namespace.
func (h *harness) createApp(name, project string, labels map[string]string, sources ...v1alpha1.ApplicationSource) *v1alpha1.Application {
	h.t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name, Labels: labels},
		Spec: v1alpha1.ApplicationSpec{
			Project:     project,
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: h.ns},
		},
	}
	if len(sources) == 1 {
		app.Spec.Source = &sources[0]
	} else {
		app.Spec.Sources = sources
	}
	if err := h.k8s.Create(context.Background(), app); err != nil {
		h.t.Fatal(err)
	}
	return app
}

func (h *harness) getApp(name string) *v1alpha1.Application {
	h.t.Helper()
	app := &v1alpha1.Application{}
	if err := h.k8s.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: name}, app); err != nil {
		h.t.Fatal(err)
	}
	return app
}

func (h *harness) configMap() *corev1.ConfigMap {
	h.t.Helper()
	cm := &corev1.ConfigMap{}
	if err := h.k8s.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: ConfigMapName}, cm); err != nil {
		h.t.Fatal(err)
	}
	return cm
}
