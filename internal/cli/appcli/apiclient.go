package appcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
	"github.com/skiffcd/skiff/internal/cli/sessioncli"
)

// API is the Backend of a logged-in session: Skiff's API server, which
// renders, compares and checks RBAC itself.
type API struct {
	Client *sessioncli.Client
}

var _ Backend = (*API)(nil)

// ErrNotLoggedIn is the answer to a request the server did not
// authenticate (401).
var ErrNotLoggedIn = errors.New("not logged in or session expired: run skiff login")

// ServerError is an error answer of the API server other than 401.
type ServerError struct {
	Code int
	// Message is the server's; for a 403 it names what was denied.
	Message string
}

func (e *ServerError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the server answered %d %s", e.Code, http.StatusText(e.Code))
	}
	return e.Message
}

// statusCode is the status of a ServerError in err, 0 without one.
func statusCode(err error) int {
	var s *ServerError
	if errors.As(err, &s) {
		return s.Code
	}
	return 0
}

func (a *API) call(ctx context.Context, method, path string, body, into any) error {
	err := a.Client.Call(ctx, method, path, body, into)
	var apiErr *sessioncli.APIError
	if !errors.As(err, &apiErr) {
		return err
	}
	if apiErr.StatusCode == http.StatusUnauthorized {
		return ErrNotLoggedIn
	}
	return &ServerError{Code: apiErr.StatusCode, Message: apiErr.Message}
}

