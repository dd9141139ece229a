package applicationset

import (
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Argo CD's default periods of the generators that read what no watch
// tells about: git (and Cluster Decision Resource) every 3 minutes, SCM
// providers, pull requests and plugins every 30.
const (
	defaultGitRequeue = 3 * time.Minute
	defaultAPIRequeue = 30 * time.Minute
	// errorRequeue is when a set whose pass failed is tried again without
	// being woken (Argo's ReconcileRequeueOnValidationError).
	errorRequeue = 3 * time.Minute
)

// requeueAfter is how long until set's generators are read again without
// an event (Argo CD's getMinRequeueAfter): the shortest of its generators'
// requeueAfterSeconds, or their defaults; 0 when none needs it (List and
// Cluster generators: a change of the set or of a cluster Secret wakes it).
func requeueAfter(set *v1alpha1.ApplicationSet) time.Duration {
	var out time.Duration
	for _, g := range set.Spec.Generators {
		out = sooner(out, nestedRequeue(v1alpha1.ApplicationSetTerminalGenerator{
			List: g.List, Clusters: g.Clusters, Git: g.Git, SCMProvider: g.SCMProvider,
			ClusterDecisionResource: g.ClusterDecisionResource, PullRequest: g.PullRequest, Plugin: g.Plugin,
		}.ToNested()))
		if g.Matrix != nil {
			out = sooner(out, childrenRequeue(g.Matrix.Generators))
		}
		if g.Merge != nil {
			out = sooner(out, childrenRequeue(g.Merge.Generators))
		}
	}
	return out
}

// childrenRequeue is the shortest requeue of a matrix's or merge's
// generators, two levels deep at most (as the CRD allows).
func childrenRequeue(gens []v1alpha1.ApplicationSetNestedGenerator) time.Duration {
	var out time.Duration
	for _, g := range gens {
		out = sooner(out, nestedRequeue(g))
		var deeper []v1alpha1.ApplicationSetTerminalGenerator
		if m, err := v1alpha1.ToNestedMatrixGenerator(g.Matrix); err == nil && m != nil {
			deeper = append(deeper, m.Generators...)
		}
		if m, err := v1alpha1.ToNestedMergeGenerator(g.Merge); err == nil && m != nil {
			deeper = append(deeper, m.Generators...)
		}
		for _, t := range deeper {
			out = sooner(out, nestedRequeue(t.ToNested()))
		}
	}
	return out
}

// nestedRequeue is the requeue one generator asks for.
func nestedRequeue(g v1alpha1.ApplicationSetNestedGenerator) time.Duration {
	var out time.Duration
	if g.Git != nil {
		out = sooner(out, period(g.Git.RequeueAfterSeconds, defaultGitRequeue))
	}
	if g.ClusterDecisionResource != nil {
		out = sooner(out, period(g.ClusterDecisionResource.RequeueAfterSeconds, defaultGitRequeue))
	}
	if g.SCMProvider != nil {
		out = sooner(out, period(g.SCMProvider.RequeueAfterSeconds, defaultAPIRequeue))
	}
	if g.PullRequest != nil {
		out = sooner(out, period(g.PullRequest.RequeueAfterSeconds, defaultAPIRequeue))
	}
	if g.Plugin != nil {
		out = sooner(out, period(g.Plugin.RequeueAfterSeconds, defaultAPIRequeue))
	}
	return out
}

// period is requeueAfterSeconds when set (0: never), else def.
func period(seconds *int64, def time.Duration) time.Duration {
	if seconds == nil {
		return def
	}
	return time.Duration(max(*seconds, 0)) * time.Second
}

// sooner is the sooner of two waits, 0 standing for none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || b > 0 && b < a {
		return b
	}
	return a
}
