package manager

import (
	"errors"
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
)

// readiness is /readyz's check: a replica is ready once it can act on what
// it is told. Its cache has listed the Applications (the API server and the
// controllers read them there), and, on the replica that runs the
// controllers (elected), the cluster cache has listed the live objects.
// Until then an Application created is seen late: the first ones a user
// applies after a fresh install waited for the Applications' watch to
// start (about a second, bench/apps/README.md round 19).
func readiness(informers cache.Informers, elected <-chan struct{}, live *clustercache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		inf, err := informers.GetInformer(req.Context(), &v1alpha1.Application{}, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("getting the Applications' informer: %w", err)
		}
		if !inf.HasSynced() {
			return errors.New("the Applications are not listed yet")
		}
		select {
		case <-elected:
			if !live.Synced() {
				return errors.New("the cluster cache has not listed the live objects yet")
			}
		default: // a standby replica serves the API only
		}
		return nil
	}
}
