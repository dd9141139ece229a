// Package rolloutcli is the logic of `skiff rollout`, the counterpart of
// `kubectl argo rollouts`: it reads and changes Rollouts through a Backend
// (the kubeconfig's cluster, or the API server after `skiff login`), both
// of which run the operations of internal/rolloutops, renders Rollouts as
// a tree or a table, follows them (Watcher) and validates Rollout
// manifests offline (lint). The commands in cmd/skiff only parse flags
// and call these functions; only they and this package name flags.
package rolloutcli
