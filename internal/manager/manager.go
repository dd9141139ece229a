// Package manager assembles the controller manager that `skiff server` runs:
// the API scheme, the health and metrics endpoints and the controllers.
package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/skiffcd/skiff/internal/appsetops"
	"github.com/skiffcd/skiff/internal/argocdcm"
	"github.com/skiffcd/skiff/internal/knowntypes"
	"github.com/skiffcd/skiff/internal/render"
	"github.com/skiffcd/skiff/internal/resourceactions"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset/scm"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/clusters"
	analysiscontroller "github.com/skiffcd/skiff/internal/controller/analysis"
	"github.com/skiffcd/skiff/internal/controller/application"
	"github.com/skiffcd/skiff/internal/controller/applicationset"
	"github.com/skiffcd/skiff/internal/controller/notification"
	rolloutcontroller "github.com/skiffcd/skiff/internal/controller/rollout"
	"github.com/skiffcd/skiff/internal/crds"
	"github.com/skiffcd/skiff/internal/crdschema"
	"github.com/skiffcd/skiff/internal/diff"
	"github.com/skiffcd/skiff/internal/eventrecorder"
	"github.com/skiffcd/skiff/internal/health"
	"github.com/skiffcd/skiff/internal/kubeclient"
	"github.com/skiffcd/skiff/internal/reposerver"
	"github.com/skiffcd/skiff/internal/server"
	"github.com/skiffcd/skiff/internal/shard"
	"github.com/skiffcd/skiff/internal/syncengine"
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
	// PprofAddr serves Go's /debug/pprof profiles; "" or "0" turns it off.
	PprofAddr string
	// LeaderElection makes only one replica act at a time.
	LeaderElection bool
	// LeaseDuration, RenewDeadline and RetryPeriod time the election
	// (0: controller-runtime's 15 s, 10 s and 2 s). A standby takes over
	// within LeaseDuration (plus a RetryPeriod) of the leader's death.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Namespaced limits Skiff to Namespace: it watches and manages only
	// the objects there and reads nothing cluster-scoped, so it runs with
	// a Role in that namespace (Argo CD's namespace-install).
	Namespaced bool
	// InstallCRDs applies the embedded CRDs before starting.
	InstallCRDs bool
	// CacheDir holds git repositories and Helm charts.
	CacheDir string
	// RefreshPeriod is how often each Application is compared with git.
	RefreshPeriod time.Duration
	// KubeAPIQPS and KubeAPIBurst limit each API client (0: 100 and 200).
	KubeAPIQPS   float32
	KubeAPIBurst int
	// KubeAPICompression asks the API server for gzip-compressed responses.
	KubeAPICompression bool
	// CompareWorkers and OperationWorkers size the Application work queues.
	CompareWorkers, OperationWorkers int
	// AppSetPolicy is the ApplicationSet controller's policy (Argo CD's
	// --policy; "" is sync) and AppSetPolicyOverride lets a set's
	// syncPolicy.applicationsSync replace it (--enable-policy-override).
	AppSetPolicy         v1alpha1.ApplicationsSyncPolicy
	AppSetPolicyOverride bool
	// AppSetSCM is what the scmProvider and pullRequest generators may
	// reach (--appset-allowed-scm-providers, --appset-enable-scm-providers,
	// --appset-tokenref-strict-mode).
	AppSetSCM scm.Policy
	// API configures the API server (JSON API, login, webhooks); an empty
	// API.Addr or "0" turns it off.
	API server.Options
}

