package appset

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

var fakePulls = []PullRequest{
	{Number: 12, Title: "Add the cart", Branch: "feature/Cart_v2", TargetBranch: "main",
		HeadSHA: "89abcdef01234567", Labels: []string{"preview", "team-a"}, Author: "ann"},
	{Number: 13, Title: "Fix the release", Branch: "fix&tidy", TargetBranch: "release-1.0",
		HeadSHA: "fedcba9", Author: "bob"},
}

// prInputs serve fakePulls for github and gitlab alike.
func prInputs() Inputs {
	return Inputs{PullRequests: func(*v1alpha1.PullRequestGenerator) ([]PullRequest, error) { return fakePulls, nil }}
}

func TestPullRequestParameters(t *testing.T) {
	tests := map[string]struct {
		spec string
		want []Params
	}{
		"a pull request gives Argo CD's parameters, without labels by default": {
			spec: `{generators: [{pullRequest: {github: {owner: acme, repo: shop}, filters: [{targetBranchMatch: '^main$'}]}}]}`,
			want: []Params{{
				"number": "12", "title": "Add the cart", "branch": "feature/Cart_v2", "branch_slug": "feature-cart-v2",
				"target_branch": "main", "target_branch_slug": "main", "head_sha": "89abcdef01234567",
				"head_short_sha": "89abcdef", "head_short_sha_7": "89abcde", "author": "ann",
			}},
		},
		"with goTemplate labels are a list; a short SHA stays whole; values render with the set": {
			spec: `{goTemplate: true, generators: [{pullRequest: {gitlab: {project: acme/shop}, filters: [{branchMatch: fix}],
			  values: {host: '{{ .branch_slug }}.example.com'}}}]}`,
			want: []Params{{
				"number": "13", "title": "Fix the release", "branch": "fix&tidy", "branch_slug": "fixandtidy",
				"target_branch": "release-1.0", "target_branch_slug": "release-1-0", "head_sha": "fedcba9",
				"head_short_sha": "fedcba9", "head_short_sha_7": "fedcba9", "author": "bob", "labels": []any{},
				"values": map[string]any{"host": "fixandtidy.example.com"},
			}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := Generate(specOf(t, tc.spec), prInputs())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, params(res)); diff != "" {
				t.Errorf("parameters differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPullRequestFilters(t *testing.T) {
	tests := map[string]struct {
		provider string
		filters  string
		want     []string
	}{
		"without filters every pull request is kept": {
			provider: `github: {owner: acme, repo: shop}`, filters: `[]`, want: []string{"12", "13"},
		},
		"GitHub keeps the pull requests with every label": {
			provider: `github: {owner: acme, repo: shop, labels: [preview, team-a]}`, filters: `[]`, want: []string{"12"},
		},
		"GitHub drops a pull request that lacks one label": {
			provider: `github: {owner: acme, repo: shop, labels: [preview, team-b]}`, filters: `[]`, want: nil,
		},
		"GitLab's labels are the API's to filter": {
			provider: `gitlab: {project: acme/shop, labels: [team-b]}`, filters: `[]`, want: []string{"12", "13"},
		},
		"filters are or'ed": {
			provider: `github: {owner: acme, repo: shop}`, filters: `[{branchMatch: '^feature/'}, {targetBranchMatch: '^release-'}]`,
			want: []string{"12", "13"},
		},
		"the tests of one filter are and'ed": {
			provider: `github: {owner: acme, repo: shop}`, filters: `[{branchMatch: '^feature/', targetBranchMatch: '^release-'}]`,
			want: nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := fmt.Sprintf(`{generators: [{pullRequest: {%s, filters: %s}}]}`, tc.provider, tc.filters)
			res, err := Generate(specOf(t, spec), prInputs())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range params(res) {
				got = append(got, p["number"].(string))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pull requests differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPullRequestErrors(t *testing.T) {
	tests := map[string]struct {
		spec        string
		in          Inputs
		wantErr     string
		unsupported bool
	}{
		"another provider is unsupported, by name": {
			spec: `{generators: [{pullRequest: {gitea: {owner: o, repo: r, api: https://g.example.com}}}]}`,
			in:   prInputs(), wantErr: "the gitea pull request provider: generator not supported (github and gitlab are)", unsupported: true,
		},
		"Azure DevOps is named as Argo CD spells it": {
			spec: `{generators: [{pullRequest: {azuredevops: {organization: o, project: p, repo: r}}}]}`,
			in:   prInputs(), wantErr: "the azuredevops pull request provider", unsupported: true,
		},
		"GitHub App authentication is unsupported": {
			spec: `{generators: [{pullRequest: {github: {owner: o, repo: r, appSecretName: app}}}]}`,
			in:   prInputs(), wantErr: "appSecretName", unsupported: true,
		},
		"an unknown GitLab state is an error naming the known ones": {
			spec: `{generators: [{pullRequest: {gitlab: {project: p, pullRequestState: open}}}]}`,
			in:   prInputs(), wantErr: `pullRequestState "open": one of opened, closed, locked, merged, all`,
		},
		"a GitHub provider without repo is an error": {
			spec: `{generators: [{pullRequest: {github: {owner: o, repo: ''}}}]}`,
			in:   prInputs(), wantErr: "github needs an owner and a repo",
		},
		"a filter that is not a regular expression is named": {
			spec: `{generators: [{pullRequest: {github: {owner: o, repo: r}, filters: [{targetBranchMatch: '['}]}}]}`,
			in:   prInputs(), wantErr: `filter 1: targetBranchMatch "["`,
		},
		"without pull request access it is an error": {
			spec:    `{generators: [{pullRequest: {github: {owner: o, repo: r}}}]}`,
			wantErr: "pull requests are not available here",
		},
		"the provider's error is passed on": {
			spec: `{generators: [{pullRequest: {github: {owner: o, repo: r}}}]}`,
			in: Inputs{PullRequests: func(*v1alpha1.PullRequestGenerator) ([]PullRequest, error) {
				return nil, errors.New("github: rate limit exceeded")
			}},
			wantErr: "generator 1 (pullRequest): github: rate limit exceeded",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Generate(specOf(t, tc.spec), tc.in)
			failed(t, err, tc.wantErr)
			if got := errors.Is(err, ErrUnsupported); got != tc.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v", got, tc.unsupported)
			}
		})
	}
}

func TestBranchSlug(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"a plain branch stays":                         {"main", "main"},
		"slashes, dots and underscores become dashes":  {"feature/v1.2_beta", "feature-v1-2-beta"},
		"upper case is lowered and dashes collapse":    {"--Fix--THE__bug--", "fix-the-bug"},
		"& and @ are spelt out":                        {"a&b@c", "aandbatc"},
		"a long name is cut between words at 50 chars": {"renovate/kubernetes-client-go-major-version-bump-to-v0-30", "renovate-kubernetes-client-go-major-version-bump"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := branchSlug(tc.in); got != tc.want {
				t.Errorf("branchSlug(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
