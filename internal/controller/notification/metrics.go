package notification

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// deliveries has the name and labels of Argo CD's notifications
	// controller, whose dashboards and alerts read it.
	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "argocd_notifications_deliveries_total",
		Help: "Number of delivered notifications.",
	}, []string{"trigger", "service", "succeeded"})
	configErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "skiff_notifications_config_errors_total",
		Help: "Errors found when reading the notification configuration.",
	})
)

func init() {
	metrics.Registry.MustRegister(deliveries, configErrors)
}

// outcomeDropped is a Rollout event the full queue had no room for: no
// service was tried.
const outcomeDropped = "dropped"

// observeDelivery counts a delivery of trigger to service: succeeded only
// when it was sent (a failed send, a template error or a dropped event did
// not reach anyone).
func observeDelivery(trigger, service, outcome string) {
	deliveries.WithLabelValues(trigger, service, strconv.FormatBool(outcome == outcomeSent)).Inc()
}
