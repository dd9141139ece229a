package notification

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

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

	config *configStore
	queue  chan rolloutEvent
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
	c, err := newConfigStore(mgr, n.Namespace, notify.RolloutConfigMapName, notify.RolloutSecretName, notify.ParseRollouts)
	if err != nil {
		return err
	}
	n.config = c
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
		observeDelivery(notify.EventTrigger(reason), "", outcomeDropped)
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
	loaded, err := n.config.get(ctx, n.Recorder)
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
		vars := notify.RolloutVars(roMap, cfg.Context, cfg.Services[d.Service].Type, n.now)
		outcome := deliver(ctx, n.Recorder, ro, loaded, d, vars, n.Retry)
		observeDelivery(d.Trigger, d.Service, outcome)
	}
}
