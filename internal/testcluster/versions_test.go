package testcluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiffcd/skiff/internal/testcluster"
)

// The binaries are built from hack/tools/*/go.mod and looked up by the
// version constants; the two must agree or tests would run stale builds.
func TestVersionConstantsMatchToolModules(t *testing.T) {
	tests := map[string]struct {
		goMod, module, version string
	}{
		"etcd":          {"etcd", "go.etcd.io/etcd/server/v3", testcluster.EtcdVersion},
		"kubernetes":    {"kubernetes", "k8s.io/kubernetes", testcluster.KubernetesVersion},
		"kwok":          {"kwok", "sigs.k8s.io/kwok", testcluster.KwokVersion},
		"argo-rollouts": {"argo-rollouts", "github.com/argoproj/argo-rollouts", testcluster.ArgoRolloutsVersion},
		"prometheus":    {"prometheus", "github.com/prometheus/prometheus", testcluster.PrometheusVersion},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "hack", "tools", tc.goMod, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require"))
				if len(f) >= 2 && f[0] == tc.module && f[1] == tc.version {
					return
				}
			}
			t.Errorf("hack/tools/%s/go.mod does not require %s %s", tc.goMod, tc.module, tc.version)
		})
	}
}
