// Package notification is the notifications controller: on every change of
// an Application it evaluates the triggers the app is subscribed to, sends
// what is due once per condition change, and records what was sent in the
// notified.notifications.argoproj.io annotation, as Argo CD Notifications
// does. The configuration (argocd-notifications-cm and -secret) is reread
// whenever it changes.
package notification

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/notify/service"
)

const (
	eventReasonFailed       = "NotificationFailed"
	eventReasonConfigError  = "NotificationConfigError"
	eventReasonTemplateFail = "NotificationTemplateError"
	// retryFailedAfter brings an app back after failed deliveries.
	retryFailedAfter = time.Minute
)

// Reconciler sends the notifications of the Applications in Namespace.
type Reconciler struct {
	// Client reads Applications and AppProjects (cached) and patches Applications.
	Client    client.Client
	Namespace string
	Recorder  events.EventRecorder
	// Retry bounds each delivery; zero values take the service defaults.
	Retry service.Retry
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// config reads the two configuration objects.
	config *configStore
	// mu guards states.
	mu sync.Mutex
	// states is the notified state last written per app. This controller is
	// the annotation's only writer, so its copy is authoritative: the cache
	// can lag behind the patch, and reading the stale annotation would send
	// twice.
	states map[types.UID]string
}

// loadedConfig is the configuration parsed from one version of the objects.
type loadedConfig struct {
	version string
	cfg     *notify.Config
	senders map[string]service.Sender
	// broken explains why a service could not be built.
	broken map[string]error

	reportedMu sync.Mutex
	// reported holds the per-app errors already turned into Events for
	// this configuration, so each is reported once, not on every change.
	reported map[string]bool
}

func (l *loadedConfig) firstReport(app string, err error) bool {
	l.reportedMu.Lock()
	defer l.reportedMu.Unlock()
	key := app + "\x00" + err.Error()
	if l.reported[key] {
		return false
	}
	l.reported[key] = true
	return true
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller and a cache of the two
// configuration objects, so that a change of either re-evaluates every app.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	config, err := newConfigStore(mgr, r.Namespace, notify.ConfigMapName, notify.SecretName, notify.Parse)
	if err != nil {
		return err
	}
	r.config = config
	allApps := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var apps v1alpha1.ApplicationList
		if err := r.Client.List(ctx, &apps, client.InNamespace(r.Namespace)); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(apps.Items))
		for _, app := range apps.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: app.Namespace, Name: app.Name}})
		}
		return reqs
	})
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.Namespace })
	err = ctrl.NewControllerManagedBy(mgr).
		Named("notification").
		For(&v1alpha1.Application{}, builder.WithPredicates(inNamespace)).
		WatchesRawSource(source.Kind(config.cache, client.Object(&corev1.ConfigMap{}), allApps)).
		WatchesRawSource(source.Kind(config.cache, client.Object(&corev1.Secret{}), allApps)).
		// Deliveries wait on remote services; a few workers keep one slow
		// endpoint from delaying every other app's notifications.
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("setting up the notification controller: %w", err)
	}
	return nil
}

// Reconcile sends the notifications due for one Application.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app v1alpha1.Application
	if err := r.Client.Get(ctx, req.NamespacedName, &app); err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetState(ctx, req.Namespace)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	loaded, err := r.config.get(ctx, r.Recorder)
	if err != nil {
		return ctrl.Result{}, err
	}
	if loaded == nil {
		return ctrl.Result{}, nil // not configured
	}
	cfg := loaded.cfg
	projectAnnotations, err := r.projectAnnotations(ctx, &app)
	if err != nil {
		return ctrl.Result{}, err
	}
	subs := cfg.SubscriptionsOf(app.Annotations, projectAnnotations, app.Labels)
	if len(subs) == 0 {
		return ctrl.Result{}, nil
	}
	appMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&app)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("converting the application: %w", err)
	}
	state := notify.ParseState(r.lastState(&app))
	before := app.Annotations[notify.NotifiedAnnotation]
	due, errs := cfg.Plan(appMap, subs, state, r.now)
	for _, err := range errs {
		if loaded.firstReport(app.Name, err) {
			r.Recorder.Eventf(&app, nil, corev1.EventTypeWarning, eventReasonConfigError, "Notify", "%s", cfg.Mask(err.Error()))
		}
	}
	failed := false
	for _, d := range due {
		vars := notify.Vars(appMap, cfg.Context, cfg.Services[d.Service].Type, r.now)
		outcome := deliver(ctx, r.Recorder, &app, loaded, d, vars, r.Retry)
		observeDelivery(d.Trigger, d.Service, outcome)
		switch outcome {
		case outcomeSent, outcomeTemplateError:
			// A template that does not render would fail the same way on
			// every change: it is reported once, until the condition changes.
			state[d.StateKey] = r.now().Unix()
		default:
			failed = true
		}
	}
	if after := state.Encode(); after != before {
		if err := r.patchState(ctx, &app, after); err != nil {
			return ctrl.Result{}, err
		}
		r.rememberState(&app, after)
	}
	if failed {
		return ctrl.Result{RequeueAfter: retryFailedAfter}, nil
	}
	return ctrl.Result{}, nil
}

