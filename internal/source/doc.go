// Package source fetches git repositories into a local cache and resolves
// revisions.
//
// A Cache keeps one bare repository per remote URL and materializes the tree
// of a resolved commit as a read-only directory, so renderers never talk to
// git themselves. Credentials come from Argo CD style Secrets (see
// CredentialsForURL), which lets Skiff reuse an existing Argo CD setup.
package source
