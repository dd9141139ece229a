// Package manager assembles the controller manager that `skiff server` runs:
// the API scheme, the health and metrics endpoints and the controllers.
package manager

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/crds"
)

// Options configure the manager.
type Options struct {
	// Namespace holds Skiff's own configuration and its Applications
	// (Argo CD's "argocd" by default).
	Namespace string
	// MetricsAddr serves Prometheus metrics at /metrics; "0" turns it off.
	MetricsAddr string
	// HealthAddr serves /healthz and /readyz.
	HealthAddr string
	// LeaderElection makes only one replica act at a time.
	LeaderElection bool
	// InstallCRDs applies the embedded CRDs before starting.
	InstallCRDs bool
}

// NewScheme returns the scheme with every kind Skiff reads or writes.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// Run starts the manager and blocks until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	if opts.InstallCRDs {
		if err := crds.Install(ctx, cfg, time.Minute); err != nil {
			return fmt.Errorf("installing CRDs: %w", err)
		}
	}
	scheme, err := NewScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.HealthAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "skiff-controller-leader",
		LeaderElectionNamespace: opts.Namespace,
		Cache: cache.Options{
			DefaultNamespaces: nil, // all namespaces: Rollouts live next to their workloads
		},
	})
	if err != nil {
		return fmt.Errorf("creating controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running controller manager: %w", err)
	}
	return nil
}
