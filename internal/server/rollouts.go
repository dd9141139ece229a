package server

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// resRollouts is the RBAC resource of Rollouts no Application manages
// (Skiff's own; Argo CD has none). A Rollout an Application manages is
// checked as that Application's resource action, as Argo CD checks it.
const resRollouts = "rollouts"

// rolloutActions maps the API's operations to the names RBAC policies give
// them (action/argoproj.io/Rollout/<name>): those of Argo CD's built-in
// Rollout resource actions, and Skiff's own for set-image and undo, which
// Argo CD lacks.
var rolloutActions = map[rolloutops.Op]string{
	rolloutops.Promote:     "resume",
	rolloutops.PromoteFull: "promote-full",
	rolloutops.Abort:       "abort",
	rolloutops.Retry:       "retry",
	rolloutops.Pause:       "pause",
	rolloutops.Restart:     "restart",
	rolloutops.SetImage:    "set-image",
	rolloutops.Undo:        "undo",
}

// rolloutDetail is a Rollout with the objects it controls.
type rolloutDetail struct {
	Rollout      *v1alpha1.Rollout          `json:"rollout"`
	ReplicaSets  []appsv1.ReplicaSet        `json:"replicaSets"`
	Pods         map[types.UID][]corev1.Pod `json:"pods"`
	AnalysisRuns []v1alpha1.AnalysisRun     `json:"analysisRuns"`
	// Application manages the Rollout, if any.
	Application string `json:"application,omitempty"`
	// Actions says which operations the caller may run.
	Actions map[rolloutops.Op]bool `json:"actions"`
}

// rolloutGuard is what RBAC checks for a Rollout: a resource and object,
// and the Application that manages it, if any.
type rolloutGuard struct {
	resource, object, app string
}

// rolloutAuth says which RBAC resource and object guard a Rollout.
func (s *Server) rolloutAuth(r *http.Request, ro *v1alpha1.Rollout) (rolloutGuard, error) {
	// OwningApp needs only the identity and tracking metadata, not the
	// whole object converted.
	meta := &unstructured.Unstructured{}
	meta.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Rollout"))
	meta.SetNamespace(ro.Namespace)
	meta.SetName(ro.Name)
	meta.SetAnnotations(ro.Annotations)
	meta.SetLabels(ro.Labels)
	meta.SetOwnerReferences(ro.OwnerReferences)
	standalone := rolloutGuard{resource: resRollouts, object: ro.Namespace + "/" + ro.Name}
	app := clustercache.OwningApp(meta, s.tracking())
	if app == "" {
		return standalone, nil
	}
	application := &v1alpha1.Application{}
	if err := s.Client.Get(r.Context(), types.NamespacedName{Namespace: s.Namespace, Name: app}, application); err != nil {
		if apierrors.IsNotFound(err) { // a stale annotation: the Rollout stands alone
			return standalone, nil
		}
		return rolloutGuard{}, err
	}
	return rolloutGuard{resource: resApplications, object: appObject(application), app: app}, nil
}

// tracking is how the live argocd-cm ties objects to Applications.
func (s *Server) tracking() clustercache.Tracking {
	if s.ArgoCDSettings == nil {
		return clustercache.DefaultTracking()
	}
	app := s.ArgoCDSettings.Current().Application
	return clustercache.Tracking{Mode: clustercache.TrackingMode(app.TrackingMethod), LabelKey: app.InstanceLabelKey}
}

func rolloutAction(resource string, op rolloutops.Op) string {
	if resource == resApplications {
		return "action/argoproj.io/Rollout/" + rolloutActions[op]
	}
	return "action/" + rolloutActions[op]
}

// getRollout reads the Rollout of the path and checks the caller may do
// op on it ("" for reading).
func (s *Server) getRollout(w http.ResponseWriter, r *http.Request, c *session, op rolloutops.Op) (*v1alpha1.Rollout, rolloutGuard, bool) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	for _, v := range []string{ns, name} {
		if v == "" || len(v) > 253 || strings.ContainsAny(v, "/ ") {
			writeError(w, http.StatusBadRequest, "invalid rollout namespace or name")
			return nil, rolloutGuard{}, false
		}
	}
	ro, err := rolloutops.Get(r.Context(), s.Client, types.NamespacedName{Namespace: ns, Name: name})
	if errors.Is(err, rolloutops.ErrNotFound) {
		writeError(w, http.StatusNotFound, "rollout "+ns+"/"+name+" not found")
		return nil, rolloutGuard{}, false
	} else if err != nil {
		s.internalError(w, err)
		return nil, rolloutGuard{}, false
	}
	guard, err := s.rolloutAuth(r, ro)
	if err != nil {
		s.internalError(w, err)
		return nil, rolloutGuard{}, false
	}
	action := actGet
	if op != "" {
		action = rolloutAction(guard.resource, op)
	}
	if !s.authorize(w, r, c, guard.resource, action, guard.object) {
		return nil, rolloutGuard{}, false
	}
	ro.APIVersion, ro.Kind = v1alpha1.GroupVersion.String(), "Rollout"
	return ro, guard, true
}

