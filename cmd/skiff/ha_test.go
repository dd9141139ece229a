package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/server"
	"github.com/skiffcd/skiff/internal/testcluster"
	"github.com/skiffcd/skiff/internal/testgit"
	"github.com/skiffcd/skiff/internal/testwait"
)

// serverChildEnv, set to a JSON list of arguments, makes the test binary
// run `skiff ARGS` instead of the tests: the HA test's replicas are
// processes of their own that it can kill.
const serverChildEnv = "SKIFF_TEST_RUN_SKIFF"

// runAsSkiff runs `skiff ARGS` when serverChildEnv asks for it, and
// reports whether it did and with which exit code.
func runAsSkiff() (int, bool) {
	raw, ok := os.LookupEnv(serverChildEnv)
	if !ok {
		return 0, false
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", serverChildEnv, err)
		return 2, true
	}
	cmd := newRootCommand()
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}

// The lease timings of the HA test: short, so that the takeover is quick.
const (
	haLeaseDuration = 4 * time.Second
	haRenewDeadline = 3 * time.Second
	haRetryPeriod   = 500 * time.Millisecond
	haLeaseName     = "skiff-controller-leader"
)

// takeoverSlack is how much later than the lease allows a test accepts to
// see a dead replica's apps taken: their first reconcile on the new owner,
// and a loaded machine.
const takeoverSlack = 4 * time.Second

// replica is one `skiff server --leader-elect` process of the HA test.
type replica struct {
	name, api, health, metrics string
	cmd                        *exec.Cmd
	done                       chan struct{}
	logPath                    string
}

// startReplica runs `skiff server --leader-elect` for ns as a process of
// its own, with the API (plain HTTP) and health endpoints on loopback
// ports, until the test ends.
func startReplica(t *testing.T, name, ns string) *replica {
	t.Helper()
	ports, err := testcluster.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, api: "127.0.0.1:" + strconv.Itoa(ports[0]), health: "127.0.0.1:" + strconv.Itoa(ports[1]),
		metrics: "127.0.0.1:" + strconv.Itoa(ports[2]),
		done:    make(chan struct{}), logPath: filepath.Join(t.TempDir(), name+".log")}
	args, err := json.Marshal([]string{"server", "--kubeconfig", cluster.Kubeconfig, "--namespace", ns,
		"--address", "127.0.0.1", "--port", strconv.Itoa(ports[0]), "--insecure",
		"--health-probe-bind-address", r.health, "--metrics-bind-address", r.metrics,
		"--cache-dir", t.TempDir(), "--app-resync", "3s",
		"--leader-elect", "--leader-election-lease-duration", haLeaseDuration.String(),
		"--leader-election-renew-deadline", haRenewDeadline.String(), "--leader-election-retry-period", haRetryPeriod.String()})
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(os.Args[0])
	r.cmd.Env = append(os.Environ(), serverChildEnv+"="+string(args))
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		logFile.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			<-r.done
		}
		if t.Failed() {
			t.Logf("log of replica %s:\n%s", r.name, r.logTail())
		}
	})
	testwait.Eventually(t, "replica "+name+" to be ready", func() error {
		select {
		case <-r.done:
			t.Fatalf("replica %s exited:\n%s", name, r.logTail())
		default:
		}
		resp, err := http.Get("http://" + r.health + "/readyz?verbose")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s: %s", resp.Status, body)
		}
		return nil
	}, testwait.Timeout(90*time.Second), testwait.Interval(250*time.Millisecond))
	return r
}

// reconciles returns how many Applications the replica's controllers
// have reconciled, from its metrics.
func (r *replica) reconciles(t *testing.T) int {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	total := 0
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, "controller_runtime_reconcile_total{") || !strings.Contains(line, `controller="application-`) {
			continue
		}
		n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		total += int(n)
	}
	return total
}

// ownsApp reports whether the replica acts on the app named app: its
// metrics carry argocd_app_info for the apps it owns only.
func (r *replica) ownsApp(t *testing.T, app string) bool {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "argocd_app_info{") && strings.Contains(line, `name="`+app+`"`) {
			return true
		}
	}
	return false
}

// kill ends the replica at once, as a node failure would.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.done
}

// stop ends the replica as a rolling update does (SIGTERM) and waits for
// it to exit, which must be cleanly.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(r.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %s still runs 30 s after SIGTERM:\n%s", r.name, r.logTail())
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("replica %s exited with %d after SIGTERM:\n%s", r.name, code, r.logTail())
	}
}

// leads reports whether the replica holds the leader Lease, from
// controller-runtime's leader_election_master_status metric.
func (r *replica) leads(t *testing.T) bool {
	t.Helper()
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.Contains(line, haLeaseName) {
			return strings.HasSuffix(line, " 1")
		}
	}
	return false
}

