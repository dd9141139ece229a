package appops

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/skiffcd/skiff/internal/opserr"
)

// The kinds of error an operation fails with (opserr's), for errors.Is;
// the messages are the errors' own.
var (
	// ErrNotFound: the Application is not there.
	ErrNotFound = opserr.ErrNotFound
	// ErrInvalid: the request or the Application is not one Skiff can act
	// on (a spec the project refuses, a history entry that does not exist).
	ErrInvalid = opserr.ErrInvalid
	// ErrConflict: the Application's state refuses the operation now
	// (another operation runs, none runs) or it changed while written.
	ErrConflict = opserr.ErrConflict
)

// Errors callers tell apart within their kind.
var (
	// ErrOperationInProgress refuses a sync while another operation is set.
	ErrOperationInProgress = &opserr.Error{Kind: ErrConflict, Err: errors.New("another operation is already in progress")}
	// ErrNoRunningOperation is Terminate's answer when there is nothing to stop.
	ErrNoRunningOperation = &opserr.Error{Kind: ErrConflict, Err: errors.New("no running operation")}
	// ErrChanged refuses a write based on a version of the Application
	// that is no longer the latest: read it again and retry.
	ErrChanged = &opserr.Error{Kind: ErrConflict, Err: errors.New("the application changed meanwhile: try again")}
	// ErrAutomatedRollback refuses a rollback while automated sync is on:
	// it would sync the app back at once.
	ErrAutomatedRollback = &opserr.Error{Kind: ErrInvalid, Err: errors.New("rollback cannot be initiated when auto-sync is enabled; disable it first")}
)

// invalid is an ErrInvalid with the message of fmt.Errorf.
func invalid(format string, args ...any) error { return opserr.Invalid(format, args...) }

// readError is the error of reading the Application name: ErrNotFound
// when it does not exist.
func readError(name string, err error) error {
	if apierrors.IsNotFound(err) {
		return &opserr.Error{Kind: ErrNotFound, Err: fmt.Errorf("application %s not found", name)}
	}
	return fmt.Errorf("reading application %s: %w", name, err)
}

// writeError is the error of a write to the Application name conditional
// on the version read: ErrChanged when it changed since.
func writeError(what, name string, err error) error {
	if apierrors.IsConflict(err) {
		return ErrChanged
	}
	return fmt.Errorf("%s %s: %w", what, name, err)
}