// Run starts the manager and blocks until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	cfg = clientConfig(cfg, opts)
	if opts.InstallCRDs && opts.Namespaced {
		return errors.New("--install-crds writes cluster-scoped CustomResourceDefinitions, which a namespaced install (--namespaced) may not: apply the CRDs with cluster-admin rights first")
	}
	if opts.InstallCRDs {
		if err := crds.Install(ctx, cfg, time.Minute); err != nil {
			return fmt.Errorf("installing CRDs: %w", err)
		}
	}
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		return err
	}
	// Applications are read and written through a client of their own,
	// which decodes them in one pass; see kubeclient.
	applications, err := kubeclient.NewApplications(cfg, scheme)
	if err != nil {
		return err
	}
	mgrOpts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.HealthAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "skiff-controller-leader",
		LeaderElectionNamespace: opts.Namespace,
		Controller:              config.Controller{SkipNameValidation: ptr.To(manyManagersPerProcess)},
		// The process ends as soon as the manager has stopped, so the
		// leader may hand its Lease over then rather than let it expire.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 durationOrNil(opts.LeaseDuration),
		RenewDeadline:                 durationOrNil(opts.RenewDeadline),
		RetryPeriod:                   durationOrNil(opts.RetryPeriod),
		Cache: cache.Options{
			// All namespaces unless namespaced: Rollouts live next to their workloads.
			DefaultNamespaces: watchedNamespaces(opts),
			// No controller reads managedFields from the cache (writes are
			// merge patches or applies computed from spec and status), and
			// they are a large part of an Application's size.
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	}
	applications.ConfigureManager(&mgrOpts)
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return fmt.Errorf("creating controller manager: %w", err)
	}
	config, err := addConfigCache(mgr, opts.Namespace)
	if err != nil {
		return err
	}
	events := eventrecorder.NewSink(mgr.GetClient(), mgr.GetScheme())
	if err := mgr.Add(events); err != nil {
		return err
	}
	// The cluster Secrets, followed on every replica: the controllers and
	// the API resolve destinations through them.
	registry := clusters.NewSecrets(config, config, opts.Namespace)
	if err := mgr.Add(registry); err != nil {
		return err
	}
	settings, err := addSettings(mgr, config, events)
	if err != nil {
		return err
	}
	var shards *shard.Sharder
	if opts.LeaderElection {
		if shards, err = addShards(mgr, opts, registry); err != nil {
			return err
		}
	}
	apps, err := addApplicationController(mgr, cfg, opts, config, registry, settings, events, applications, shards)
	if err != nil {
		return err
	}
	if shards != nil {
		publishStates(shards.Members, apps)
	}
	if err := addAPIServer(mgr, opts, apps, config, shards); err != nil {
		return err
	}
	if err := addApplicationSetController(mgr, opts, apps, config, events, applications); err != nil {
		return err
	}
	notifications := &notification.Reconciler{Client: mgr.GetClient(), Namespace: opts.Namespace,
		Recorder: events.Recorder("skiff-notification-controller")}
	if err := notifications.SetupWithManager(mgr); err != nil {
		return err
	}
	analysisRuns := &analysiscontroller.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	if err := analysisRuns.SetupWithManager(mgr); err != nil {
		return err
	}
	// Rollouts in every namespace, as Argo Rollouts watches them; Events
	// carry Argo's source name so existing dashboards keep matching.
	rolloutNotifier := &notification.RolloutNotifier{Namespace: opts.Namespace,
		Recorder: events.Recorder("skiff-notification-controller")}
	if err := rolloutNotifier.SetupWithManager(mgr); err != nil {
		return err
	}
	rollouts := &rolloutcontroller.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: events.Recorder("rollouts-controller"), Notifier: rolloutNotifier, Namespace: managedNamespace(opts)}
	if err := rollouts.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	listings := append([]listing{
		{mgr.GetCache(), &v1alpha1.Application{}, "the Applications"},
		{mgr.GetCache(), &v1alpha1.AppProject{}, "the AppProjects"},
	}, configListings(config)...)
	if err := startInformers(listings); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("synced", readiness(listings, appControllersRun(mgr, shards), apps.Cache)); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running controller manager: %w", err)
	}
	if shards != nil {
		return releaseShare(shards.Members)
	}
	return nil
}

