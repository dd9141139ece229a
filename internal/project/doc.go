// Package project decides what an Application may use and do under its
// AppProject: which repositories it may take manifests from, which clusters
// and namespaces it may deploy to, which kinds of resources it may create,
// and when it may sync. The rules follow Argo CD's so that existing projects
// keep their meaning.
//
// Every function is pure: it reads only its arguments (the current time is
// passed in) and neither calls an API server nor logs.
package project
