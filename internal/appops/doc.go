// Package appops is what can be done to Applications, under every face
// Skiff has: the CLI (`skiff app`, through the API server or with --core),
// the API server (and the web UI through it) and, for validation and
// namespaces, the Application controller. It holds no HTTP, no flags and
// nothing of the controllers: the CLI maps flags to these operations, the
// API server maps requests and RBAC to them and their errors' kinds
// (ErrNotFound, ErrInvalid, ErrConflict) to 404, 400 and 409. Messages
// speak in the API's terms; only the CLI names its flags.
//
// Files: errors.go (the kinds), validate.go (an app against its project),
// namespaces.go (namespace defaulting of rendered objects), compare.go
// (desired and live state, diffs: Renderer), operations.go (sync request,
// rollback, terminate, delete with finalizers, refresh).
package appops
