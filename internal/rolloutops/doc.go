// Package rolloutops is what can be done to a Rollout, the one layer under
// `skiff rollout` (over a kubeconfig) and the API server (and so the web
// UI): Load reads a Rollout with the ReplicaSets, pods and AnalysisRuns it
// controls; PlanOf turns an operation (promote, promote --full, abort,
// retry, pause, restart, set image, undo) into the patches the Argo
// Rollouts kubectl plugin sends, as a pure function of the objects read;
// Ops.Run sends them. It imports no HTTP, no flags and no controller: the
// CLI maps flags to a Request, the server maps HTTP and RBAC to one, and
// each maps the errors, whose kind errors.Is tells (ErrNotFound,
// ErrInvalid, ErrConflict), to its own words: the server to 404, 400 and
// 409.
package rolloutops
