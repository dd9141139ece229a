// Package install proves the install manifests on a real control plane:
// they apply with kubectl --server-side, and Skiff, run with the flags of
// their Deployment and authenticated as their ServiceAccount, does its
// whole job with the permissions they grant and no more. Pods cannot run
// on kwok's nodes, so the tests run the same binary outside the cluster
// with a token from the TokenRequest API.
package install

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testwait"
)

// The manifests are read from the checkout, as a user's kubectl would.
const manifestsDir = "../../../manifests"

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunMain(m, func(c *testcluster.Cluster) { cluster = c }))
}

// skiffBinary builds cmd/skiff once for the package's tests.
var skiffBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "skiff-install-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "skiff")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/skiff").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building skiff: %w\n%s", err, out)
	}
	return bin, nil
})

// kubectl runs the control plane's real kubectl as the cluster admin.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := testcluster.KubectlBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlAnswer runs kubectl as the cluster admin for its output, which
// a failure exit does not make an error (kubectl auth can-i exits 1 on "no").
func kubectlAnswer(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := testcluster.KubectlBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...).Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// applyManifest creates namespace (when missing) and applies a generated
// manifest into it server-side, then waits for its CRDs to be served.
func applyManifest(t *testing.T, file, namespace string) {
	t.Helper()
	clients := kubernetes.NewForConfigOrDie(cluster.Config)
	_, err := clients.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	kubectl(t, "apply", "--server-side", "-n", namespace, "-f", filepath.Join(manifestsDir, file))
	kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/applications.argoproj.io", "crd/rollouts.argoproj.io", "crd/analysisruns.argoproj.io")
	// kwok would only pretend to run the pod; the test runs the binary.
	kubectl(t, "-n", namespace, "scale", "deployment/skiff-server", "--replicas=0")
}

// deployment returns the skiff-server Deployment of a generated manifest.
func deployment(t *testing.T, file string) *appsv1.Deployment {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(manifestsDir, file))
	if err != nil {
		t.Fatal(err)
	}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind != "Deployment" {
			continue
		}
		d := &appsv1.Deployment{}
		if err := yaml.UnmarshalStrict(doc, d); err != nil {
			t.Fatal(err)
		}
		if d.Name == "skiff-server" {
			return d
		}
	}
	t.Fatalf("%s has no Deployment skiff-server", file)
	return nil
}

// serverArgs are the skiff container's arguments in the Deployment, with
// $(POD_NAMESPACE) expanded as the kubelet would, the cache in a temporary
// directory, and every listener on a free loopback port. It returns the
// arguments and the API's and the health endpoint's addresses.
func serverArgs(t *testing.T, d *appsv1.Deployment, namespace string) (args []string, api, health string) {
	t.Helper()
	var container *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == "skiff" {
			container = &d.Spec.Template.Spec.Containers[i]
		}
	}
	if container == nil {
		t.Fatal("the Deployment has no container skiff")
	}
	ports, err := testcluster.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range container.Args {
		a = strings.ReplaceAll(a, "$(POD_NAMESPACE)", namespace)
		if strings.HasPrefix(a, "--cache-dir=") {
			a = "--cache-dir=" + t.TempDir()
		}
		args = append(args, a)
	}
	api = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	health = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	args = append(args, "--address=127.0.0.1", "--port="+strconv.Itoa(ports[0]),
		"--health-probe-bind-address="+health,
		"--metrics-bind-address="+net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2])))
	return args, api, health
}

// serviceAccountKubeconfig writes a kubeconfig holding only the cluster's
// CA and a TokenRequest token of namespace/name.
func serviceAccountKubeconfig(t *testing.T, namespace, name string) string {
	t.Helper()
	clients := kubernetes.NewForConfigOrDie(cluster.Config)
	tr, err := clients.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", namespace, name, err)
	}
	cfg := &rest.Config{Host: cluster.Config.Host, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cluster.Config.CAData}}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testcluster.WriteKubeconfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	return path
}

// lockedBuffer is the server's output, written by its process and read
// by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer runs skiff with args and kubeconfig until the test ends,
// and waits until it is ready. The returned buffer holds its output.
func startServer(t *testing.T, kubeconfig string, args []string, health string) *lockedBuffer {
	t.Helper()
	bin, err := skiffBinary()
	if err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd := exec.Command(bin, append(args, "--kubeconfig="+kubeconfig)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("skiff server output:\n%s", out)
		}
	})
	client := &http.Client{Timeout: 2 * time.Second}
	gone := false
	testwait.Eventually(t, "skiff server ready at "+health, func() error {
		select {
		case <-exited:
			gone = true // no use waiting
			return nil
		default:
		}
		resp, err := client.Get("http://" + health + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s", resp.Status)
		}
		return nil
	}, testwait.Timeout(2*time.Minute), testwait.Interval(200*time.Millisecond))
	if gone {
		t.Fatalf("skiff server %v exited before it was ready", args)
	}
	return out
}

// noForbidden fails the test when the server was refused anything.
func noForbidden(t *testing.T, out *lockedBuffer) {
	t.Helper()
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("the server was refused a request: %s", line)
		}
	}
}

// apiClient speaks to the server's self-signed TLS.
var apiClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the server under test presents a self-signed certificate
}}

// login signs in as admin with the password of argocd-initial-admin-secret
// in namespace, as the UI does, and returns the session token.
func login(t *testing.T, api, namespace string) string {
	t.Helper()
	clients := kubernetes.NewForConfigOrDie(cluster.Config)
	var password string
	testwait.Eventually(t, "argocd-initial-admin-secret", func() error {
		s, err := clients.CoreV1().Secrets(namespace).Get(context.Background(), "argocd-initial-admin-secret", metav1.GetOptions{})
		if err != nil {
			return err
		}
		password = string(s.Data["password"])
		return nil
	})
	body, _ := json.Marshal(map[string]string{"username": "admin", "password": password})
	resp, err := apiClient.Post("https://"+api+"/api/v1/session", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var session struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&session); err != nil || resp.StatusCode != http.StatusOK || session.Token == "" {
		t.Fatalf("login: %s, %v, token %q", resp.Status, err, session.Token)
	}
	return session.Token
}

// appNames lists the Applications the API shows to token.
func appNames(t *testing.T, api, token string) []string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+api+"/api/v1/applications", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := apiClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list v1alpha1.ApplicationList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing applications: %s, %v", resp.Status, err)
	}
	var names []string
	for _, a := range list.Items {
		names = append(names, a.Name)
	}
	return names
}

// readApp decodes testdata/file with ${NAME} replaced from vars.
func readApp(t *testing.T, file, namespace string, vars map[string]string) *v1alpha1.Application {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for k, v := range vars {
		text = strings.ReplaceAll(text, "${"+k+"}", v)
	}
	app := &v1alpha1.Application{}
	if err := yaml.UnmarshalStrict([]byte(text), app); err != nil {
		t.Fatal(err)
	}
	app.Namespace = namespace
	return app
}
