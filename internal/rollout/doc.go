// Package rollout holds the decision logic of the Rollout controller as pure
// functions over plain data: how many replicas the canary and stable
// ReplicaSets should have, which weight the current step asks for, and how
// long a pause lasts. Nothing here talks to the API server, so every rule can
// be checked by table tests against the behaviour of Argo Rollouts.
package rollout
