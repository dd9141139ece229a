// Package testcluster starts a real, local Kubernetes control plane: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok (simulated
// nodes, so pods become Running and Ready). It is used by the integration
// tests and by the local demo (`make run`).
//
// Everything listens on free loopback ports and lives in a temporary
// directory, so several clusters can run at once; they choose their ports
// one at a time. Stop ends every process it started; processes also die
// with the program that started them.
package testcluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	dirPrefix = "skiff-cluster-"
	// NodeName is the kwok node that pods are scheduled to.
	NodeName = "kwok-node-0"
	// startTimeout bounds how long each component may take to become ready.
	startTimeout = 90 * time.Second
	// startAttempts bounds the starts of one cluster that lost a port.
	startAttempts = 3
	// portLockFile, in the parent of cluster directories, serializes the
	// choice of ports between the clusters of this machine.
	portLockFile = "skiff-cluster-ports.lock"
)

// Options tune Start.
type Options struct {
	// Binaries to run; zero means EnsureBinaries.
	Binaries *Binaries
	// Dir is the parent of the cluster's temporary directory; empty means os.TempDir.
	Dir string
	// Profiling serves the API server's /debug/pprof (to cluster admins),
	// for benchmarks that look at where its CPU goes.
	Profiling bool
}

// Cluster is a running control plane.
type Cluster struct {
	// Config reaches the API server as a cluster admin (system:masters).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config.
	Kubeconfig string
	// Dir holds the cluster's data, certificates and component logs.
	Dir string

	procs []*process
	// startAPI starts kube-apiserver as Start did: same port, certificate
	// and credentials.
	startAPI func(ctx context.Context) error
}

// Start runs a new control plane and waits until it can run pods.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bins := opts.Binaries
	if bins == nil {
		b, err := EnsureBinaries()
		if err != nil {
			return nil, err
		}
		bins = &b
	}
	parent := opts.Dir
	if parent == "" {
		parent = os.TempDir()
	}
	reapStale(parent)
	for attempt := 1; ; attempt++ {
		c, err := start(ctx, opts, *bins, parent)
		// A port found free can be taken by any other program before the
		// component binds it; that costs a new start, not a red test run.
		if err == nil || attempt == startAttempts || !errors.Is(err, errPortTaken) {
			return c, err
		}
		fmt.Fprintf(os.Stderr, "testcluster: starting again (attempt %d): %v\n", attempt+1, err)
	}
}

func start(ctx context.Context, opts Options, bins Binaries, parent string) (_ *Cluster, err error) {
	dir, err := os.MkdirTemp(parent, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("creating cluster directory: %w", err)
	}
	c := &Cluster{Dir: dir}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 4*startTimeout)
	defer cancel()

	token, err := c.writeCredentials()
	if err != nil {
		return nil, err
	}
	// From choosing free ports until every component listens on its own,
	// no other cluster on this machine may choose ports.
	unlock, err := lockPortChoice(ctx, parent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ports, err := FreePorts(5)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort := ports[0], ports[1], ports[2], ports[3], ports[4]

	if err := c.startEtcd(ctx, bins.Etcd, etcdClient, etcdPeer); err != nil {
		return nil, err
	}
	c.startAPI = func(ctx context.Context) error {
		return c.startAPIServer(ctx, bins.APIServer, etcdClient, apiPort, token, opts.Profiling)
	}
	if err := c.startAPI(ctx); err != nil {
		return nil, err
	}
	if err := c.startController(ctx, "kube-controller-manager", bins.ControllerManager, kcmPort,
		"--service-account-private-key-file="+filepath.Join(dir, "sa.key"),
		"--use-service-account-credentials=false",
		"--controllers=*,-node-ipam-controller",
	); err != nil {
		return nil, err
	}
	if err := c.startController(ctx, "kube-scheduler", bins.Scheduler, schedPort); err != nil {
		return nil, err
	}
	unlock()
	if err := c.startKwok(ctx, bins.Kwok, bins.KwokStages); err != nil {
		return nil, err
	}
	if err := c.record(); err != nil {
		return nil, err
	}
	return c, nil
}

