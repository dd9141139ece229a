package rolloutops

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/skiffcd/skiff/internal/opserr"
)

// The kinds of error an operation fails with, for errors.Is; the messages
// are the errors' own.
var (
	// ErrNotFound: the Rollout is not there.
	ErrNotFound = opserr.ErrNotFound
	// ErrInvalid: the request does not fit the Rollout (a container or a
	// revision it lacks, an image set on a workloadRef, a change the
	// Kubernetes API refuses).
	ErrInvalid = opserr.ErrInvalid
	// ErrConflict: the Rollout changed while the operation wrote it.
	ErrConflict = opserr.ErrConflict
)

// invalid is an ErrInvalid with the message of fmt.Errorf.
func invalid(format string, args ...any) error { return opserr.Invalid(format, args...) }

// classify gives an error of the Kubernetes API its kind.
func classify(err error) error { return opserr.Classify(err) }

// classifyPatch is classify for the answer to p: a JSON patch that tests
// values (set image tests each container's name) and is refused as invalid
// failed a test, so the Rollout changed since it was read.
func classifyPatch(p Patch, err error) error {
	if apierrors.IsInvalid(err) && strings.Contains(p.Data, `"op":"test"`) {
		return opserr.New(ErrConflict, err)
	}
	return classify(err)
}
