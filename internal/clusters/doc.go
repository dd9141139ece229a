// Package clusters reads the clusters Skiff deploys to as Argo CD stores
// them: Secrets labelled argocd.argoproj.io/secret-type=cluster in Skiff's
// namespace, with the keys name, server, namespaces, clusterResources,
// project, shard and config (Argo CD's ClusterConfig JSON). It turns one
// into a rest.Config and back into a Secret, and keeps a Registry of them
// that follows the Secrets, with the implicit in-cluster destination.
//
// Credentials (bearerToken, password, keyData, certData, the exec
// provider's env) never leave this package in an error, a log value or a
// Public copy; only RESTConfig and ToSecret carry them.
package clusters
