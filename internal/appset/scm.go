package appset

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Repo is one repository an SCM provider lists, on one branch.
type Repo struct {
	// Organization is the owner (GitLab: the namespace's full path).
	Organization string
	// Repository is the name (GitLab: the project's path).
	Repository string
	// SSHURL and HTTPSURL are the clone URLs; cloneProtocol picks one.
	SSHURL, HTTPSURL string
	// Branch is the default branch in Repos' answer, each branch in
	// Branches'.
	Branch string
	// SHA is the branch's commit; Branches gives it.
	SHA string
	// Labels are the repository's topics.
	Labels []string
	// ID is the provider's own ID of the repository, for its later calls.
	ID string
}

// SCMProvider is the API of the SCM an scmProvider generator names.
type SCMProvider interface {
	// Repos lists the repositories, each on its default branch.
	Repos() ([]Repo, error)
	// Branches gives repo on each of its branches with their SHAs: only
	// the default one unless allBranches, none when the repository is
	// empty.
	Branches(repo Repo) ([]Repo, error)
	// HasPath says whether a file or directory exists on repo's branch.
	HasPath(repo Repo, path string) (bool, error)
}

// SCMProviders connects to the SCM an scmProvider generator names: github
// or gitlab, the generator has checked that one of them is set.
type SCMProviders func(gen *v1alpha1.SCMProviderGenerator) (SCMProvider, error)

