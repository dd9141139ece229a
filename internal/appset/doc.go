// Package appset turns an ApplicationSet's spec into Applications, as Argo
// CD's ApplicationSet controller does, without a client: generators make
// parameter sets from data passed in (clusters, git trees, SCM and pull
// request listings, see package scm for GitHub and GitLab), and templates
// render one Application per set. The controller fetches the inputs and
// applies the result.
//
// Parameter names follow Argo CD: flat strings ("path.basename",
// "metadata.labels.env", "values.x") for the default `{{param}}`
// substitution, nested values (.path.basename, .metadata.labels.env) with
// goTemplate.
package appset