// manyManagersPerProcess turns off controller-runtime's check that no two
// controllers share a name, which is process-wide: skiff server runs one
// manager, this package's tests one per test.
var manyManagersPerProcess = false

// managedNamespace is the one namespace a namespaced Skiff manages; ""
// for a cluster-wide one.
func managedNamespace(opts Options) string {
	if opts.Namespaced {
		return opts.Namespace
	}
	return ""
}

// crdSchemas gives comparisons the defaults of the cluster's CRDs. A
// namespaced install may not read CRDs (cluster-scoped): it uses those of
// the CRDs Skiff ships (nil).
func crdSchemas(cfg *rest.Config, mgr ctrl.Manager, opts Options) (diff.Schemas, error) {
	if opts.Namespaced {
		return nil, nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the CRD reader: %w", err)
	}
	return crdschema.New(dyn, mgr.GetRESTMapper()), nil
}

// watchedNamespaces are the manager cache's namespaces: nil for all.
func watchedNamespaces(opts Options) map[string]cache.Config {
	if !opts.Namespaced {
		return nil
	}
	return map[string]cache.Config{opts.Namespace: {}}
}

// durationOrNil is d, or nil for controller-runtime's default when 0.
func durationOrNil(d time.Duration) *time.Duration {
	if d == 0 {
		return nil
	}
	return &d
}

// clientConfig sets the rate limits and compression of Skiff's API
// clients. client-go's default limits (5 QPS, burst 10) throttle a
// controller that writes status for hundreds of apps. The limit holds per
// REST client, and controller-runtime keeps one per resource type, so
// Application writes share one: at Argo CD's 50 QPS, burst 100, the three
// writes of each auto-sync capped a refresh of 200 apps at ~10 s
// (bench/apps/README.md). Unset limits are twice Argo CD's (100 QPS, burst
// 200), which the benchmark found as fast as 200/400; the API server's
// priority and fairness still protects it from one busy client.
//
// Compression is off unless asked for: Skiff usually runs next to its API
// server, where gzip costs CPU on both sides and saves nothing, and every
// open watch (one per kind) would hold a decompressor's window.
func clientConfig(cfg *rest.Config, opts Options) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	qps, burst := opts.KubeAPIQPS, opts.KubeAPIBurst
	if qps == 0 {
		qps = 100
	}
	if burst == 0 {
		burst = 200
	}
	cfg.QPS, cfg.Burst = qps, burst
	cfg.DisableCompression = !opts.KubeAPICompression
	return cfg
}

// addConfigCache adds a cache of the ConfigMaps and Secrets of Skiff's
// namespace: argocd-cm, argocd-secret, argocd-rbac-cm and the repository
// Secrets. Settings and credentials are read on every login and git fetch;
// from the cache they cost no API call.
func addConfigCache(mgr ctrl.Manager, namespace string) (cache.Cache, error) {
	configCache, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {},
			&corev1.Secret{}:    {},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of %s's settings: %w", namespace, err)
	}
	if err := mgr.Add(onEveryReplica{configCache}); err != nil {
		return nil, err
	}
	return configCache, nil
}

// addSettings follows argocd-cm's settings on every replica, from the
// config cache; a version with invalid entries is recorded as a Warning
// Event on argocd-cm, one per entry, and the rest of it applies.
func addSettings(mgr ctrl.Manager, config cache.Cache, events *eventrecorder.Sink) (*argocdcm.Source, error) {
	settings := argocdcm.NewSource(config)
	recorder := events.Recorder("skiff-application-controller")
	settings.Invalid = func(cm *corev1.ConfigMap, errs []error) {
		for _, err := range errs {
			recorder.Eventf(cm, nil, corev1.EventTypeWarning, "InvalidSettings", "Parse", "%s", err.Error())
		}
	}
	return settings, mgr.Add(settings)
}