func (r *replica) logTail() string {
	data, _ := os.ReadFile(r.logPath)
	if len(data) > 8000 {
		data = data[len(data)-8000:]
	}
	return string(data)
}

// do sends an API request to the replica with token and returns the
// response's status and body.
func (r *replica) do(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var in io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		in = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, "http://"+r.api+path, in)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s on replica %s: %v", method, path, r.name, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// adminToken logs in as admin, with the initial password, on replica r.
func adminToken(t *testing.T, c client.Client, ns string, r *replica) string {
	t.Helper()
	var initial corev1.Secret
	waitFor(t, "the initial admin password", func() error {
		return c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: server.InitialAdminSecretName}, &initial)
	})
	status, body := r.do(t, http.MethodPost, "/api/v1/session", "", map[string]string{"username": "admin", "password": string(initial.Data["password"])})
	if status != http.StatusOK {
		t.Fatalf("login on replica %s: %d %s", r.name, status, body)
	}
	var login struct{ Token string }
	if err := json.Unmarshal(body, &login); err != nil || login.Token == "" {
		t.Fatalf("login answer %s: %v", body, err)
	}
	return login.Token
}

// leaseHolder returns the holder of Skiff's leader Lease in ns.
func leaseHolder(ctx context.Context, c client.Client, ns string) (string, error) {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: haLeaseName}, &lease); err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return "", errors.New("the Lease has no holder")
	}
	return *lease.Spec.HolderIdentity, nil
}

// appStream keeps the operation phases that one replica's
// /api/v1/stream/applications reports.
type appStream struct {
	mu     sync.Mutex
	phases []v1alpha1.OperationPhase
}

// stream follows the replica's stream of the app name until the test
// ends.
func (r *replica) stream(t *testing.T, token, name string) *appStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.api+"/api/v1/stream/applications?name="+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("the application stream of replica %s: %s", r.name, resp.Status)
	}
	s := &appStream{}
	go s.follow(resp.Body)
	return s
}