// lockPortChoice takes a lock shared by the processes of this machine that
// start clusters under parent; the returned func releases it and may be
// called more than once.
func lockPortChoice(ctx context.Context, parent string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(parent, portLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the port lock: %w", err)
	}
	deadline := time.Now().Add(startTimeout)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) || ctx.Err() != nil {
			f.Close()
			return nil, fmt.Errorf("another cluster held %s for %s", f.Name(), startTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }, nil // closing releases the lock
}

// StopAPIServer stops the cluster's kube-apiserver and leaves the other
// components running: to its clients the cluster became unreachable.
func (c *Cluster) StopAPIServer() {
	for _, p := range c.procs {
		if p.name == "kube-apiserver" {
			p.stop(10 * time.Second)
		}
	}
}

// RestartAPIServer starts the kube-apiserver StopAPIServer stopped again,
// on the same port with the same certificate and credentials, and waits
// until it is ready.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	return c.startAPI(ctx)
}

// StartProcess runs another program for the lifetime of the cluster (the
// local demo runs `skiff server` this way): it is stopped first by Stop and
// dies with the caller like the components do. Its output goes to
// Dir/<name>.log and to out, when set. The returned channel closes when it exits.
func (c *Cluster) StartProcess(name string, out io.Writer, bin string, args ...string) (pid int, exited <-chan struct{}, err error) {
	p, err := startProcessTo(c.Dir, name, out, bin, args...)
	if err != nil {
		return 0, nil, err
	}
	if err := c.add(p); err != nil {
		return 0, nil, err
	}
	return p.pid(), p.done, nil
}

// PIDs returns the process IDs of the running components, by name.
func (c *Cluster) PIDs() map[string]int {
	out := map[string]int{}
	for _, p := range c.procs {
		out[p.name] = p.pid()
	}
	return out
}

// exited describes each component that is no longer running.
func (c *Cluster) exited() []error {
	var errs []error
	for _, p := range c.procs {
		if p.exited() {
			errs = append(errs, p.failure())
		}
	}
	return errs
}

// Stop ends every component, newest first, and removes the cluster's
// directory. It is safe to call more than once.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	c.procs = nil
	if c.Dir != "" && os.Getenv("SKIFF_KEEP_CLUSTER_DIR") == "" {
		_ = os.RemoveAll(c.Dir)
	}
}

// record writes the owner file used to reap this cluster if we get killed.
func (c *Cluster) record() error {
	var pgids []int
	for _, p := range c.procs {
		pgids = append(pgids, p.pid())
	}
	return writeOwner(c.Dir, pgids)
}

func (c *Cluster) add(p *process) error {
	c.procs = append(c.procs, p)
	return c.record()
}

// writeCredentials creates the service account signing key and the static
// admin token, and returns the token.
func (c *Cluster) writeCredentials() (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", fmt.Errorf("generating service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", fmt.Errorf("encoding service account key: %w", err)
	}
	files := map[string][]byte{
		"sa.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := hex.EncodeToString(raw)
	files["tokens.csv"] = []byte(token + `,skiff-admin,skiff-admin,"system:masters"` + "\n")
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(c.Dir, name), data, 0o600); err != nil {
			return "", fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return token, nil
}

