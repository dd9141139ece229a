package scm

import (
	"context"
	"errors"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset"
)

// Provider connects to the SCM of an scmProvider generator (appset has
// checked that github or gitlab is set), as appset.SCMProviders.
func (c Client) Provider(ctx context.Context, gen *v1alpha1.SCMProviderGenerator) (appset.SCMProvider, error) {
	if err := c.Policy.enabled("scmProvider"); err != nil {
		return nil, err
	}
	switch {
	case gen.Github != nil:
		a, err := c.newGitHub(ctx, gen.Github.API, gen.Github.TokenRef)
		if err != nil {
			return nil, err
		}
		return github{api: a, org: gen.Github.Organization, allBranches: gen.Github.AllBranches}, nil
	case gen.Gitlab != nil:
		a, err := c.newGitLab(ctx, gen.Gitlab.API, gen.Gitlab.TokenRef, gen.Gitlab.Insecure)
		if err != nil {
			return nil, err
		}
		return gitlab{api: a, gen: gen.Gitlab}, nil
	}
	return nil, errors.New("no SCM provider is set (github or gitlab)")
}

// PullRequests lists the pull requests of a pullRequest generator's
// repository (appset has checked that github or gitlab is set), as
// appset.PullRequests: GitHub's open ones, GitLab's with the labels in
// pullRequestState.
func (c Client) PullRequests(ctx context.Context, gen *v1alpha1.PullRequestGenerator) ([]appset.PullRequest, error) {
	if err := c.Policy.enabled("pullRequest"); err != nil {
		return nil, err
	}
	switch {
	case gen.Github != nil:
		a, err := c.newGitHub(ctx, gen.Github.API, gen.Github.TokenRef)
		if err != nil {
			return nil, err
		}
		return githubPulls(a, gen.Github.Owner, gen.Github.Repo)
	case gen.GitLab != nil:
		a, err := c.newGitLab(ctx, gen.GitLab.API, gen.GitLab.TokenRef, gen.GitLab.Insecure)
		if err != nil {
			return nil, err
		}
		return gitlabMergeRequests(a, gen.GitLab.Project, gen.GitLab.Labels, gen.GitLab.PullRequestState)
	}
	return nil, errors.New("no pull request provider is set (github or gitlab)")
}
