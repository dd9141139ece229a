package testcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/go-logr/logr"
	"github.com/skiffcd/skiff/internal/crds"
)

// RunMain starts one cluster for a whole test binary, hands it to use, runs
// the tests and stops the cluster. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m, func(c *testcluster.Cluster) { cluster = c })) }
//
// A cluster that fails to start fails the binary: cluster tests never skip.
// controller-runtime's logs are discarded (the tests read none; without a
// logger it prints a stack trace instead).
func RunMain(m *testing.M, use func(*Cluster)) int {
	discardLogs.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	start := time.Now()
	c, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "testcluster: control plane up at %s in %s\n", c.Config.Host, time.Since(start).Round(100*time.Millisecond))
	use(c)
	code := m.Run()
	if code != 0 {
		// A component that died under the tests explains their failures.
		for _, err := range c.exited() {
			fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		}
	}
	c.Stop()
	return code
}

// RunMainWithCRDs is RunMain on a cluster that serves Skiff's CRDs
// (crds.Install) before use sees it.
func RunMainWithCRDs(m *testing.M, use func(*Cluster)) int {
	return RunMain(m, func(c *Cluster) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := crds.Install(ctx, c.Config, time.Minute); err != nil {
			panic(fmt.Sprintf("installing Skiff's CRDs: %v", err))
		}
		use(c)
	})
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace for one test, named after it, and deletes
// it when the test ends. Tests sharing a cluster isolate themselves this way.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	base := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 48 {
		base = base[:48]
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := strings.Trim(base, "-") + "-" + hex.EncodeToString(suffix)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}
