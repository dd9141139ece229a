package notification

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/notify"
	"github.com/skiffcd/skiff/internal/notify/service"
)

// rolloutQueueSize bounds the events waiting to be sent; beyond it they are
// dropped (and counted) rather than holding up the Rollout controller.
const rolloutQueueSize = 1024

// RolloutNotifier sends Argo Rollouts' notifications: the Rollout
// controller hands it each event it records, and the subscribers of the
// event's trigger (notifications.argoproj.io/subscribe.on-rollout-completed.slack
// on the Rollout) get the trigger's templates, configured in
// argo-rollouts-notification-configmap and -secret in Namespace. Sending
// happens on its own workers, so a slow endpoint never delays a rollout.
type RolloutNotifier struct {
	Namespace string
	Recorder  events.EventRecorder
	// Retry bounds each delivery; zero values take the service defaults.
	Retry service.Retry
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Workers send in parallel; default 2.
	Workers int

	configCache cache.Cache
	queue       chan rolloutEvent
	mu          sync.Mutex
	loaded      *loadedConfig
}

type rolloutEvent struct {
	rollout *v1alpha1.Rollout
	reason  string
}

func (n *RolloutNotifier) now() time.Time {
	if n.Now != nil {
		return n.Now()
	}
	return time.Now()
}

// SetupWithManager adds the configuration cache and the sending workers to
// the manager.
func (n *RolloutNotifier) SetupWithManager(mgr ctrl.Manager) error {
	byName := func(name string) cache.ByObject {
		return cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", name)}
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{n.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: byName(notify.RolloutConfigMapName),
			&corev1.Secret{}:    byName(notify.RolloutSecretName),
		},
	})
	if err != nil {
		return fmt.Errorf("creating the Rollout notification config cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	n.configCache = c
	n.queue = make(chan rolloutEvent, rolloutQueueSize)
	return mgr.Add(n)
}

// Notify queues an event of a Rollout; it never blocks.
func (n *RolloutNotifier) Notify(ro *v1alpha1.Rollout, reason string) {
	if n.queue == nil {
		return
	}
	select {
	case n.queue <- rolloutEvent{rollout: ro.DeepCopy(), reason: reason}:
	default:
		deliveries.WithLabelValues(notify.EventTrigger(reason), "", "dropped").Inc()
	}
}

// Start runs the workers until ctx ends.
func (n *RolloutNotifier) Start(ctx context.Context) error {
	workers := n.Workers
	if workers == 0 {
		workers = 2
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-n.queue:
					n.send(ctx, ev)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// send delivers the notifications of one event; failures are Events on
// the Rollout with Secret values masked.
func (n *RolloutNotifier) send(ctx context.Context, ev rolloutEvent) {
	loaded, err := n.config(ctx)
	if err != nil || loaded == nil {
		return // not configured, or the cache is gone with ctx
	}
	cfg := loaded.cfg
	ro := ev.rollout
	roMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ro)
	if err != nil {
		return
	}
	subs := cfg.SubscriptionsOf(ro.Annotations, nil, ro.Labels)
	due, errs := cfg.EventDeliveries(ev.reason, roMap, subs, n.now)
	for _, err := range errs {
		if loaded.firstReport(ro.Namespace+"/"+ro.Name, err) {
			n.Recorder.Eventf(ro, nil, corev1.EventTypeWarning, eventReasonConfigError, "Notify", "%s", cfg.Mask(err.Error()))
		}
	}
	for _, d := range due {
		outcome := n.deliver(ctx, ro, roMap, loaded, d)
		deliveries.WithLabelValues(d.Trigger, d.Service, outcome).Inc()
	}
}

func (n *RolloutNotifier) deliver(ctx context.Context, ro *v1alpha1.Rollout, roMap map[string]any, loaded *loadedConfig, d notify.Delivery) string {
	cfg := loaded.cfg
	sender, ok := loaded.senders[d.Service]
	if !ok {
		reason := fmt.Errorf("service %q is not configured", d.Service)
		if err, broken := loaded.broken[d.Service]; broken {
			reason = err
		}
		n.Recorder.Eventf(ro, nil, corev1.EventTypeWarning, eventReasonFailed, "Notify",
			"Trigger %s to %s:%s: %s", d.Trigger, d.Service, d.Recipient, cfg.Mask(reason.Error()))
		return outcomeFailed
	}
	vars := notify.RolloutVars(roMap, cfg.Context, cfg.Services[d.Service].Type, n.now)
	var rendered []notify.Notification
	for _, name := range d.Templates {
		msg, err := cfg.Templates[name].Render(vars)
		if err != nil {
			n.Recorder.Eventf(ro, nil, corev1.EventTypeWarning, eventReasonTemplateFail, "Notify",
				"Trigger %s: %s", d.Trigger, cfg.Mask(err.Error()))
			return outcomeTemplateError
		}
		rendered = append(rendered, msg)
	}
	if err := service.Deliver(ctx, sender, notify.Merge(rendered), d.Recipient, n.Retry); err != nil {
		n.Recorder.Eventf(ro, nil, corev1.EventTypeWarning, eventReasonFailed, "Notify",
			"Trigger %s to %s:%s: %s", d.Trigger, d.Service, d.Recipient, cfg.Mask(err.Error()))
		return outcomeFailed
	}
	return outcomeSent
}

func (n *RolloutNotifier) config(ctx context.Context) (*loadedConfig, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	loaded, err := loadConfig(ctx, n.configCache, n.Namespace, notify.RolloutConfigMapName, notify.RolloutSecretName, notify.ParseRollouts, n.Recorder, n.loaded)
	if err != nil || loaded == nil {
		return nil, err
	}
	n.loaded = loaded
	return loaded, nil
}
