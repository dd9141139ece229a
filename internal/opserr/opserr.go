// Package opserr gives the errors of the operations packages (appops,
// rolloutops) their kind: what the faces answer them with (the API server's
// 404, 400 or 409; the CLI's message). The messages stay the errors' own.
package opserr

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The kinds, for errors.Is.
var (
	// ErrNotFound: the object the operation is on is not there.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request or the object is not one Skiff can act on.
	ErrInvalid = errors.New("invalid request")
	// ErrConflict: the object's state refuses the operation now, or it
	// changed while the operation wrote it.
	ErrConflict = errors.New("conflict")
)

// Error is Err, with its message, of Kind (one of the Err values).
type Error struct {
	Kind, Err error
}

func (e *Error) Error() string   { return e.Err.Error() }
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// New returns err of kind.
func New(kind, err error) error { return &Error{Kind: kind, Err: err} }

// Invalid is an ErrInvalid with the message of fmt.Errorf.
func Invalid(format string, args ...any) error {
	return New(ErrInvalid, fmt.Errorf(format, args...))
}

// Classify gives an error of the Kubernetes API (wrapped or not) its kind;
// others are returned as they are.
func Classify(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return New(ErrNotFound, err)
	case apierrors.IsConflict(err):
		return New(ErrConflict, err)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return New(ErrInvalid, err)
	}
	return err
}