// onEveryReplica is a cache that runs on every replica, leading or not:
// the API server of each reads its settings from it. A cache limited to
// namespaces does not say whether it needs the lease, which makes
// controller-runtime start it on the leader only, and a standby would
// never be ready nor able to log anyone in.
type onEveryReplica struct{ cache.Cache }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (onEveryReplica) NeedLeaderElection() bool { return false }

// addApplicationController wires the repo server, the cluster cache and the
// sync engine into the Application controller.
func addApplicationController(mgr ctrl.Manager, cfg *rest.Config, opts Options, config client.Reader, registry clusters.Registry, settings *argocdcm.Source, events *eventrecorder.Sink, applications *kubeclient.Applications, shards *shard.Sharder) (*application.Reconciler, error) {
	repo, err := reposerver.NewInDir(opts.CacheDir, reposerver.Options{
		Credentials: reposerver.SecretCredentials(config, opts.Namespace),
		Projects:    reposerver.CachedProjects(mgr.GetCache(), opts.Namespace),
		Kustomize:   func() render.KustomizeOptions { return settings.Current().Kustomize },
		// helm.valuesFileSchemes, live.
		ValuesFileSchemes: func() []string { return settings.Current().Helm.ValuesFileSchemes },
	})
	if err != nil {
		return nil, err
	}
	// Health scripts of argocd-cm judge as the built-in rules wherever
	// health is judged: the caches' stored health, comparisons, syncs' waves
	// and the API's tree.
	judge := settings.HealthJudge()
	live, err := clustercache.New(cfg, clustercache.Options{Health: judge.StatusText, Namespaces: localCacheNamespaces(opts),
		Excluded: settings.ExcludedIn(clusters.InClusterServer), RespectRBAC: settings.RespectRBAC(),
		Fingerprint: application.UpdateFingerprint(settings)})
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building discovery client: %w", err)
	}
	if err := mgr.Add(shard.Runnable{OnEveryReplica: shards != nil, Run: func(ctx context.Context) error {
		if err := live.Start(ctx); err != nil {
			return err
		}
		// argocd_cluster_info, from the leader as from Argo CD's one
		// application controller; an unknown version is left empty.
		version := ""
		if v, err := disc.ServerVersion(); err == nil {
			version = v.Major + "." + v.Minor
		}
		application.ReportCluster(version)
		<-ctx.Done()
		return nil
	}}); err != nil {
		return nil, err
	}
	// The sync client's requests for an app count in
	// argocd_app_k8s_request_total.
	direct, err := client.New(application.CountAppRequests(cfg), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("building the sync client: %w", err)
	}
	schemas, err := crdSchemas(cfg, mgr, opts)
	if err != nil {
		return nil, err
	}
	// Comparisons and syncs ask every object's scope; see kubeclient.
	r := &application.Reconciler{
		Schemas:          schemas,
		Client:           kubeclient.NewScopeMemo(applications.Writes(mgr.GetClient())),
		APIReader:        mgr.GetAPIReader(),
		Namespace:        opts.Namespace,
		ManagedNamespace: managedNamespace(opts),
		Clusters:         registry,
		Settings:         settings,
		Repo:             repo,
		Cache:            live,
		Engine:           newEngine(direct, judge),
		Connect:          connectCluster(mgr, opts, settings),
		Recorder:         events.Recorder("skiff-application-controller"),
		RefreshPeriod:    opts.RefreshPeriod,
		CompareWorkers:   opts.CompareWorkers,
		OperationWorkers: opts.OperationWorkers,
	}
	if shards != nil {
		r.Shards = shards
	}
	return r, r.SetupWithManager(mgr)
}

// generateApplications, when set, replaces the generators: tests set it.
var generateApplications appsetops.Generator

// appSetInputs are what the ApplicationSet controller and the API's
// generate read: one set of inputs, so a preview is what the controller
// makes.
func appSetInputs(opts Options, apps *application.Reconciler, config client.Reader, dyn dynamic.Interface) appsetops.Live {
	return appsetops.Live{Repo: apps.Repo, Clusters: apps.Clusters, Reader: config, Dynamic: dyn, Namespace: opts.Namespace, SCM: opts.AppSetSCM}
}

