package source

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Git request metrics with Argo CD's names, labels and buckets (its repo
// server's metrics), so its dashboards' git panels work. The repo label is
// the URL without credentials.
var (
	gitRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "argocd_git_request_total",
		Help: "Number of git requests performed by repo server",
	}, []string{"repo", "request_type"})
	gitRequestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "argocd_git_request_duration_seconds",
		Help:    "Git requests duration seconds.",
		Buckets: []float64{0.1, 0.25, .5, 1, 2, 4, 10, 20},
	}, []string{"repo", "request_type"})
)

// Git request types (request_type).
const (
	gitLsRemote = "ls-remote"
	gitFetch    = "fetch"
)

func init() {
	metrics.Registry.MustRegister(gitRequests, gitRequestSeconds)
}

// observeGitRequest counts a git request to rawURL begun at start,
// failed or not.
func observeGitRequest(rawURL, requestType string, start time.Time) {
	repo := redactURL(rawURL)
	gitRequests.WithLabelValues(repo, requestType).Inc()
	gitRequestSeconds.WithLabelValues(repo, requestType).Observe(time.Since(start).Seconds())
}