// handleListRollouts lists the Rollouts of every namespace the caller may get.
func (s *Server) handleListRollouts(w http.ResponseWriter, r *http.Request, c *session) {
	var list v1alpha1.RolloutList
	var opts []client.ListOption
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := s.Client.List(r.Context(), &list, opts...); err != nil {
		s.internalError(w, err)
		return
	}
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	items := make([]v1alpha1.Rollout, 0, len(list.Items))
	for i := range list.Items {
		guard, err := s.rolloutAuth(r, &list.Items[i])
		if err != nil {
			s.internalError(w, err)
			return
		}
		if p.permits(c, guard.resource, actGet, guard.object) {
			items = append(items, list.Items[i])
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// handleGetRollout returns a Rollout with its ReplicaSets, pods and
// AnalysisRuns, and which operations the caller may run on it (the UI
// hides the others).
func (s *Server) handleGetRollout(w http.ResponseWriter, r *http.Request, c *session) {
	ro, guard, ok := s.getRollout(w, r, c, "")
	if !ok {
		return
	}
	// Pods and runs are read uncached: the server keeps no pod informer.
	info, err := rolloutops.Load(r.Context(), s.APIReader, client.ObjectKeyFromObject(ro))
	if err != nil {
		s.rolloutError(w, err, "loading rollout "+ro.Namespace+"/"+ro.Name)
		return
	}
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	actions := map[rolloutops.Op]bool{}
	for op := range rolloutActions {
		actions[op] = p.permits(c, guard.resource, rolloutAction(guard.resource, op), guard.object)
	}
	writeJSON(w, http.StatusOK, rolloutDetail{Rollout: ro, ReplicaSets: info.ReplicaSets, Pods: info.Pods,
		AnalysisRuns: info.AnalysisRuns, Application: guard.app, Actions: actions})
}

// rolloutBody is the body of an operation: for set-image container name
// (or "*") → image, for undo the revision to go back to (0 or none: the
// one before the newest); the others take none.
type rolloutBody struct {
	Images     map[string]string `json:"images"`
	ToRevision int64             `json:"toRevision"`
}

// readRolloutRequest reads the body of op; it answers 400 itself when the
// body is unusable.
func readRolloutRequest(w http.ResponseWriter, r *http.Request, op rolloutops.Op) (rolloutops.Request, bool) {
	req := rolloutops.Request{Op: op}
	var body rolloutBody
	switch op {
	case rolloutops.SetImage:
		if !decodeJSON(w, r, 1<<20, &body) {
			return req, false
		}
		if len(body.Images) == 0 {
			writeError(w, http.StatusBadRequest, `set-image needs {"images": {"<container>": "<image>"}}`)
			return req, false
		}
		for container, image := range body.Images {
			req.Images = append(req.Images, rolloutops.ContainerImage{Container: container, Image: image})
		}
		// "*" sorts first; a named container overrides it in any order.
		sort.Slice(req.Images, func(i, j int) bool { return req.Images[i].Container < req.Images[j].Container })
	case rolloutops.Undo:
		if r.ContentLength != 0 && !decodeJSON(w, r, 1<<20, &body) {
			return req, false
		}
		req.ToRevision = body.ToRevision
	}
	return req, true
}

// handleRolloutAction runs one of the kubectl plugin's operations, with the
// same patches `skiff rollout` sends. It answers with the Rollout as
// written, undo with {"rollout", "skipped"} (why it sent nothing).
func (s *Server) handleRolloutAction(w http.ResponseWriter, r *http.Request, c *session) {
	op := rolloutops.Op(r.PathValue("action"))
	if _, known := rolloutActions[op]; !known {
		writeError(w, http.StatusNotFound, "unknown rollout action "+string(op))
		return
	}
	req, ok := readRolloutRequest(w, r, op)
	if !ok {
		return
	}
	ro, _, ok := s.getRollout(w, r, c, op)
	if !ok {
		return
	}
	res, err := rolloutops.Runner{Client: s.Client, Reader: s.APIReader}.Run(r.Context(), ro, req)
	if err != nil {
		s.rolloutError(w, err, fmt.Sprintf("%s of rollout %s/%s", op, ro.Namespace, ro.Name))
		return
	}
	if op == rolloutops.Undo {
		writeJSON(w, http.StatusOK, res)
		return
	}
	writeJSON(w, http.StatusOK, res.Rollout)
}

// rolloutError answers an error of rolloutops: by its kind 404, 400 or
// 409 with its own message, else 500 (logging it with what failed).
func (s *Server) rolloutError(w http.ResponseWriter, err error, what string) {
	if code := opStatus(err); code != 0 {
		writeError(w, code, err.Error())
		return
	}
	s.internalError(w, fmt.Errorf("%s: %w", what, err))
}
