package application

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/project"
)

// k8sRequests counts the Kubernetes API requests of an app's sync (the
// sync engine's applies, reads, hooks and prunes) and of the deletion of
// its resources, as Argo CD's argocd_app_k8s_request_total does.
// Comparisons read the cluster cache and make none; requests not made for
// an app (watches, status writes) are not counted.
var k8sRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "argocd_app_k8s_request_total",
	Help: "Number of kubernetes requests executed during application reconciliation.",
}, []string{"namespace", "name", "project", "server", "response_code", "verb", "resource_kind", "resource_namespace", "dry_run"})

func init() {
	metrics.Registry.MustRegister(k8sRequests)
}

// requestsFor is the context key of the app whose requests a context's
// requests count as.
type requestsFor struct{}

type requestApp struct {
	namespace, name, project string
	dryRun                   bool
}

// withAppRequests makes the Kubernetes requests made with ctx count as
// app's (through a client of CountAppRequests).
func withAppRequests(ctx context.Context, app *v1alpha1.Application, dryRun bool) context.Context {
	return context.WithValue(ctx, requestsFor{}, requestApp{app.Namespace, app.Name, app.ProjectName(), dryRun})
}

// CountAppRequests returns a copy of cfg whose requests made with a
// context of withAppRequests count in argocd_app_k8s_request_total. The
// server label is the destination's, the local cluster's URL, as the
// dest_server of the app's other series.
func CountAppRequests(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return countingTransport{next: next} })
	return cfg
}

type countingTransport struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	app, ok := req.Context().Value(requestsFor{}).(requestApp)
	if !ok {
		return t.next.RoundTrip(req)
	}
	resp, err := t.next.RoundTrip(req)
	code := 0 // no response
	if resp != nil {
		code = resp.StatusCode
	}
	info := parseRequest(req.Method, req.URL.Path, req.URL.Query().Get("watch") == "true")
	k8sRequests.WithLabelValues(app.namespace, app.name, app.project, project.InClusterServer, strconv.Itoa(code),
		info.verb, info.resource, info.namespace, strconv.FormatBool(app.dryRun)).Inc()
	return resp, err
}

// requestInfo is what a Kubernetes API request does, read from its URL.
type requestInfo struct {
	verb      string // Get, List, Watch, Create, Update, Patch, Delete or Unknown
	resource  string // the resource's plural name, as the URL gives it
	namespace string
}

// parseRequest reads an API request's verb, resource and namespace from
// its method and path: /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]] or
// /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME[/SUB]]. A request for
// a namespace itself is of resource namespaces.
func parseRequest(method, path string, watch bool) requestInfo {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return requestInfo{verb: "Unknown"}
	}
	var info requestInfo
	if len(parts) >= 3 && parts[0] == "namespaces" {
		info.namespace, parts = parts[1], parts[2:]
	}
	if len(parts) == 0 {
		return requestInfo{verb: "Unknown"}
	}
	info.resource = parts[0]
	named := len(parts) >= 2
	switch method {
	case http.MethodGet:
		switch {
		case watch:
			info.verb = "Watch"
		case named:
			info.verb = "Get"
		default:
			info.verb = "List"
		}
	case http.MethodPost:
		info.verb = "Create"
	case http.MethodPut:
		info.verb = "Update"
	case http.MethodPatch:
		info.verb = "Patch"
	case http.MethodDelete:
		info.verb = "Delete"
	default:
		info.verb = "Unknown"
	}
	return info
}