// liveGenerator generates with live's inputs, asking git anew for a set
// that a push refreshed (Argo CD's refresh annotation).
func liveGenerator(live appsetops.Live) appsetops.Generator {
	return func(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
		l := live
		_, l.Fresh = set.Annotations[appsetops.RefreshAnnotation]
		return l.Generate(ctx, set)
	}
}

// addApplicationSetController runs the ApplicationSet controller on the
// leader, for the sets of Skiff's namespace, when the cluster serves
// ApplicationSets: a cluster whose CRDs predate them keeps running the
// other controllers (and says so).
func addApplicationSetController(mgr ctrl.Manager, opts Options, apps *application.Reconciler, config client.Reader, events *eventrecorder.Sink, applications *kubeclient.Applications) error {
	_, err := mgr.GetRESTMapper().RESTMapping(v1alpha1.GroupVersion.WithKind("ApplicationSet").GroupKind(), v1alpha1.GroupVersion.Version)
	if meta.IsNoMatchError(err) {
		mgr.GetLogger().Info("the cluster serves no ApplicationSets (apply Skiff's CRDs or use --install-crds): their controller is off")
		return nil
	}
	if err != nil {
		return fmt.Errorf("looking up ApplicationSets: %w", err)
	}
	generate := generateApplications
	if generate == nil {
		dyn, err := dynamic.NewForConfig(mgr.GetConfig())
		if err != nil {
			return fmt.Errorf("building the ApplicationSet generators' dynamic client: %w", err)
		}
		generate = liveGenerator(appSetInputs(opts, apps, config, dyn))
	}
	r := &applicationset.Reconciler{
		Client:         applications.Writes(mgr.GetClient()),
		Namespace:      opts.Namespace,
		Generate:       generate,
		Clusters:       apps.Clusters,
		Policy:         opts.AppSetPolicy,
		PolicyOverride: opts.AppSetPolicyOverride,
		Recorder:       events.Recorder("argocd-applicationset-controller"),
	}
	return r.SetupWithManager(mgr)
}

// newEngine is a sync engine writing through c, which asks every object's
// scope once (see kubeclient).
func newEngine(c client.Client, judge health.Judge) *syncengine.Engine {
	return &syncengine.Engine{Client: kubeclient.NewScopeMemo(c), Health: func(u *unstructured.Unstructured) (v1alpha1.HealthStatusCode, string) {
		res := judge.Assess(u)
		return res.Status, res.Message
	}, Awaited: judge.Awaited}
}

// connectCluster builds the watch cache and the sync engine of a
// registered cluster as those of the local one, with the client limits of
// Skiff's own; its kinds are discovered from it, lazily.
func connectCluster(mgr ctrl.Manager, opts Options, settings *argocdcm.Source) application.Connector {
	judge := settings.HealthJudge()
	return func(c clusters.Cluster, cfg *rest.Config) (*clustercache.Cache, *syncengine.Engine, error) {
		cfg = clientConfig(cfg, opts)
		live, err := clustercache.New(cfg, application.CacheOptions(c, clustercache.Options{Health: judge.StatusText, Excluded: settings.ExcludedIn(c.Server),
			RespectRBAC: settings.RespectRBAC(), Fingerprint: application.UpdateFingerprint(settings)}))
		if err != nil {
			return nil, nil, err
		}
		direct, err := client.New(application.CountAppRequests(cfg), client.Options{Scheme: mgr.GetScheme()})
		if err != nil {
			return nil, nil, fmt.Errorf("building the sync client: %w", err)
		}
		return live, newEngine(direct, judge), nil
	}
}

