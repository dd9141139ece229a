package scm

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset"
)

// githubAPI is the API an api field names, as go-github's enterprise URLs
// (api/v3/ added unless the host is an API host), or api.github.com.
func githubAPI(apiURL string) string {
	if u, err := url.Parse(apiURL); err == nil && (strings.HasPrefix(u.Host, "api.") || strings.Contains(u.Host, ".api.")) {
		return strings.TrimSuffix(apiURL, "/") + "/"
	}
	return apiBase(apiURL, "api/v3/", "https://api.github.com/")
}

// newGitHub readies GitHub's API with a bearer token, if any.
func (c Client) newGitHub(ctx context.Context, apiURL string, ref *v1alpha1.SecretRef) (*api, error) {
	a, err := c.newAPI(ctx, "GitHub", apiURL, "https://api.github.com", githubAPI(apiURL), ref, false)
	if err != nil {
		return nil, err
	}
	a.header = func(h http.Header) {
		h.Set("Accept", "application/vnd.github+json")
		h.Set("X-GitHub-Api-Version", "2022-11-28")
		if a.token != "" {
			h.Set("Authorization", "Bearer "+a.token)
		}
	}
	return a, nil
}

// github lists an organization's repositories.
type github struct {
	api         *api
	org         string
	allBranches bool
}

type githubBranch struct {
	Name   string `json:"name"`
	Commit struct {
		SHA string `json:"sha"`
	} `json:"commit"`
}

// Repos lists GET /orgs/{org}/repos.
func (g github) Repos() ([]appset.Repo, error) {
	repos, err := list[struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
		DefaultBranch string   `json:"default_branch"`
		SSHURL        string   `json:"ssh_url"`
		CloneURL      string   `json:"clone_url"`
		Topics        []string `json:"topics"`
	}](g.api, "orgs/"+esc(g.org)+"/repos", nil)
	if err != nil {
		return nil, err
	}
	out := make([]appset.Repo, len(repos))
	for i, r := range repos {
		out[i] = appset.Repo{
			Organization: r.Owner.Login, Repository: r.Name, Branch: r.DefaultBranch,
			SSHURL: r.SSHURL, HTTPSURL: r.CloneURL, Labels: r.Topics,
		}
	}
	return out, nil
}

// Branches reads GET /repos/{o}/{r}/branches/{default}, or lists
// /repos/{o}/{r}/branches; a repository without branches has none.
func (g github) Branches(repo appset.Repo) ([]appset.Repo, error) {
	base := "repos/" + esc(repo.Organization) + "/" + esc(repo.Repository) + "/branches"
	branches, err := branchesOf[githubBranch](g.api, base, repo.Branch, g.allBranches)
	out := make([]appset.Repo, len(branches))
	for i, b := range branches {
		out[i] = repo
		out[i].Branch, out[i].SHA = b.Name, b.Commit.SHA
	}
	return out, err
}

// HasPath reads GET /repos/{o}/{r}/contents/{path}?ref={branch}: a file or
// a directory, 404 when neither.
func (g github) HasPath(repo appset.Repo, path string) (bool, error) {
	u := g.api.url("repos/"+esc(repo.Organization)+"/"+esc(repo.Repository)+"/contents/"+escPath(path), url.Values{"ref": {repo.Branch}})
	_, err := g.api.get(u, nil)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	return err == nil, err
}

// githubPulls lists GET /repos/{owner}/{repo}/pulls: the open ones.
func githubPulls(a *api, owner, repo string) ([]appset.PullRequest, error) {
	pulls, err := list[struct {
		Number int64  `json:"number"`
		Title  string `json:"title"`
		Head   struct {
			Ref string `json:"ref"`
			SHA string `json:"sha"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
		} `json:"base"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	}](a, "repos/"+esc(owner)+"/"+esc(repo)+"/pulls", nil)
	if err != nil {
		return nil, err
	}
	out := make([]appset.PullRequest, len(pulls))
	for i, p := range pulls {
		out[i] = appset.PullRequest{
			Number: p.Number, Title: p.Title, Branch: p.Head.Ref, TargetBranch: p.Base.Ref,
			HeadSHA: p.Head.SHA, Author: p.User.Login,
		}
		for _, l := range p.Labels {
			out[i].Labels = append(out[i].Labels, l.Name)
		}
	}
	return out, nil
}