func (c *Cluster) startEtcd(ctx context.Context, bin string, clientPort, peerPort int) error {
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := startProcess(c.Dir, "etcd", bin,
		"--name=skiff",
		"--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+client,
		"--advertise-client-urls="+client,
		"--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer,
		"--initial-cluster=skiff="+peer,
		// Test data is disposable: skip fsync, which dominates on shared disks.
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	if err != nil {
		return err
	}
	if err := c.add(p); err != nil {
		return err
	}
	return waitHTTP(ctx, p, &http.Client{Timeout: 2 * time.Second}, client+"/health")
}

func (c *Cluster) startAPIServer(ctx context.Context, bin string, etcdPort, port int, token string, profiling bool) error {
	certDir := filepath.Join(c.Dir, "apiserver-certs")
	p, err := startProcess(c.Dir, "kube-apiserver", bin,
		"--etcd-servers=http://127.0.0.1:"+strconv.Itoa(etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+certDir,
		"--token-auth-file="+filepath.Join(c.Dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-key-file="+filepath.Join(c.Dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(c.Dir, "sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.96.0.0/16",
		// The default reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--profiling="+strconv.FormatBool(profiling),
	)
	if err != nil {
		return err
	}
	if err := c.add(p); err != nil {
		return err
	}
	host := "https://127.0.0.1:" + strconv.Itoa(port)
	// The server writes its self-signed certificate bundle before it listens.
	if err := waitFile(ctx, p, filepath.Join(certDir, "apiserver.crt")); err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("reading API server certificate: %w", err)
	}
	c.Config = &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		QPS:             200,
		Burst:           400,
	}
	httpClient, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return fmt.Errorf("building API client: %w", err)
	}
	httpClient.Timeout = 5 * time.Second
	if err := waitHTTP(ctx, p, httpClient, host+"/readyz"); err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	return WriteKubeconfig(c.Kubeconfig, c.Config)
}

// startController runs kube-controller-manager or kube-scheduler against the
// cluster and waits for its health endpoint.
func (c *Cluster) startController(ctx context.Context, name, bin string, port int, extra ...string) error {
	args := append([]string{
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig,
		"--authorization-kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(c.Dir, name+"-certs"),
	}, extra...)
	p, err := startProcess(c.Dir, name, bin, args...)
	if err != nil {
		return err
	}
	if err := c.add(p); err != nil {
		return err
	}
	tlsConfig, err := waitOwnCert(ctx, p, filepath.Join(c.Dir, name+"-certs", name+".crt"))
	if err != nil {
		return err
	}
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	return waitHTTP(ctx, p, probe, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
}

func (c *Cluster) startKwok(ctx context.Context, bin, stages string) error {
	p, err := startProcess(c.Dir, "kwok", bin,
		"--kubeconfig="+c.Kubeconfig,
		"--config="+stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-ip=127.0.0.1",
		"--cidr=10.244.0.0/16",
	)
	if err != nil {
		return err
	}
	if err := c.add(p); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"type":                   "kwok",
				"kubernetes.io/hostname": NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    nodeResources(),
			Allocatable: nodeResources(),
		},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating kwok node: %w", err)
	}
	return poll(ctx, p, func() (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}, "kwok node "+NodeName+" Ready")
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
}

// WriteKubeconfig writes a kubeconfig that reaches cfg's API server with
// its CA and bearer token: the cluster admin's, or a ServiceAccount's token
// for a program that must run with that account's rights.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["skiff"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["skiff-admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["skiff"] = &clientcmdapi.Context{Cluster: "skiff", AuthInfo: "skiff-admin", Namespace: "default"}
	kc.CurrentContext = "skiff"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// FreePorts returns n distinct loopback ports that were free a moment ago,
// for the cluster's components and for programs run beside it (bench/apps).
func FreePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitHTTP polls url until it answers 200, the process exits, or ctx ends.
func waitHTTP(ctx context.Context, p *process, client *http.Client, url string) error {
	return poll(ctx, p, func() (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}, url)
}

func waitFile(ctx context.Context, p *process, path string) error {
	return poll(ctx, p, func() (bool, error) {
		info, err := os.Stat(path)
		return err == nil && info.Size() > 0, nil
	}, path)
}

// poll calls ready every 100ms until it reports true, for at most
// startTimeout; it fails early when p exits.
func poll(ctx context.Context, p *process, ready func() (bool, error), what string) error {
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := ready()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-p.done:
			return p.failure()
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w; last %s log lines:\n%s", what, ctx.Err(), p.name, p.logTail(20))
		case <-deadline.C:
			return fmt.Errorf("%s not ready after %s; last %s log lines:\n%s", what, startTimeout, p.name, p.logTail(20))
		case <-tick.C:
		}
	}
}
