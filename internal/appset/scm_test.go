package appset

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// fakeSCM answers as an organization "acme" with three repositories:
// guestbook (branches main and feature/x_y), infra (master) and empty (no
// branch). It counts what it is asked.
type fakeSCM struct {
	allBranches bool
	branchCalls []string
	pathCalls   int
}

var fakeRepos = []Repo{
	{Organization: "acme", Repository: "guestbook", Branch: "main", Labels: []string{"team-a", "web"},
		SSHURL: "git@example.com:acme/guestbook.git", HTTPSURL: "https://example.com/acme/guestbook.git"},
	{Organization: "acme", Repository: "infra", Branch: "master",
		SSHURL: "git@example.com:acme/infra.git", HTTPSURL: "https://example.com/acme/infra.git"},
	{Organization: "acme", Repository: "empty", Branch: "main",
		SSHURL: "git@example.com:acme/empty.git", HTTPSURL: "https://example.com/acme/empty.git"},
}

var fakeBranches = map[string][][2]string{ // repository -> branch, SHA; the default first
	"guestbook": {{"main", "0123456789abcdef"}, {"feature/x_y", "abcdef1"}},
	"infra":     {{"master", "fedcba9876543210"}},
}

var fakePaths = map[string][]string{ // repository@branch -> paths
	"guestbook@main":        {"apps", "apps/kustomization.yaml"},
	"guestbook@feature/x_y": {"apps"},
	"infra@master":          {"terraform"},
}

func (f *fakeSCM) Repos() ([]Repo, error) { return fakeRepos, nil }

func (f *fakeSCM) Branches(r Repo) ([]Repo, error) {
	f.branchCalls = append(f.branchCalls, r.Repository)
	var out []Repo
	for i, b := range fakeBranches[r.Repository] {
		if i > 0 && !f.allBranches {
			break
		}
		rb := r
		rb.Branch, rb.SHA = b[0], b[1]
		out = append(out, rb)
	}
	return out, nil
}

func (f *fakeSCM) HasPath(r Repo, path string) (bool, error) {
	f.pathCalls++
	for _, p := range fakePaths[r.Repository+"@"+r.Branch] {
		if p == path {
			return true, nil
		}
	}
	return false, nil
}

// scmInputs serve f for github and gitlab alike.
func scmInputs(f *fakeSCM) Inputs {
	return Inputs{SCM: func(gen *v1alpha1.SCMProviderGenerator) (SCMProvider, error) {
		f.allBranches = gen.Github != nil && gen.Github.AllBranches || gen.Gitlab != nil && gen.Gitlab.AllBranches
		return f, nil
	}}
}

// repoBranches names each set by repository@branch.
func repoBranches(res Result) []string {
	var out []string
	for _, p := range params(res) {
		out = append(out, fmt.Sprintf("%v@%v", p["repository"], p["branch"]))
	}
	return out
}

