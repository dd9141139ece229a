package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/cli/rolloutcli"
	"github.com/skiffcd/skiff/internal/clustercache"
)

// resRollouts is the RBAC resource of Rollouts no Application manages
// (Skiff's own; Argo CD has none). A Rollout an Application manages is
// checked as that Application's resource action, as Argo CD checks it.
const resRollouts = "rollouts"

// rolloutActions maps the API's operations to the names of Argo CD's
// built-in Rollout resource actions, which RBAC policies name
// (action/argoproj.io/Rollout/<name>).
var rolloutActions = map[string]string{
	"promote":      "resume",
	"promote-full": "promote-full",
	"abort":        "abort",
	"retry":        "retry",
	"pause":        "pause",
	"restart":      "restart",
	"set-image":    "set-image",
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
	Actions map[string]bool `json:"actions"`
}

// rolloutGuard is what RBAC checks for a Rollout: a resource and object,
// and the Application that manages it, if any.
type rolloutGuard struct {
	resource, object, app string
}

// rolloutAuth says which RBAC resource and object guard a Rollout.
func (s *Server) rolloutAuth(r *http.Request, ro *v1alpha1.Rollout) (rolloutGuard, error) {
	// OwningApp needs only the identity and annotations, not the whole
	// object converted.
	meta := &unstructured.Unstructured{}
	meta.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Rollout"))
	meta.SetNamespace(ro.Namespace)
	meta.SetName(ro.Name)
	meta.SetAnnotations(ro.Annotations)
	standalone := rolloutGuard{resource: resRollouts, object: ro.Namespace + "/" + ro.Name}
	app := clustercache.OwningApp(meta, clustercache.TrackingAnnotationMode)
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

func rolloutAction(resource, op string) string {
	if resource == resApplications {
		return "action/argoproj.io/Rollout/" + rolloutActions[op]
	}
	return "action/" + rolloutActions[op]
}

// getRollout reads the Rollout of the path and checks the caller may do
// op on it ("" for reading).
func (s *Server) getRollout(w http.ResponseWriter, r *http.Request, c *session, op string) (*v1alpha1.Rollout, rolloutGuard, bool) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	for _, v := range []string{ns, name} {
		if v == "" || len(v) > 253 || strings.ContainsAny(v, "/ ") {
			writeError(w, http.StatusBadRequest, "invalid rollout namespace or name")
			return nil, rolloutGuard{}, false
		}
	}
	ro := &v1alpha1.Rollout{}
	if err := s.Client.Get(r.Context(), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
		if apierrors.IsNotFound(err) {
			writeError(w, http.StatusNotFound, "rollout "+ns+"/"+name+" not found")
		} else {
			s.internalError(w, err)
		}
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
	info, err := rolloutcli.Load(r.Context(), s.APIReader, client.ObjectKeyFromObject(ro))
	if err != nil {
		s.internalError(w, err)
		return
	}
	p, err := s.policy(r.Context())
	if err != nil {
		s.internalError(w, err)
		return
	}
	actions := map[string]bool{}
	for op := range rolloutActions {
		actions[op] = p.permits(c, guard.resource, rolloutAction(guard.resource, op), guard.object)
	}
	writeJSON(w, http.StatusOK, rolloutDetail{Rollout: ro, ReplicaSets: info.ReplicaSets, Pods: info.Pods,
		AnalysisRuns: info.AnalysisRuns, Application: guard.app, Actions: actions})
}

// setImageRequest is the body of set-image: container name (or "*") → image.
type setImageRequest struct {
	Images map[string]string `json:"images"`
}

// handleRolloutAction runs one of the kubectl plugin's operations, with the
// same patches `skiff rollout` sends.
func (s *Server) handleRolloutAction(w http.ResponseWriter, r *http.Request, c *session) {
	op := r.PathValue("action")
	if _, known := rolloutActions[op]; !known {
		writeError(w, http.StatusNotFound, "unknown rollout action "+op)
		return
	}
	var req setImageRequest
	if op == "set-image" {
		if !decodeJSON(w, r, 1<<20, &req) {
			return
		}
		if len(req.Images) == 0 {
			writeError(w, http.StatusBadRequest, `set-image needs {"images": {"<container>": "<image>"}}`)
			return
		}
	}
	ro, _, ok := s.getRollout(w, r, c, op)
	if !ok {
		return
	}
	var patches []rolloutcli.Patch
	switch op {
	case "promote":
		patches = rolloutcli.PromotePatches(ro, false)
	case "promote-full":
		patches = rolloutcli.PromotePatches(ro, true)
	case "abort":
		patches = []rolloutcli.Patch{rolloutcli.AbortPatch()}
	case "retry":
		patches = []rolloutcli.Patch{rolloutcli.RetryPatch()}
	case "pause":
		patches = []rolloutcli.Patch{rolloutcli.PausePatch()}
	case "restart":
		patches = []rolloutcli.Patch{rolloutcli.RestartPatch(time.Now())}
	case "set-image":
		pairs := make([]string, 0, len(req.Images))
		for container, image := range req.Images {
			pairs = append(pairs, container+"="+image)
		}
		p, err := rolloutcli.SetImagePatch(ro, pairs)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		patches = []rolloutcli.Patch{p}
	}
	for _, p := range patches {
		obj := &v1alpha1.Rollout{}
		obj.Namespace, obj.Name = ro.Namespace, ro.Name
		patch := client.RawPatch(p.Type, []byte(p.Data))
		var err error
		if p.Status {
			err = s.Client.Status().Patch(r.Context(), obj, patch)
		} else {
			err = s.Client.Patch(r.Context(), obj, patch)
		}
		if err != nil {
			s.internalError(w, fmt.Errorf("%s of rollout %s/%s: %w", op, ro.Namespace, ro.Name, err))
			return
		}
		ro = obj
	}
	writeJSON(w, http.StatusOK, ro)
}
