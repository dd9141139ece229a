package opserr

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}
	tests := map[string]struct {
		err  error
		kind error // nil: no kind
	}{
		"a missing object is not found":           {err: apierrors.NewNotFound(gr, "web"), kind: ErrNotFound},
		"a wrapped missing object is not found":   {err: fmt.Errorf("reading: %w", apierrors.NewNotFound(gr, "web")), kind: ErrNotFound},
		"a write on an old version is a conflict": {err: apierrors.NewConflict(gr, "web", errors.New("changed")), kind: ErrConflict},
		"a change the API refuses is invalid":     {err: apierrors.NewBadRequest("no"), kind: ErrInvalid},
		"any other error keeps no kind":           {err: errors.New("connection refused")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Classify(tc.err)
			for _, kind := range []error{ErrNotFound, ErrInvalid, ErrConflict} {
				if errors.Is(got, kind) != (kind == tc.kind) {
					t.Errorf("errors.Is(Classify(%v), %v) = %v", tc.err, kind, !(kind == tc.kind))
				}
			}
			if got.Error() != tc.err.Error() {
				t.Errorf("the message changed: %q, want %q", got, tc.err)
			}
		})
	}
}
