package source

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// RepoError reports a failed operation on one repository. Its message names
// the repository (without credentials) and the revision, and has every known
// secret scrubbed from the underlying error text, which may come from a
// remote server. Unwrap still exposes the original error for errors.Is.
type RepoError struct {
	Op       string // OpResolve, "ls-remote", "fetch" or "checkout"
	Repo     string // repository URL with credentials removed
	Revision string // as requested by the caller; may be empty
	Err      error

	secrets []string
}

func (e *RepoError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Op, e.Repo)
	if e.Revision != "" {
		fmt.Fprintf(&b, " at revision %q", e.Revision)
	}
	msg := strings.TrimSpace(e.Err.Error()) // server messages end in newlines
	for _, s := range e.secrets {
		msg = strings.ReplaceAll(msg, s, "***")
	}
	b.WriteString(": ")
	b.WriteString(msg)
	if errors.Is(e.Err, transport.ErrAuthenticationRequired) || errors.Is(e.Err, transport.ErrAuthorizationFailed) {
		b.WriteString(" (check the repository credentials)")
	}
	return b.String()
}

func (e *RepoError) Unwrap() error { return e.Err }

// OpResolve is the Op of a RepoError raised while turning a requested
// revision into a commit.
const OpResolve = "resolve"

// ErrTooLarge is wrapped by the errors of checkouts refused for a file or
// a commit over the size limits; a retry cannot succeed.
var ErrTooLarge = errors.New("larger than the limit")

// ErrRevisionNotFound is wrapped by errors for revisions that match no
// branch, tag or commit of the repository.
var ErrRevisionNotFound = errors.New("revision not found")

func newRepoError(op, rawURL string, creds Credentials, revision string, err error) error {
	return &RepoError{
		Op:       op,
		Repo:     redactURL(rawURL),
		Revision: revision,
		Err:      err,
		secrets:  secretsOf(rawURL, creds),
	}
}
