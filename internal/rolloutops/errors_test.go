package rolloutops

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestErrorKinds(t *testing.T) {
	rollouts := schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}
	refused := apierrors.NewInvalid(schema.GroupKind{Group: "argoproj.io", Kind: "Rollout"}, "demo",
		field.ErrorList{field.Invalid(field.NewPath("spec"), "x", "testing value failed")})
	tested := Patch{Data: `[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"web"}]`}
	merge := Patch{Data: `{"spec":{"paused":true}}`}
	tests := map[string]struct {
		err   error
		patch *Patch // nil: classify, else classifyPatch
		want  error  // nil: none of the kinds
	}{
		"a missing rollout is not found":                {err: apierrors.NewNotFound(rollouts, "demo"), want: ErrNotFound},
		"a write on an old resourceVersion conflicts":   {err: apierrors.NewConflict(rollouts, "demo", errors.New("changed")), want: ErrConflict},
		"a change the API refuses is invalid":           {err: refused, want: ErrInvalid},
		"a malformed patch is invalid":                  {err: apierrors.NewBadRequest("bad patch"), want: ErrInvalid},
		"a refused merge patch is invalid":              {err: refused, patch: &merge, want: ErrInvalid},
		"a refused patch that tests values conflicts":   {err: refused, patch: &tested, want: ErrConflict},
		"a missing rollout while patching is not found": {err: apierrors.NewNotFound(rollouts, "demo"), patch: &tested, want: ErrNotFound},
		"a forbidden read is none of them":              {err: apierrors.NewForbidden(rollouts, "demo", errors.New("no"))},
		"a timeout is none of them":                     {err: apierrors.NewTimeoutError("slow", 1)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wrapped := fmt.Errorf("reading rollout demo: %w", tc.err)
			got := classify(wrapped)
			if tc.patch != nil {
				got = classifyPatch(*tc.patch, wrapped)
			}
			if got.Error() != wrapped.Error() || !errors.Is(got, tc.err) {
				t.Errorf("got %q, want the message and the cause kept: %q", got, wrapped)
			}
			for _, kind := range []error{ErrNotFound, ErrInvalid, ErrConflict} {
				if errors.Is(got, kind) != (kind == tc.want) {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", got, kind, !(kind == tc.want), kind == tc.want)
				}
			}
		})
	}
	if classify(nil) != nil {
		t.Error("classify(nil) is not nil")
	}
}
