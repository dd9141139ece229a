package project

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// CheckSource returns nil when the project's sourceRepos permit repoURL.
//
// Patterns and the URL are compared, as Argo CD does, after normalization:
// case, surrounding space and a trailing "/" or ".git" are ignored, and
// scp-like addresses ("git@host:org/repo") equal their ssh:// form. They are
// compared as globs in which "*" stays within one path segment and "**" crosses
// segments; the lone pattern "*" permits every repository. A pattern
// starting with "!" denies the repositories it matches, and a deny wins over
// any allow, whatever the order. As in Argo CD, a deny pattern counts as
// matching every repository it does not deny, so a list of only deny
// patterns permits all other repositories.
func CheckSource(p *v1alpha1.AppProject, repoURL string) error {
	if p == nil {
		return errNilProject
	}
	if sourcePermitted(p.Spec.SourceRepos, repoURL) {
		return nil
	}
	return &notPermittedError{msg: fmt.Sprintf("application repo %s is not permitted in project '%s'", repoURL, p.Name)}
}

func sourcePermitted(patterns []string, repoURL string) bool {
	repo := normalizeRepo(repoURL)
	permitted := false
	for _, pattern := range patterns {
		deny := isDeny(pattern)
		normalized := normalizePattern(strings.TrimPrefix(pattern, "!"))
		if deny {
			normalized = "!" + normalized
		}
		switch {
		case globMatch(normalized, repo, true, '/'):
			permitted = true
		case deny:
			return false
		}
	}
	return permitted
}

// normalizePattern normalizes a sourceRepos pattern like a URL, except that
// the lone "*" stays as it is.
func normalizePattern(pattern string) string {
	if pattern == "*" {
		return pattern
	}
	return normalizeRepo(pattern)
}

// scpLike matches scp-like SSH addresses ("git@host:org/repo").
var scpLike = regexp.MustCompile(`^([^/:]*?)@[^@/:]+:`)

// normalizeRepo makes equivalent spellings of a repository URL equal, as
// Argo CD does: surrounding space and case are ignored, scp-like SSH
// addresses are written as ssh URLs, and a trailing "/" or ".git" is
// dropped. The "ssh://" scheme is left out of the result.
func normalizeRepo(raw string) string {
	s := strings.ToLower(strings.TrimSpace(raw))
	if !strings.Contains(s, "://") && scpLike.MatchString(s) {
		s = "ssh://" + strings.Replace(s, ":", "/", 1)
	}
	s = strings.TrimSuffix(strings.TrimRight(s, "/"), ".git")
	return strings.TrimPrefix(s, "ssh://")
}