// scmProvider gives one set per repository branch that passes the
// filters, as Argo CD's SCM Provider generator does.
func (g *generator) scmProvider(s *v1alpha1.SCMProviderGenerator, outer Params) ([]Params, error) {
	if err := checkSCMProvider(s); err != nil {
		return nil, err
	}
	filters, err := compileSCMFilters(s.Filters)
	if err != nil {
		return nil, err
	}
	if g.in.SCM == nil {
		return nil, errors.New("SCM providers are not available here")
	}
	provider, err := g.in.SCM(s)
	if err != nil {
		return nil, err
	}
	repos, err := provider.Repos()
	if err != nil {
		return nil, err
	}
	var branches []Repo
	for _, r := range keepRepos(repos, filters) {
		bs, err := provider.Branches(r)
		if err != nil {
			return nil, err
		}
		branches = append(branches, bs...)
	}
	branches, err = keepBranches(branches, filters, provider.HasPath)
	if err != nil {
		return nil, err
	}
	var out []Params
	for _, r := range branches {
		p, err := g.withValues(scmParams(r, s.CloneProtocol), s.Values, outer)
		if err != nil {
			return nil, fmt.Errorf("repository %s/%s branch %s: %w", r.Organization, r.Repository, r.Branch, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// checkSCMProvider says whether Skiff runs the provider s names.
func checkSCMProvider(s *v1alpha1.SCMProviderGenerator) error {
	set := setNames(map[string]bool{
		"github": s.Github != nil, "gitlab": s.Gitlab != nil, "bitbucket": s.Bitbucket != nil,
		"bitbucketServer": s.BitbucketServer != nil, "gitea": s.Gitea != nil,
		"azureDevOps": s.AzureDevOps != nil, "awsCodeCommit": s.AWSCodeCommit != nil,
	})
	if err := oneProvider("SCM", set); err != nil {
		return err
	}
	switch {
	case s.Github != nil && s.Github.AppSecretName != "":
		return fmt.Errorf("github appSecretName (GitHub App authentication): %w; use tokenRef", ErrUnsupported)
	case s.Github != nil && s.Github.Organization == "":
		return errors.New("github needs an organization")
	case s.Gitlab != nil && s.Gitlab.Group == "":
		return errors.New("gitlab needs a group")
	}
	switch s.CloneProtocol {
	case "", "ssh", "https":
		return nil
	}
	return fmt.Errorf("cloneProtocol %q: ssh (the default) or https", s.CloneProtocol)
}

// setNames are the names whose value is true, sorted.
func setNames(m map[string]bool) []string {
	var out []string
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// oneProvider checks that exactly one provider is set and that it is
// github or gitlab.
func oneProvider(what string, set []string) error {
	switch {
	case len(set) == 0:
		return fmt.Errorf("no %s provider is set (github or gitlab)", what)
	case len(set) > 1:
		return fmt.Errorf("several %s providers are set (%s); give one per generator", what, strings.Join(set, ", "))
	case set[0] != "github" && set[0] != "gitlab":
		return fmt.Errorf("the %s %s provider: %w (github and gitlab are)", set[0], what, ErrUnsupported)
	}
	return nil
}

// scmFilter is a compiled SCM provider filter; its tests all must pass.
type scmFilter struct {
	repository, label, branch   *regexp.Regexp
	pathsExist, pathsDoNotExist []string
}

// compileSCMFilters compiles the filters' regular expressions.
func compileSCMFilters(filters []v1alpha1.SCMProviderGeneratorFilter) ([]scmFilter, error) {
	out := make([]scmFilter, len(filters))
	for i, f := range filters {
		var err error
		compile := func(field string, expr *string) *regexp.Regexp {
			if expr == nil || err != nil {
				return nil
			}
			var re *regexp.Regexp
			if re, err = regexp.Compile(*expr); err != nil {
				err = fmt.Errorf("filter %d: %s %q: %w", i+1, field, *expr, err)
			}
			return re
		}
		out[i] = scmFilter{
			repository: compile("repositoryMatch", f.RepositoryMatch),
			label:      compile("labelMatch", f.LabelMatch),
			branch:     compile("branchMatch", f.BranchMatch),
			pathsExist: f.PathsExist, pathsDoNotExist: f.PathsDoNotExist,
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// onRepository says whether f tests the repository (name, labels), which
// is done before its branches are listed.
func (f scmFilter) onRepository() bool { return f.repository != nil || f.label != nil }

// onBranch says whether f tests the branch (name, paths).
func (f scmFilter) onBranch() bool {
	return f.branch != nil || len(f.pathsExist) > 0 || len(f.pathsDoNotExist) > 0
}

// matchesRepository says whether r passes f's repository tests.
func (f scmFilter) matchesRepository(r Repo) bool {
	if f.repository != nil && !f.repository.MatchString(r.Repository) {
		return false
	}
	if f.label == nil {
		return true
	}
	for _, l := range r.Labels {
		if f.label.MatchString(l) {
			return true
		}
	}
	return false
}

// matchesBranch says whether r passes f's branch tests; paths are asked
// of the provider (hasPath) only when the name matches.
func (f scmFilter) matchesBranch(r Repo, hasPath func(Repo, string) (bool, error)) (bool, error) {
	if f.branch != nil && !f.branch.MatchString(r.Branch) {
		return false, nil
	}
	for _, want := range []struct {
		paths []string
		exist bool
	}{{f.pathsExist, true}, {f.pathsDoNotExist, false}} {
		for _, p := range want.paths {
			has, err := hasPath(r, strings.TrimRight(p, "/"))
			if err != nil {
				return false, err
			}
			if has != want.exist {
				return false, nil
			}
		}
	}
	return true, nil
}

// keepRepos keeps the repositories that pass one of the filters testing
// repositories (all when none does), as Argo CD does.
func keepRepos(repos []Repo, filters []scmFilter) []Repo {
	var tests []scmFilter
	for _, f := range filters {
		if f.onRepository() {
			tests = append(tests, f)
		}
	}
	if len(tests) == 0 {
		return repos
	}
	var out []Repo
	for _, r := range repos {
		for _, f := range tests {
			if f.matchesRepository(r) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// keepBranches keeps the branches that pass one of the filters testing
// branches (all when none does). A filter testing both the repository and
// the branch must pass both, but the repository tests were keepRepos'.
func keepBranches(branches []Repo, filters []scmFilter, hasPath func(Repo, string) (bool, error)) ([]Repo, error) {
	var tests []scmFilter
	for _, f := range filters {
		if f.onBranch() {
			tests = append(tests, f)
		}
	}
	if len(tests) == 0 {
		return branches, nil
	}
	var out []Repo
	for _, r := range branches {
		for _, f := range tests {
			ok, err := f.matchesBranch(r, hasPath)
			if err != nil {
				return nil, fmt.Errorf("repository %s/%s branch %s: %w", r.Organization, r.Repository, r.Branch, err)
			}
			if ok {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

// scmParams are a repository branch's parameters, as Argo CD names them.
func scmParams(r Repo, cloneProtocol string) Params {
	url := r.SSHURL
	if cloneProtocol == "https" {
		url = r.HTTPSURL
	}
	return Params{
		"organization":     r.Organization,
		"repository":       r.Repository,
		"url":              url,
		"branch":           r.Branch,
		"sha":              r.SHA,
		"short_sha":        prefix(r.SHA, 8),
		"short_sha_7":      prefix(r.SHA, 7),
		"labels":           strings.Join(r.Labels, ","),
		"branchNormalized": sanitizeName(r.Branch),
	}
}

// prefix is s's first n bytes, or s when shorter.
func prefix(s string, n int) string {
	return s[:min(len(s), n)]
}
