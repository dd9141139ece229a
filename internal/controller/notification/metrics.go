package notification

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skiff_notifications_deliveries_total",
		Help: "Notification deliveries by trigger, service and outcome (sent, failed, template_error).",
	}, []string{"trigger", "service", "outcome"})
	configErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "skiff_notifications_config_errors_total",
		Help: "Errors found when reading the notification configuration.",
	})
)

func init() {
	metrics.Registry.MustRegister(deliveries, configErrors)
}