// wrap says what failed, except for ErrNotLoggedIn, which says it all.
func wrap(err error, what string) error {
	if errors.Is(err, ErrNotLoggedIn) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// retryChanged repeats call, for about a second and a half, while the
// server answers that the Application changed meanwhile: it read it from
// a cache behind the last write. Other conflicts (another operation in
// progress) are answers.
func retryChanged(call func() error) error {
	return retry.OnError(ChangedBackoff, func(err error) bool {
		var s *ServerError
		return errors.As(err, &s) && s.Code == http.StatusConflict && strings.Contains(s.Message, "changed meanwhile")
	}, call)
}

func appPath(name string, parts ...string) string {
	return "/api/v1/applications/" + url.PathEscape(name) + strings.Join(parts, "")
}

// List lists through GET /api/v1/applications.
func (a *API) List(ctx context.Context, projects []string, selector string) ([]v1alpha1.Application, error) {
	q := url.Values{}
	if len(projects) > 0 {
		q.Set("projects", strings.Join(projects, ","))
	}
	if selector != "" {
		q.Set("selector", selector)
	}
	path := "/api/v1/applications"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var list v1alpha1.ApplicationList
	if err := a.call(ctx, http.MethodGet, path, nil, &list); err != nil {
		return nil, wrap(err, "listing applications")
	}
	return list.Items, nil
}

// Get reads through GET /api/v1/applications/{name}[?refresh=].
func (a *API) Get(ctx context.Context, name, refresh string) (*v1alpha1.Application, error) {
	path := appPath(name)
	if refresh != "" {
		path += "?refresh=" + url.QueryEscape(refresh)
	}
	app := &v1alpha1.Application{}
	if err := a.call(ctx, http.MethodGet, path, nil, app); err != nil {
		return nil, wrap(err, "reading application "+name)
	}
	return app, nil
}

// Create posts app to /api/v1/applications; the server puts it in its
// namespace.
func (a *API) Create(ctx context.Context, app *v1alpha1.Application) error {
	body := app.DeepCopy()
	body.Namespace = ""
	err := a.call(ctx, http.MethodPost, "/api/v1/applications", body, nil)
	if statusCode(err) == http.StatusConflict {
		return fmt.Errorf("%w: %w", ErrExists, err)
	}
	return err
}

// Update puts app to /api/v1/applications/{name}.
func (a *API) Update(ctx context.Context, app *v1alpha1.Application) error {
	err := a.call(ctx, http.MethodPut, appPath(app.Name), app, nil)
	if statusCode(err) == http.StatusConflict {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// syncBody is the body of POST .../sync (Argo CD's ApplicationSyncRequest
// fields the server takes).
type syncBody struct {
	Revision  string                           `json:"revision,omitempty"`
	Prune     bool                             `json:"prune,omitempty"`
	DryRun    bool                             `json:"dryRun,omitempty"`
	Resources []v1alpha1.SyncOperationResource `json:"resources,omitempty"`
}

// Sync posts to /api/v1/applications/{name}/sync. The server takes no
// sync options or strategy, so asking for them is an error rather than
// a sync without them.
func (a *API) Sync(ctx context.Context, name string, op *v1alpha1.SyncOperation) (*v1alpha1.Application, error) {
	if len(op.SyncOptions) > 0 || op.SyncStrategy != nil {
		return nil, errors.New("--sync-option and --force are not supported through the API server: use --core")
	}
	body := syncBody{Revision: op.Revision, Prune: op.Prune, DryRun: op.DryRun, Resources: op.Resources}
	app := &v1alpha1.Application{}
	err := retryChanged(func() error { return a.call(ctx, http.MethodPost, appPath(name, "/sync"), body, app) })
	if err != nil {
		return nil, wrap(err, "syncing application "+name)
	}
	return app, nil
}

// Rollback posts to /api/v1/applications/{name}/rollback.
func (a *API) Rollback(ctx context.Context, name string, id int64, prune bool) (*v1alpha1.Application, error) {
	body := struct {
		ID    *int64 `json:"id,omitempty"`
		Prune bool   `json:"prune"`
	}{Prune: prune}
	if id >= 0 {
		body.ID = &id
	}
	app := &v1alpha1.Application{}
	err := retryChanged(func() error { return a.call(ctx, http.MethodPost, appPath(name, "/rollback"), body, app) })
	if err != nil {
		return nil, wrap(rollbackHint(err, name), "rolling back application "+name)
	}
	return app, nil
}

// Terminate deletes /api/v1/applications/{name}/operation.
func (a *API) Terminate(ctx context.Context, name string) error {
	err := a.call(ctx, http.MethodDelete, appPath(name, "/operation"), nil, nil)
	if statusCode(err) == http.StatusConflict {
		return fmt.Errorf("application %s: %w", name, appops.ErrNoRunningOperation)
	}
	if err != nil {
		return wrap(err, "terminating the operation of "+name)
	}
	return nil
}

// Delete deletes /api/v1/applications/{name}?cascade=&propagationPolicy=.
func (a *API) Delete(ctx context.Context, name string, cascade bool, propagation string) error {
	q := url.Values{"cascade": {strconv.FormatBool(cascade)}}
	if cascade && propagation != "" {
		q.Set("propagationPolicy", strings.ToLower(propagation))
	}
	err := retryChanged(func() error { return a.call(ctx, http.MethodDelete, appPath(name)+"?"+q.Encode(), nil, nil) })
	if err != nil {
		return wrap(err, "deleting application "+name)
	}
	return nil
}

// Diff reads /api/v1/applications/{name}/managed-resources and keeps the
// modified resources in the server's order (sorted as appops.Renderer.Compare
// sorts them); the server compares with the target revision only.
func (a *API) Diff(ctx context.Context, name, revision string) ([]appops.ResourceDiff, error) {
	if revision != "" {
		return nil, errors.New("--revision is not supported through the API server: use --core")
	}
	var out struct {
		Items []appops.ManagedResource `json:"items"`
	}
	if err := a.call(ctx, http.MethodGet, appPath(name, "/managed-resources"), nil, &out); err != nil {
		return nil, wrap(err, "comparing application "+name)
	}
	var diffs []appops.ResourceDiff
	for _, r := range out.Items {
		if r.Modified && !r.Hook {
			diffs = append(diffs, appops.ResourceDiff{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Diff: r.Diff})
		}
	}
	return diffs, nil
}

// Manifests reads /api/v1/applications/{name}/manifests[?revision=];
// the server masks Secret values.
func (a *API) Manifests(ctx context.Context, name, revision string) ([]*unstructured.Unstructured, error) {
	path := appPath(name, "/manifests")
	if revision != "" {
		path += "?revision=" + url.QueryEscape(revision)
	}
	var out struct {
		Manifests []string `json:"manifests"`
	}
	if err := a.call(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, wrap(err, "reading the manifests of application "+name)
	}
	objs := make([]*unstructured.Unstructured, 0, len(out.Manifests))
	for i, m := range out.Manifests {
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(m), &obj.Object); err != nil {
			return nil, fmt.Errorf("reading manifest %d of application %s: %w", i, name, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}
