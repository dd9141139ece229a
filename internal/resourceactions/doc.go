// Package resourceactions is what can be done to one live object of an
// Application through Argo CD's resource actions, under every face: the
// API server (and the web UI through it) and `skiff app actions`. It holds
// no HTTP, no flags and nothing of the controllers.
//
// Catalog.List discovers the actions of an object and Catalog.Plan turns
// one into the writes it makes, both pure functions of the object read
// (and the time, for restarts): the built-in actions Argo CD ships
// (builtin.go), the Rollout ones planned by rolloutops as the kubectl
// plugin sends them, and custom ones a Custom gives (argocd-cm's Lua
// actions), which replace the built-in set of their kind as in Argo CD
// unless they ask to be merged. Apply shows what a plan makes of an object;
// Writer sends a plan. Errors carry opserr's kinds: an unknown action or a
// bad parameter is ErrInvalid; a disabled action, or a Job that exists
// already, ErrConflict.
package resourceactions
