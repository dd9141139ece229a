package appset

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// PullRequest is one pull (GitLab: merge) request a provider lists.
type PullRequest struct {
	// Number is GitHub's number, GitLab's IID.
	Number int64
	Title  string
	// Branch is the head (source) branch, TargetBranch the base.
	Branch, TargetBranch string
	HeadSHA              string
	Labels               []string
	// Author is the author's login (GitLab: username).
	Author string
}

// PullRequests lists the pull requests a pullRequest generator names:
// github (open ones) or gitlab (in pullRequestState, with all the
// labels), the generator has checked that one of them is set.
type PullRequests func(gen *v1alpha1.PullRequestGenerator) ([]PullRequest, error)

// gitlabStates are the merge request states GitLab filters on.
var gitlabStates = []string{"opened", "closed", "locked", "merged", "all"}

// pullRequests gives one set per pull request that passes the filters, as
// Argo CD's Pull Request generator does.
func (g *generator) pullRequests(pr *v1alpha1.PullRequestGenerator, outer Params) ([]Params, error) {
	if err := checkPullRequest(pr); err != nil {
		return nil, err
	}
	filters, err := compilePRFilters(pr.Filters)
	if err != nil {
		return nil, err
	}
	if g.in.PullRequests == nil {
		return nil, errors.New("pull requests are not available here")
	}
	pulls, err := g.in.PullRequests(pr)
	if err != nil {
		return nil, err
	}
	var out []Params
	for _, pull := range pulls {
		// GitHub's API does not filter on labels; GitLab's does.
		if pr.Github != nil && !hasAll(pull.Labels, pr.Github.Labels) {
			continue
		}
		if !matchesPRFilters(pull, filters) {
			continue
		}
		p, err := g.withValues(g.pullRequestParams(pull), pr.Values, outer)
		if err != nil {
			return nil, fmt.Errorf("pull request %d: %w", pull.Number, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// checkPullRequest says whether Skiff runs the provider pr names.
func checkPullRequest(pr *v1alpha1.PullRequestGenerator) error {
	set := setNames(map[string]bool{
		"github": pr.Github != nil, "gitlab": pr.GitLab != nil, "bitbucket": pr.Bitbucket != nil,
		"bitbucketServer": pr.BitbucketServer != nil, "gitea": pr.Gitea != nil, "azuredevops": pr.AzureDevOps != nil,
	})
	if err := oneProvider("pull request", set); err != nil {
		return err
	}
	switch {
	case pr.Github != nil && pr.Github.AppSecretName != "":
		return fmt.Errorf("github appSecretName (GitHub App authentication): %w; use tokenRef", ErrUnsupported)
	case pr.Github != nil && (pr.Github.Owner == "" || pr.Github.Repo == ""):
		return errors.New("github needs an owner and a repo")
	case pr.GitLab != nil && pr.GitLab.Project == "":
		return errors.New("gitlab needs a project")
	case pr.GitLab != nil && pr.GitLab.PullRequestState != "" && !slices.Contains(gitlabStates, pr.GitLab.PullRequestState):
		return fmt.Errorf("gitlab pullRequestState %q: one of %s, or none for all", pr.GitLab.PullRequestState, strings.Join(gitlabStates, ", "))
	}
	return nil
}

// prFilter is a compiled pull request filter; its tests all must pass.
type prFilter struct {
	branch, target *regexp.Regexp
}

// compilePRFilters compiles the filters' regular expressions.
func compilePRFilters(filters []v1alpha1.PullRequestGeneratorFilter) ([]prFilter, error) {
	out := make([]prFilter, len(filters))
	for i, f := range filters {
		for _, field := range []struct {
			name string
			expr *string
			re   **regexp.Regexp
		}{{"branchMatch", f.BranchMatch, &out[i].branch}, {"targetBranchMatch", f.TargetBranchMatch, &out[i].target}} {
			if field.expr == nil {
				continue
			}
			re, err := regexp.Compile(*field.expr)
			if err != nil {
				return nil, fmt.Errorf("filter %d: %s %q: %w", i+1, field.name, *field.expr, err)
			}
			*field.re = re
		}
	}
	return out, nil
}

// matchesPRFilters says whether pull passes one of the filters (any pull
// request when there are none).
func matchesPRFilters(pull PullRequest, filters []prFilter) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if f.branch != nil && !f.branch.MatchString(pull.Branch) {
			continue
		}
		if f.target != nil && !f.target.MatchString(pull.TargetBranch) {
			continue
		}
		return true
	}
	return false
}

// hasAll says whether labels has every one of want.
func hasAll(labels, want []string) bool {
	for _, w := range want {
		if !slices.Contains(labels, w) {
			return false
		}
	}
	return true
}

// pullRequestParams are a pull request's parameters, as Argo CD names
// them; labels only with goTemplate, as there.
func (g *generator) pullRequestParams(pull PullRequest) Params {
	p := Params{
		"number":             strconv.FormatInt(pull.Number, 10),
		"title":              pull.Title,
		"branch":             pull.Branch,
		"branch_slug":        branchSlug(pull.Branch),
		"target_branch":      pull.TargetBranch,
		"target_branch_slug": branchSlug(pull.TargetBranch),
		"head_sha":           pull.HeadSHA,
		"head_short_sha":     prefix(pull.HeadSHA, 8),
		"head_short_sha_7":   prefix(pull.HeadSHA, 7),
		"author":             pull.Author,
	}
	if g.opts.GoTemplate {
		labels := make([]any, len(pull.Labels))
		for i, l := range pull.Labels {
			labels[i] = l
		}
		p["labels"] = labels
	}
	return p
}

// branchSlug is a branch name as the slug Argo CD makes of it (gosimple's,
// English, "_" as "-", at most 50 characters cut between words): "&" and
// "@" are spelt out; other characters than ASCII letters and digits
// separate words (gosimple transliterates non-ASCII letters).
func branchSlug(branch string) string {
	s, _ := slugify(strings.NewReplacer("&", "and", "@", "at").Replace(branch))
	return s
}
