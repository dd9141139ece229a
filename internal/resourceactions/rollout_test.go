package resourceactions

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/rolloutops"
)

// A Rollout's actions send exactly the patches rolloutops plans for the
// kubectl plugin's operation: one implementation, two faces.
func TestRolloutActionsArePluginPatches(t *testing.T) {
	tests := map[string]struct {
		manifest, action string
		op               rolloutops.Op
	}{
		"abort is the plugin's abort":                 {updatingRollout, "abort", rolloutops.Abort},
		"retry is the plugin's retry":                 {abortedRollout, "retry", rolloutops.Retry},
		"resume is the plugin's promote of a pause":   {updatingRollout, "resume", rolloutops.Promote},
		"promote-full is the plugin's promote --full": {updatingRollout, "promote-full", rolloutops.PromoteFull},
		"pause is the plugin's pause":                 {updatingRollout, "pause", rolloutops.Pause},
		"restart is the plugin's restart":             {stableRollout, "restart", rolloutops.Restart},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object(t, tc.manifest)
			changes, err := Catalog{}.Plan(obj, tc.action, nil, now)
			if err != nil {
				t.Fatal(err)
			}
			ro := &v1alpha1.Rollout{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, ro); err != nil {
				t.Fatal(err)
			}
			plan, err := rolloutops.PlanOf(ro, nil, rolloutops.Request{Op: tc.op}, now)
			if err != nil {
				t.Fatal(err)
			}
			var got []rolloutops.Patch
			for _, c := range changes {
				got = append(got, *c.Patch)
			}
			if len(got) == 0 || !reflect.DeepEqual(got, plan.Patches) {
				t.Errorf("patches %+v, want the plugin's %+v", got, plan.Patches)
			}
		})
	}
}