func (s *appStream) follow(body io.ReadCloser) {
	defer body.Close()
	scanner := bufio.NewScanner(body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		data, ok := strings.CutPrefix(scanner.Text(), "data: ")
		if !ok {
			continue
		}
		var event struct {
			Result struct {
				Application v1alpha1.Application `json:"application"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(data), &event) != nil {
			continue
		}
		s.mu.Lock()
		if op := event.Result.Application.Status.OperationState; op != nil {
			s.phases = append(s.phases, op.Phase)
		}
		s.mu.Unlock()
	}
}

func (s *appStream) saw(phase v1alpha1.OperationPhase) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.phases {
		if p == phase {
			return true
		}
	}
	return false
}

// Two replicas with --leader-elect share the Applications (internal/shard)
// and both serve the API. A session from one replica is valid on the other
// (the signing key is in argocd-secret), and both stream events.
// The app's owner is killed while a sync waits for its Sync hook: the
// other replica takes the app within the lease duration and finishes the
// operation once: one history entry, each hook Job created once.
func TestHAFailoverFinishesTheOperationOnce(t *testing.T) {
	ctx := context.Background()
	c := kube(t)
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)

	// The first replica leads: it holds the lease before the second starts.
	leader := startReplica(t, "a", ns)
	var leaderID string
	waitFor(t, "replica a to hold the lease", func() (err error) {
		leaderID, err = leaseHolder(ctx, c, ns)
		return err
	})
	standby := startReplica(t, "b", ns)
	if holder, err := leaseHolder(ctx, c, ns); err != nil || holder != leaderID {
		t.Fatalf("the lease after the standby started: %q, %v; want it still held by %q", holder, err, leaderID)
	}

	login := struct{ Token string }{adminToken(t, c, ns, leader)}
	if status, body := standby.do(t, http.MethodGet, "/api/v1/session/userinfo", login.Token, nil); status != http.StatusOK || !strings.Contains(string(body), `"admin"`) {
		t.Fatalf("the leader's session on the standby: %d %s", status, body)
	}

	repo := testgit.New(t)
	sha := repo.Commit(testgit.Dir(t, "../../internal/controller/application/testdata/hooks", "app"))
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "migrations", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), Path: "app", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
		},
	}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	current := func() *v1alpha1.Application {
		t.Helper()
		got := &v1alpha1.Application{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	waitFor(t, "the first comparison", func() bool { return current().Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
	var owner, other *replica
	waitFor(t, "one replica to own the app", func() error {
		a, b := leader.ownsApp(t, app.Name), standby.ownsApp(t, app.Name)
		switch {
		case a && b:
			return errors.New("both replicas report the app")
		case a:
			owner, other = leader, standby
		case b:
			owner, other = standby, leader
		default:
			return errors.New("no replica reports the app")
		}
		return nil
	})
	t.Logf("replica %s owns the app", owner.name)
	ownerStream, stream := owner.stream(t, login.Token, app.Name), other.stream(t, login.Token, app.Name)

	// The sync is asked of the other replica's API; the owner runs it.
	if status, body := other.do(t, http.MethodPost, "/api/v1/applications/"+app.Name+"/sync", login.Token, map[string]string{"revision": sha}); status != http.StatusOK {
		t.Fatalf("sync through the standby: %d %s", status, body)
	}
	migrate := waitHookJob(t, c, dest, "migrate", "the migration to complete", func(j *batchv1.Job) bool { return j.Status.Succeeded > 0 })
	smoke := waitHookJob(t, c, dest, "smoke-test", "the Sync hook to start", func(*batchv1.Job) bool { return true })
	if op := current().Status.OperationState; op == nil || op.Phase != v1alpha1.OperationRunning {
		t.Fatalf("the operation before the leader's death: %+v, want Running", op)
	}

	if n := owner.reconciles(t); n == 0 {
		t.Error("the owner's metrics count no reconcile of Applications")
	}
	waitFor(t, "the owner's stream to report the running operation", func() bool { return ownerStream.saw(v1alpha1.OperationRunning) })
	owner.kill(t)
	killed := time.Now()
	// The owner's member Lease runs out at most haLeaseDuration after its
	// last renewal, which was before the kill; the other replica lists the
	// Leases every haRetryPeriod and takes the app of a member gone at once.
	takeover := haLeaseDuration + 2*haRetryPeriod
	waitFor(t, "the other replica to take the app", func() error {
		if !other.ownsApp(t, app.Name) {
			return errors.New("the app is not reported yet")
		}
		return nil
	})
	t.Logf("replica %s took the app %v after its owner died", other.name, time.Since(killed).Round(100*time.Millisecond))
	// The app shows in the metrics after the new owner's first reconcile
	// of it; and slack for a loaded machine (a CI run beside a benchmark
	// took 7.4 s).
	if took := time.Since(killed); took > takeover+takeoverSlack {
		t.Errorf("replica %s took the app %v after its owner died, want within the lease duration (%v)", other.name, took.Round(100*time.Millisecond), takeover)
	}
	if owner == leader {
		waitFor(t, "the other replica to take the leader Lease", func() error {
			holder, err := leaseHolder(ctx, c, ns)
			if err != nil {
				return err
			}
			if holder == leaderID {
				return fmt.Errorf("still held by the killed leader %s", holder)
			}
			return nil
		})
	}

	patch := client.MergeFrom(smoke.DeepCopy())
	smoke.Spec.Suspend = new(bool)
	if err := c.Patch(ctx, smoke, patch); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the operation to succeed on the other replica", func() error {
		got := current()
		if op := got.Status.OperationState; op == nil || op.Phase != v1alpha1.OperationSucceeded || got.Operation != nil {
			return fmt.Errorf("operation %+v, requested %+v", got.Status.OperationState, got.Operation)
		}
		return nil
	})
	got := current()
	if len(got.Status.History) != 1 || got.Status.History[0].Revision != sha {
		t.Errorf("history %+v, want one sync of %s", got.Status.History, sha)
	}
	for _, job := range []*batchv1.Job{migrate, smoke} {
		var now batchv1.Job
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), &now); err != nil {
			t.Errorf("hook Job %s after the sync: %v", job.Name, err)
		} else if now.UID != job.UID {
			t.Errorf("hook Job %s was created again after the takeover", job.Name)
		}
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(dest)); err != nil || len(jobs.Items) != 2 {
		t.Errorf("Jobs in %s: %d (%v), want the two hooks", dest, len(jobs.Items), err)
	}
	waitFor(t, "the other replica's stream to report the succeeded operation", func() bool { return stream.saw(v1alpha1.OperationSucceeded) })
	if n := other.reconciles(t); n == 0 {
		t.Error("the other replica's metrics count no reconcile of Applications")
	}
	if status, body := other.do(t, http.MethodGet, "/api/v1/applications/"+app.Name, login.Token, nil); status != http.StatusOK {
		t.Errorf("the app through the other replica's API: %d %s", status, body)
	}
}

// waitHookJob waits until the Job ns/name exists and cond holds, and
// returns it.
func waitHookJob(t *testing.T, c client.Client, ns, name, what string, cond func(*batchv1.Job) bool) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	waitFor(t, what, func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return err
		}
		if !cond(job) {
			return fmt.Errorf("Job %s: %+v", name, job.Status)
		}
		return nil
	})
	return job
}
