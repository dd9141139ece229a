package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/skiffcd/skiff/internal/clustercache"
)

// listing is one kind a cache must have listed before the replica is ready.
type listing struct {
	cache cache.Informers
	obj   client.Object
	what  string
}

// configListings are the kinds of the settings cache (addConfigCache).
func configListings(config cache.Informers) []listing {
	return []listing{
		{config, &corev1.ConfigMap{}, "the settings ConfigMaps"},
		{config, &corev1.Secret{}, "the settings and repository Secrets"},
	}
}

// startInformers has each listing's informer start with its cache rather
// than on its first read: the first comparison reads the app's AppProject
// and the repository Secrets, and waited for each list (~0.1 s after a
// fresh start, bench/apps/README.md round 19).
func startInformers(listings []listing) error {
	for _, l := range listings {
		if _, err := l.cache.GetInformer(context.Background(), l.obj, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("starting the informer of %s: %w", l.what, err)
		}
	}
	return nil
}

// readiness is /readyz's check: a replica is ready once it can act on what
// it is told. Its caches have listed the Applications and AppProjects (the
// API server and the controllers read them there) and the settings and
// credentials, and,
// on the replica that runs the controllers (elected), the cluster cache
// has listed the live objects. Until then an Application created is seen
// late: the first ones a user applies after a fresh install waited for the
// Applications' watch to start (about a second, bench/apps/README.md
// round 19).
func readiness(listings []listing, elected <-chan struct{}, live *clustercache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		for _, l := range listings {
			inf, err := l.cache.GetInformer(req.Context(), l.obj, cache.BlockUntilSynced(false))
			if err != nil {
				return fmt.Errorf("getting the informer of %s: %w", l.what, err)
			}
			if !inf.HasSynced() {
				return fmt.Errorf("%s are not listed yet", l.what)
			}
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