// addAPIServer runs the API server on its own port. It reads Applications
// through the manager's cache and argocd-cm, argocd-secret and
// argocd-rbac-cm through the config cache; a push a webhook reports
// makes the repo server forget the repository's resolved revisions and
// queues a refresh of the apps it touched (electedRefresher). It
// renders with the controller's repo server, reads live objects of any
// kind with a dynamic client and streams changes from the manager's
// informers.
func addAPIServer(mgr ctrl.Manager, opts Options, apps *application.Reconciler, config client.Reader, shards *shard.Sharder) error {
	if opts.API.Addr == "" || opts.API.Addr == "0" {
		return nil
	}
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("building the API server's dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("building discovery client: %w", err)
	}
	version, err := disc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the server version: %w", err)
	}
	srv := &server.Server{
		Client:         mgr.GetClient(),
		Settings:       config,
		ArgoCDSettings: apps.Settings,
		APIReader:      mgr.GetAPIReader(),
		Namespace:      opts.Namespace,
		Refresher: ownerRefresher{owns: appOwner(mgr, shards), local: apps, annotating: &sync.WaitGroup{},
			remote: &server.AnnotationRefresher{Client: mgr.GetClient(), Namespace: opts.Namespace, Forget: apps.Repo.Forget}},
		Repo:        apps.Repo,
		Dynamic:     dyn,
		Mapper:      mgr.GetRESTMapper(),
		KubeVersion: version.GitVersion,
		Informers:   mgr.GetCache(),
		Clusters:    apps.Clusters,
		Options:     opts.API,
		Health:      apps.Settings.HealthJudge(),
		IgnoreDifferences: func() []v1alpha1.ResourceIgnoreDifferences {
			return apps.Settings.Current().Resource.IgnoreRules()
		},
		KnownTypeFields: func() []knowntypes.Field {
			return apps.Settings.Current().Resource.KnownTypeFields()
		},
		CustomActions:  resourceactions.LuaActions{Scripts: resourceactions.ArgoCDScripts(apps.Settings.Current)},
		GenerateAppSet: appSetInputs(opts, apps, config, dyn).Generate,
		Log:            slog.New(logr.ToSlogHandler(mgr.GetLogger().WithName("api-server"))),
	}
	srv.ClusterStates = electedStates{elected: mgr.Elected(), local: apps}
	if shards != nil {
		srv.ClusterStates = sharedStates{shards.Members}
	}
	return mgr.Add(srv)
}

// ownerRefresher refreshes the apps a webhook's push touched in process
// when this replica acts on them (it owns them, or leads when replicas do
// not share the work), and otherwise through the refresh annotation, which
// their owner acts on. The annotations are written after the webhook has
// been answered, as Argo CD handles its webhooks: a push touching hundreds
// of other replicas' apps took 3 to 5 s of PATCHes, near a Git host's 10 s
// timeout. A failed write is logged; the app's next poll still sees the
// commit.
type ownerRefresher struct {
	owns          func(app string) bool
	local, remote server.Refresher
	// annotating counts the annotation writes under way (tests wait on it).
	annotating *sync.WaitGroup
}

// annotationTimeout bounds the writing of one push's refresh annotations.
const annotationTimeout = 2 * time.Minute

// RefreshApps implements server.Refresher.
func (o ownerRefresher) RefreshApps(ctx context.Context, repoURL string, apps []string) error {
	var here, there []string
	for _, app := range apps {
		if o.owns(app) {
			here = append(here, app)
		} else {
			there = append(there, app)
		}
	}
	if len(there) > 0 {
		o.annotating.Add(1)
		go func() {
			defer o.annotating.Done()
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), annotationTimeout)
			defer cancel()
			if err := o.remote.RefreshApps(ctx, repoURL, there); err != nil {
				log.FromContext(ctx).Error(err, "asking other replicas to refresh the apps of a push", "repo", repoURL, "apps", len(there))
			}
		}()
	}
	if len(here) > 0 {
		return o.local.RefreshApps(ctx, repoURL, here)
	}
	return nil
}