func TestSCMProviderParameters(t *testing.T) {
	tests := map[string]struct {
		spec string
		want []Params
	}{
		"each repository gives its default branch with Argo CD's parameters, the SSH URL by default": {
			spec: `{generators: [{scmProvider: {github: {organization: acme}, filters: [{repositoryMatch: guestbook}]}}]}`,
			want: []Params{{
				"organization": "acme", "repository": "guestbook", "url": "git@example.com:acme/guestbook.git",
				"branch": "main", "sha": "0123456789abcdef", "short_sha": "01234567", "short_sha_7": "0123456",
				"labels": "team-a,web", "branchNormalized": "main",
			}},
		},
		"cloneProtocol https gives the HTTPS URL; a short SHA stays whole; values render with the set": {
			spec: `{generators: [{scmProvider: {gitlab: {group: acme, allBranches: true}, cloneProtocol: https,
			  filters: [{branchMatch: feature}], values: {app: '{{repository}}-{{branchNormalized}}'}}}]}`,
			want: []Params{{
				"organization": "acme", "repository": "guestbook", "url": "https://example.com/acme/guestbook.git",
				"branch": "feature/x_y", "sha": "abcdef1", "short_sha": "abcdef1", "short_sha_7": "abcdef1",
				"labels": "team-a,web", "branchNormalized": "feature-x-y", "values.app": "guestbook-feature-x-y",
			}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := Generate(specOf(t, tc.spec), scmInputs(&fakeSCM{}))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, params(res)); diff != "" {
				t.Errorf("parameters differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSCMProviderFilters(t *testing.T) {
	tests := map[string]struct {
		filters      string
		allBranches  bool
		want         []string
		wantBranches []string // the repositories whose branches were listed
	}{
		"without filters every repository's default branch is kept; an empty repository gives none": {
			filters: `[]`, want: []string{"guestbook@main", "infra@master"},
			wantBranches: []string{"guestbook", "infra", "empty"},
		},
		"allBranches gives every branch": {
			filters: `[]`, allBranches: true, want: []string{"guestbook@main", "guestbook@feature/x_y", "infra@master"},
			wantBranches: []string{"guestbook", "infra", "empty"},
		},
		"repositoryMatch keeps matching repositories and lists no branch of the others": {
			filters: `[{repositoryMatch: '^in'}]`, want: []string{"infra@master"}, wantBranches: []string{"infra"},
		},
		"labelMatch keeps repositories with a matching topic": {
			filters: `[{labelMatch: '^team-'}]`, want: []string{"guestbook@main"}, wantBranches: []string{"guestbook"},
		},
		"repository filters are or'ed": {
			filters: `[{repositoryMatch: infra}, {labelMatch: web}]`, want: []string{"guestbook@main", "infra@master"},
			wantBranches: []string{"guestbook", "infra"},
		},
		"the tests of one filter are and'ed": {
			filters: `[{repositoryMatch: guestbook, labelMatch: nope}]`, want: nil, wantBranches: nil,
		},
		"a filter on the repository and the branch needs both": {
			filters: `[{repositoryMatch: guestbook, branchMatch: feature}]`, allBranches: true,
			want: []string{"guestbook@feature/x_y"}, wantBranches: []string{"guestbook"},
		},
		"branch filters are or'ed": {
			filters: `[{branchMatch: '^main$'}, {branchMatch: '^master$'}]`, allBranches: true,
			want: []string{"guestbook@main", "infra@master"}, wantBranches: []string{"guestbook", "infra", "empty"},
		},
		"pathsExist keeps branches that have every path; a trailing / is ignored": {
			filters: `[{pathsExist: [apps/, apps/kustomization.yaml]}]`, allBranches: true,
			want: []string{"guestbook@main"}, wantBranches: []string{"guestbook", "infra", "empty"},
		},
		"pathsDoNotExist drops branches that have one of the paths": {
			filters: `[{pathsDoNotExist: [apps/kustomization.yaml, nothing]}]`, allBranches: true,
			want: []string{"guestbook@feature/x_y", "infra@master"}, wantBranches: []string{"guestbook", "infra", "empty"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := &fakeSCM{}
			spec := fmt.Sprintf(`{generators: [{scmProvider: {github: {organization: acme, allBranches: %v}, filters: %s}}]}`, tc.allBranches, tc.filters)
			res, err := Generate(specOf(t, spec), scmInputs(f))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, repoBranches(res)); diff != "" {
				t.Errorf("sets differ (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBranches, f.branchCalls); diff != "" {
				t.Errorf("branches listed differ (-want +got):\n%s", diff)
			}
		})
	}
}

// A branch whose name fails branchMatch is not asked about its paths.
func TestSCMProviderPathsAskedAfterBranchName(t *testing.T) {
	f := &fakeSCM{}
	spec := `{generators: [{scmProvider: {github: {organization: acme}, filters: [{branchMatch: nope, pathsExist: [apps]}]}}]}`
	if _, err := Generate(specOf(t, spec), scmInputs(f)); err != nil {
		t.Fatal(err)
	}
	if f.pathCalls != 0 {
		t.Errorf("paths were asked %d times, want none", f.pathCalls)
	}
}

func TestSCMProviderErrors(t *testing.T) {
	tests := map[string]struct {
		spec        string
		in          Inputs
		wantErr     string
		unsupported bool
	}{
		"an unknown cloneProtocol is an error": {
			spec: `{generators: [{scmProvider: {github: {organization: acme}, cloneProtocol: git}}]}`,
			in:   scmInputs(&fakeSCM{}), wantErr: `cloneProtocol "git": ssh (the default) or https`,
		},
		"a filter that is not a regular expression is named": {
			spec: `{generators: [{scmProvider: {github: {organization: acme}, filters: [{}, {branchMatch: '('}]}}]}`,
			in:   scmInputs(&fakeSCM{}), wantErr: `filter 2: branchMatch "("`,
		},
		"another provider is unsupported, by name": {
			spec: `{generators: [{scmProvider: {bitbucketServer: {project: p, api: https://b.example.com}}}]}`,
			in:   scmInputs(&fakeSCM{}), wantErr: "the bitbucketServer SCM provider: generator not supported (github and gitlab are)", unsupported: true,
		},
		"GitHub App authentication is unsupported": {
			spec: `{generators: [{scmProvider: {github: {organization: acme, appSecretName: app}}}]}`,
			in:   scmInputs(&fakeSCM{}), wantErr: "appSecretName", unsupported: true,
		},
		"no provider is an error": {
			spec: `{generators: [{scmProvider: {cloneProtocol: ssh}}]}`,
			in:   scmInputs(&fakeSCM{}), wantErr: "no SCM provider is set (github or gitlab)",
		},
		"two providers are an error naming them": {
			spec: `{generators: [{scmProvider: {github: {organization: a}, gitlab: {group: b}}}]}`,
			in:   scmInputs(&fakeSCM{}), wantErr: "several SCM providers are set (github, gitlab)",
		},
		"a GitLab provider without group is an error": {
			spec: `{generators: [{scmProvider: {gitlab: {group: ''}}}]}`,
			in:   scmInputs(&fakeSCM{}), wantErr: "gitlab needs a group",
		},
		"without SCM access it is an error": {
			spec:    `{generators: [{scmProvider: {github: {organization: acme}}}]}`,
			wantErr: "SCM providers are not available here",
		},
		"the provider's error is passed on": {
			spec: `{generators: [{scmProvider: {github: {organization: acme}}}]}`,
			in: Inputs{SCM: func(*v1alpha1.SCMProviderGenerator) (SCMProvider, error) {
				return nil, errors.New("github: 401 Unauthorized")
			}},
			wantErr: "generator 1 (scmProvider): github: 401 Unauthorized",
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
