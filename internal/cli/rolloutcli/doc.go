// Package rolloutcli is the logic of `skiff rollout`, the counterpart of
// `kubectl argo rollouts`: it reads a Rollout with its ReplicaSets, pods and
// AnalysisRuns and renders them as a tree or a table, builds the patches the
// Argo Rollouts kubectl plugin sends (promote, abort, retry, pause, restart,
// set image, undo) and validates Rollout manifests offline (lint). The
// commands in cmd/skiff only parse flags and call these functions.
package rolloutcli
