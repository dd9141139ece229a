package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/skiffcd/skiff/internal/controller/applicationset"
	"github.com/skiffcd/skiff/internal/gctune"
	"github.com/skiffcd/skiff/internal/logging"
	"github.com/skiffcd/skiff/internal/manager"
	"github.com/skiffcd/skiff/internal/server"
)

func newServerCommand() *cobra.Command {
	var (
		kubeconfig       string
		appsetPolicy     string
		opts             manager.Options
		apiPort          int
		apiAddress       string
		gcPercent        int
		gcMinHeadroomMiB int
		scmEnabled       bool
	)
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the Skiff controllers and API server against a cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(logging.DeferValues(zap.New()))
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(gcPercent)
				go gctune.Run(cmd.Context(), uint64(gcMinHeadroomMiB)<<20, gcPercent, 100, time.Second)
			}
			if opts.PprofAddr == "" || opts.PprofAddr == "0" {
				// Nobody can ask for a heap profile: sampling allocations
				// would keep a record per sampled call stack for nothing.
				runtime.MemProfileRate = 0
			}
			var override *bool
			if cmd.Flags().Changed("appset-enable-policy-override") {
				override = &opts.AppSetPolicyOverride
			}
			policy, mayOverride, err := applicationset.ServerPolicy(appsetPolicy, override)
			if err != nil {
				return err
			}
			opts.AppSetPolicy, opts.AppSetPolicyOverride = policy, mayOverride
			opts.AppSetSCM.Disabled = !scmEnabled
			if err := opts.AppSetSCM.Check(); err != nil {
				return err
			}
			cfg, err := loadConfig(kubeconfig)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if apiPort != 0 {
				opts.API.Addr = net.JoinHostPort(apiAddress, strconv.Itoa(apiPort))
			}
			scope := "cluster-wide"
			if opts.Namespaced {
				scope = "namespaced"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "skiff server: Kubernetes API %s, health %s, metrics %s, namespace %s (%s)\n",
				cfg.Host, opts.HealthAddr, opts.MetricsAddr, opts.Namespace, scope)
			if opts.API.Addr != "" {
				scheme := "https"
				if opts.API.Insecure {
					scheme = "http"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "skiff server: API on %s://%s (user admin; first password: kubectl -n %s get secret %s -o jsonpath='{.data.password}' | base64 -d)\n",
					scheme, displayAddr(apiAddress, apiPort), opts.Namespace, server.InitialAdminSecretName)
			}
			return manager.Run(ctx, cfg, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	f.StringVar(&opts.Namespace, "namespace", "argocd", "namespace of Skiff's configuration and Applications")
	f.IntVar(&apiPort, "port", 8080, "port of the API server, its login and git webhooks (0 turns it off)")
	f.StringVar(&apiAddress, "address", "", "address the API server listens on (default: all)")
	f.BoolVar(&opts.API.Insecure, "insecure", false, "serve the API over plain HTTP (behind a TLS-terminating load balancer)")
	f.StringVar(&opts.API.TLSCertFile, "tls-cert", "", "TLS certificate of the API server (default: a self-signed one generated at start)")
	f.StringVar(&opts.API.TLSKeyFile, "tls-key", "", "TLS private key of the API server")
	f.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8082", `address of the metrics endpoint ("0" turns it off)`)
	f.StringVar(&opts.HealthAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	f.StringVar(&opts.PprofAddr, "pprof-bind-address", "0", `address of Go's /debug/pprof profiles ("0" turns it off)`)
	f.BoolVar(&opts.LeaderElection, "leader-elect", false, "elect a leader so that only one replica acts")
	f.DurationVar(&opts.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "how long a standby waits after the leader's last renewal before taking over")
	f.DurationVar(&opts.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader retries renewing its lease before it stops acting")
	f.DurationVar(&opts.RetryPeriod, "leader-election-retry-period", 2*time.Second, "how often replicas try to acquire or renew the lease")
	f.BoolVar(&opts.Namespaced, "namespaced", false, "manage only objects in --namespace and read nothing cluster-scoped, so that a Role there is enough")
	f.BoolVar(&opts.InstallCRDs, "install-crds", false, "apply the argoproj.io CRDs before starting")
	f.StringVar(&opts.CacheDir, "cache-dir", "", "where git repositories and Helm charts are cached (default $XDG_CACHE_HOME/skiff)")
	f.DurationVar(&opts.RefreshPeriod, "app-resync", 180*time.Second, "how often each Application is compared with git (Argo CD's timeout.reconciliation)")
	f.StringVar(&appsetPolicy, "appset-policy", "", "what the ApplicationSet controller may do to generated Applications (Argo CD's --policy): sync (create, update, delete), create-only, create-update or create-delete; when set, ApplicationSets' syncPolicy.applicationsSync is ignored unless --appset-enable-policy-override")
	f.BoolVar(&opts.AppSetPolicyOverride, "appset-enable-policy-override", false, "let ApplicationSets' syncPolicy.applicationsSync replace --appset-policy (Argo CD's --enable-policy-override; default: true when --appset-policy is unset)")
	f.StringSliceVar(&opts.AppSetSCM.AllowedAPIs, "appset-allowed-scm-providers", nil, "API URLs the ApplicationSet scmProvider and pullRequest generators may name in api, where their tokenRef token goes (Argo CD's applicationsetcontroller.allowed.scm.providers; default: only https://api.github.com and https://gitlab.com)")
	f.BoolVar(&scmEnabled, "appset-enable-scm-providers", true, "run the ApplicationSet scmProvider and pullRequest generators (Argo CD's applicationsetcontroller.enable.scm.providers)")
	f.BoolVar(&opts.AppSetSCM.TokenRefStrict, "appset-tokenref-strict-mode", false, "read only tokenRef Secrets labelled argocd.argoproj.io/secret-type: scm-creds (Argo CD's applicationsetcontroller.enable.tokenref.strict.mode)")
	f.Float32Var(&opts.KubeAPIQPS, "kube-api-qps", 100, "requests per second each Kubernetes API client (one per resource type) may send")
	f.IntVar(&opts.KubeAPIBurst, "kube-api-burst", 200, "requests each Kubernetes API client (one per resource type) may send in a burst")
	f.BoolVar(&opts.KubeAPICompression, "kube-api-compression", false, "ask the Kubernetes API server for gzip-compressed responses (for a distant API server; costs CPU on both sides)")
	f.IntVar(&opts.CompareWorkers, "status-processors", 10, "Applications compared in parallel")
	f.IntVar(&opts.OperationWorkers, "operation-processors", 10, "sync operations run in parallel")
	// Most of the heap is the watch caches, which live long; collecting at
	// 40 % growth instead of Go's default 100 % keeps the peak near 1.4x of
	// them instead of 2x, for a little more GC CPU (bench/apps/README.md has
	// the figures).
	f.IntVar(&gcPercent, "gc-percent", 40, "Go garbage collector target (GOGC): lower trades CPU for memory; GOGC in the environment wins")
	f.IntVar(&gcMinHeadroomMiB, "gc-min-headroom-mib", 10, "MiB the heap may always grow by between collections: a small heap's --gc-percent is raised to it, up to 100 (0 turns it off)")
	return cmd
}

// displayAddr is where a user on this host reaches the API.
func displayAddr(address string, port int) string {
	if address == "" || address == "0.0.0.0" || address == "::" {
		address = "localhost"
	}
	return net.JoinHostPort(address, strconv.Itoa(port))
}

// loadConfig reads an explicit kubeconfig, or falls back to the usual
// lookup (KUBECONFIG, ~/.kube/config, in-cluster).
func loadConfig(path string) (*rest.Config, error) {
	if path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig %s: %w", path, err)
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("finding a cluster: %w", err)
	}
	return cfg, nil
}
