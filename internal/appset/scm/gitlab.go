package scm

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appset"
)

// newGitLab readies GitLab's API (api/v4/ added to api unless there, or
// gitlab.com's) with a private token, if any.
func (c Client) newGitLab(ctx context.Context, apiURL string, ref *v1alpha1.SecretRef, insecure bool) (*api, error) {
	a, err := c.newAPI(ctx, "GitLab", apiURL, "https://gitlab.com", apiBase(apiURL, "api/v4/", "https://gitlab.com/api/v4/"), ref, insecure)
	if err != nil {
		return nil, err
	}
	a.header = func(h http.Header) {
		if a.token != "" {
			h.Set("PRIVATE-TOKEN", a.token)
		}
	}
	return a, nil
}

// gitlab lists a group's projects.
type gitlab struct {
	api *api
	gen *v1alpha1.SCMProviderGeneratorGitlab
}

type gitlabBranch struct {
	Name   string `json:"name"`
	Commit struct {
		ID string `json:"id"`
	} `json:"commit"`
}

// Repos lists GET /groups/{group}/projects, with subgroups, shared
// projects (by default) and a topic as the generator asks.
func (g gitlab) Repos() ([]appset.Repo, error) {
	q := url.Values{
		"include_subgroups": {strconv.FormatBool(g.gen.IncludeSubgroups)},
		"with_shared":       {strconv.FormatBool(g.gen.IncludeSharedProjects == nil || *g.gen.IncludeSharedProjects)},
	}
	if g.gen.Topic != "" {
		q.Set("topic", g.gen.Topic)
	}
	projects, err := list[struct {
		ID        int64  `json:"id"`
		Path      string `json:"path"`
		Namespace struct {
			FullPath string `json:"full_path"`
		} `json:"namespace"`
		DefaultBranch string   `json:"default_branch"`
		SSHURL        string   `json:"ssh_url_to_repo"`
		HTTPURL       string   `json:"http_url_to_repo"`
		Topics        []string `json:"topics"`
		TagList       []string `json:"tag_list"`
	}](g.api, "groups/"+esc(g.gen.Group)+"/projects", q)
	if err != nil {
		return nil, err
	}
	out := make([]appset.Repo, len(projects))
	for i, p := range projects {
		labels := p.Topics
		if len(labels) == 0 {
			labels = p.TagList // GitLab before 14.5
		}
		out[i] = appset.Repo{
			Organization: p.Namespace.FullPath, Repository: p.Path, Branch: p.DefaultBranch,
			SSHURL: p.SSHURL, HTTPSURL: p.HTTPURL, Labels: labels, ID: strconv.FormatInt(p.ID, 10),
		}
	}
	return out, nil
}

// Branches reads GET /projects/{id}/repository/branches/{default}, or
// lists /projects/{id}/repository/branches; an empty project has none.
func (g gitlab) Branches(repo appset.Repo) ([]appset.Repo, error) {
	base := "projects/" + esc(repo.ID) + "/repository/branches"
	branches, err := branchesOf[gitlabBranch](g.api, base, repo.Branch, g.gen.AllBranches)
	out := make([]appset.Repo, len(branches))
	for i, b := range branches {
		out[i] = repo
		out[i].Branch, out[i].SHA = b.Name, b.Commit.ID
	}
	return out, err
}

// HasPath asks HEAD /projects/{id}/repository/files/{path}?ref={branch}
// for a file, then lists /projects/{id}/repository/tree?path={path} for a
// directory.
func (g gitlab) HasPath(repo appset.Repo, path string) (bool, error) {
	project := "projects/" + esc(repo.ID) + "/repository/"
	ref := url.Values{"ref": {repo.Branch}}
	err := g.api.head(g.api.url(project+"files/"+esc(strings.Trim(path, "/")), ref))
	if !errors.Is(err, errNotFound) {
		return err == nil, err
	}
	var entries []struct {
		Path string `json:"path"`
	}
	ref.Set("path", strings.Trim(path, "/"))
	ref.Set("per_page", "1")
	_, err = g.api.get(g.api.url(project+"tree", ref), &entries)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	return len(entries) > 0, err
}

// gitlabMergeRequests lists GET /projects/{project}/merge_requests with
// all the labels, in state (all states when "").
func gitlabMergeRequests(a *api, project string, labels []string, state string) ([]appset.PullRequest, error) {
	q := url.Values{}
	if len(labels) > 0 {
		q.Set("labels", strings.Join(labels, ","))
	}
	if state != "" {
		q.Set("state", state)
	}
	mrs, err := list[struct {
		IID          int64    `json:"iid"`
		Title        string   `json:"title"`
		SourceBranch string   `json:"source_branch"`
		TargetBranch string   `json:"target_branch"`
		SHA          string   `json:"sha"`
		Labels       []string `json:"labels"`
		Author       struct {
			Username string `json:"username"`
		} `json:"author"`
	}](a, "projects/"+esc(project)+"/merge_requests", q)
	if err != nil {
		return nil, err
	}
	out := make([]appset.PullRequest, len(mrs))
	for i, m := range mrs {
		out[i] = appset.PullRequest{
			Number: m.IID, Title: m.Title, Branch: m.SourceBranch, TargetBranch: m.TargetBranch,
			HeadSHA: m.SHA, Labels: m.Labels, Author: m.Author.Username,
		}
	}
	return out, nil
}
