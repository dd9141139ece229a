package rolloutops

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// PlanOf sends each operation to its patch builder with its arguments.
func TestPlanOf(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	atStep2 := func() *v1alpha1.Rollout {
		ro := canary()
		ro.Status.CurrentStepIndex = ptr.To[int32](2)
		ro.Status.CurrentPodHash, ro.Status.StableRS = "new", "old"
		return ro
	}
	old := canary().Spec.Template
	current := *old.DeepCopy()
	current.Spec.Containers[0].Image = "nginx:2"
	rss := func(t *testing.T) []appsv1.ReplicaSet {
		return []appsv1.ReplicaSet{replicaSet(t, current, "2"), replicaSet(t, old, "1")}
	}
	tests := map[string]struct {
		req     Request
		rss     bool // give the ReplicaSets of revisions 2 (current) and 1
		want    []Patch
		prefix  string // instead of want: the one JSON patch starts so
		skipped string
		wantErr string
	}{
		"promote moves a canary to its next step": {req: Request{Op: Promote},
			want: []Patch{statusPatch(`{"status":{"pauseConditions":null,"currentStepIndex":3}}`)}},
		"promote-full asks for a full promotion": {req: Request{Op: PromoteFull},
			want: []Patch{statusPatch(`{"status":{"promoteFull":true}}`)}},
		"abort sets status.abort":           {req: Request{Op: Abort}, want: []Patch{AbortPatch()}},
		"retry clears status.abort":         {req: Request{Op: Retry}, want: []Patch{RetryPatch()}},
		"pause sets spec.paused":            {req: Request{Op: Pause}, want: []Patch{PausePatch()}},
		"restart stamps the request's time": {req: Request{Op: Restart}, want: []Patch{specPatch(`{"spec":{"restartAt":"2026-01-02T02:04:05Z"}}`)}},
		"set-image tests and sets the named container": {req: Request{Op: SetImage, Images: []ContainerImage{{"side", "envoy:2"}}},
			want: []Patch{{Type: types.JSONPatchType, Data: `[{"op":"test","path":"/spec/template/spec/containers/1/name","value":"side"},{"op":"replace","path":"/spec/template/spec/containers/1/image","value":"envoy:2"}]`}}},
		"set-image of a container the rollout lacks is invalid": {req: Request{Op: SetImage, Images: []ContainerImage{{"db", "pg"}}},
			wantErr: `rollout demo has no container named "db"`},
		"undo puts back the revision before the newest": {req: Request{Op: Undo}, rss: true,
			prefix: `[{"op":"replace","path":"/spec/template","value":`},
		"undo to the current template sends nothing and says why": {req: Request{Op: Undo, ToRevision: 2}, rss: true,
			skipped: "skipped rollback (current template already matches revision 2)"},
		"undo without ReplicaSets is invalid":    {req: Request{Op: Undo}, wantErr: "rollout demo has no previous revision"},
		"an unknown operation is invalid":        {req: Request{Op: "explode"}, wantErr: `unknown rollout operation "explode"`},
		"an operation without a name is invalid": {wantErr: `unknown rollout operation ""`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ro := atStep2()
			ro.Spec.Template = *current.DeepCopy()
			var given []appsv1.ReplicaSet
			if tc.rss {
				given = rss(t)
			}
			plan, err := PlanOf(ro, given, tc.req, now)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrInvalid) {
					t.Fatalf("got %+v, %v; want the ErrInvalid %q", plan, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.Skipped != tc.skipped {
				t.Errorf("skipped %q, want %q", plan.Skipped, tc.skipped)
			}
			if tc.prefix != "" {
				if len(plan.Patches) != 1 || plan.Patches[0].Type != types.JSONPatchType || !strings.HasPrefix(plan.Patches[0].Data, tc.prefix) {
					t.Errorf("got %+v, want one JSON patch starting %s", plan.Patches, tc.prefix)
				}
				return
			}
			if len(plan.Patches) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", plan.Patches, tc.want)
			}
			for i := range tc.want {
				if plan.Patches[i] != tc.want[i] {
					t.Errorf("patch %d: got %+v, want %+v", i, plan.Patches[i], tc.want[i])
				}
			}
		})
	}
}