const (
	outcomeSent          = "sent"
	outcomeFailed        = "failed"
	outcomeTemplateError = "template_error"
)

// deliver renders the templates of one delivery with vars and sends it;
// every failure becomes an Event on obj with Secret values masked.
func deliver(ctx context.Context, recorder events.EventRecorder, obj runtime.Object, loaded *loadedConfig, d notify.Delivery, vars map[string]any, retry service.Retry) string {
	cfg := loaded.cfg
	sender, ok := loaded.senders[d.Service]
	if !ok {
		reason := fmt.Errorf("service %q is not configured", d.Service)
		if err, broken := loaded.broken[d.Service]; broken {
			reason = err
		}
		recorder.Eventf(obj, nil, corev1.EventTypeWarning, eventReasonFailed, "Notify",
			"Trigger %s to %s:%s: %s", d.Trigger, d.Service, d.Recipient, cfg.Mask(reason.Error()))
		return outcomeFailed
	}
	var rendered []notify.Notification
	for _, name := range d.Templates {
		n, err := cfg.Templates[name].Render(vars)
		if err != nil {
			recorder.Eventf(obj, nil, corev1.EventTypeWarning, eventReasonTemplateFail, "Notify",
				"Trigger %s: %s", d.Trigger, cfg.Mask(err.Error()))
			return outcomeTemplateError
		}
		rendered = append(rendered, n)
	}
	if err := service.Deliver(ctx, sender, notify.Merge(rendered), d.Recipient, retry); err != nil {
		recorder.Eventf(obj, nil, corev1.EventTypeWarning, eventReasonFailed, "Notify",
			"Trigger %s to %s:%s: %s", d.Trigger, d.Service, d.Recipient, cfg.Mask(err.Error()))
		return outcomeFailed
	}
	return outcomeSent
}

// patchState writes only the notified annotation, with a merge patch, so it
// never overwrites what the Application controller writes concurrently.
func (r *Reconciler) patchState(ctx context.Context, app *v1alpha1.Application, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{notify.NotifiedAnnotation: value}}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("recording sent notifications on %s: %w", app.Name, err)
	}
	return nil
}

func (r *Reconciler) lastState(app *v1alpha1.Application) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.states[app.UID]; ok {
		return s
	}
	return app.Annotations[notify.NotifiedAnnotation]
}

func (r *Reconciler) rememberState(app *v1alpha1.Application, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.states == nil {
		r.states = map[types.UID]string{}
	}
	r.states[app.UID] = value
}

// forgetState drops the states of deleted apps. Only the deleted app's
// name is known, not its UID, so the states are pruned against the list.
func (r *Reconciler) forgetState(ctx context.Context, ns string) {
	var apps v1alpha1.ApplicationList
	if err := r.Client.List(ctx, &apps, client.InNamespace(ns)); err != nil {
		return // pruned on the next deletion
	}
	live := make(map[types.UID]bool, len(apps.Items))
	for _, a := range apps.Items {
		live[a.UID] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for uid := range r.states {
		if !live[uid] {
			delete(r.states, uid)
		}
	}
}

func (r *Reconciler) projectAnnotations(ctx context.Context, app *v1alpha1.Application) (map[string]string, error) {
	name := app.ProjectName()
	var project v1alpha1.AppProject
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: name}, &project)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading project %s: %w", name, err)
	}
	return project.Annotations, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
