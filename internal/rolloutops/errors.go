package rolloutops

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The kinds of error an operation fails with, for errors.Is; the messages
// are the errors' own.
var (
	// ErrNotFound: the Rollout is not there.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request does not fit the Rollout (a container or a
	// revision it lacks, an image set on a workloadRef, a change the
	// Kubernetes API refuses).
	ErrInvalid = errors.New("invalid request")
	// ErrConflict: the Rollout changed while the operation wrote it.
	ErrConflict = errors.New("conflict")
)

// kindError is err, with its message, of kind (one of the Err values).
type kindError struct {
	kind, err error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// invalid is an ErrInvalid with the message of fmt.Errorf.
func invalid(format string, args ...any) error {
	return &kindError{kind: ErrInvalid, err: fmt.Errorf(format, args...)}
}

// classify gives an error of the Kubernetes API (wrapped or not) its kind;
// others stay as they are.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return &kindError{kind: ErrNotFound, err: err}
	case apierrors.IsConflict(err):
		return &kindError{kind: ErrConflict, err: err}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return &kindError{kind: ErrInvalid, err: err}
	}
	return err
}

// classifyPatch is classify for the answer to p: a JSON patch that tests
// values (set image tests each container's name) and is refused as invalid
// failed a test, so the Rollout changed since it was read.
func classifyPatch(p Patch, err error) error {
	if apierrors.IsInvalid(err) && strings.Contains(p.Data, `"op":"test"`) {
		return &kindError{kind: ErrConflict, err: err}
	}
	return classify(err)
}
