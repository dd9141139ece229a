package syncengine

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func order(p *Plan) string {
	var parts []string
	for _, task := range p.Tasks {
		prefix := ""
		switch {
		case task.Prune:
			prefix = "prune "
		case task.PruneSkipped:
			prefix = "keep "
		case task.Hook:
			prefix = "hook "
		}
		parts = append(parts, prefix+string(task.Phase)+"/"+task.Key.Kind+"/"+task.Key.Name)
	}
	return strings.Join(parts, ", ")
}

func TestNewPlanOrdersPhasesWavesAndKinds(t *testing.T) {
	tests := map[string]struct {
		desired, live []string
		prune         bool
		allowEmpty    bool
		want          string
		wantErr       string
	}{
		"namespaces and CRDs come before what needs them": {
			desired: []string{
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}",
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}",
				"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}",
			},
			want: "Sync/Namespace/shop, Sync/ConfigMap/cfg, Sync/CustomResourceDefinition/widgets.example.com, Sync/Deployment/web",
		},
		"waves order before kinds and negative waves go first": {
			desired: []string{
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: late, annotations: {argocd.argoproj.io/sync-wave: '2'}}",
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: early, annotations: {argocd.argoproj.io/sync-wave: '-1'}}",
				"apiVersion: v1\nkind: Service\nmetadata: {name: middle}",
			},
			want: "Sync/Deployment/early, Sync/Service/middle, Sync/Namespace/late",
		},
		"hooks run in their phases and Skip hooks not at all": {
			desired: []string{
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, annotations: {argocd.argoproj.io/hook: PreSync}}",
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: smoke, annotations: {argocd.argoproj.io/hook: PostSync}}",
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: alert, annotations: {argocd.argoproj.io/hook: SyncFail}}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped, annotations: {argocd.argoproj.io/hook: Skip}}",
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}",
			},
			want: "hook PreSync/Job/migrate, Sync/Deployment/web, hook PostSync/Job/smoke, hook SyncFail/Job/alert",
		},
		"PostDelete hooks, Argo CD's and Helm's, are never run by a sync": {
			desired: []string{
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: cleanup, annotations: {argocd.argoproj.io/hook: PostDelete}}",
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: helm-cleanup, annotations: {helm.sh/hook: post-delete}}",
				"apiVersion: v1\nkind: Service\nmetadata: {name: web}",
			},
			want: "Sync/Service/web",
		},
		"Helm hooks map to Argo CD phases and test hooks are skipped": {
			desired: []string{
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: install, annotations: {helm.sh/hook: pre-install}}",
				"apiVersion: v1\nkind: Pod\nmetadata: {name: test, annotations: {helm.sh/hook: test}}",
				"apiVersion: v1\nkind: Service\nmetadata: {name: web}",
			},
			want: "hook PreSync/Job/install, Sync/Service/web",
		},
		"objects gone from git are pruned after applies, PruneLast at the end": {
			desired: []string{"apiVersion: v1\nkind: Service\nmetadata: {name: web}"},
			live: []string{
				"apiVersion: v1\nkind: Service\nmetadata: {name: web}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: last, annotations: {argocd.argoproj.io/sync-options: PruneLast=true}}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}",
			},
			prune: true,
			want:  "Sync/Service/web, prune Sync/ConfigMap/old, prune Sync/ConfigMap/last",
		},
		"Prune=false and pruning off keep objects and say so": {
			desired: []string{"apiVersion: v1\nkind: Service\nmetadata: {name: web}"},
			live: []string{
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, annotations: {argocd.argoproj.io/sync-options: Prune=false}}",
			},
			prune: true,
			want:  "Sync/Service/web, keep Sync/ConfigMap/precious",
		},
		"without prune nothing is deleted": {
			desired: []string{"apiVersion: v1\nkind: Service\nmetadata: {name: web}"},
			live:    []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}"},
			want:    "Sync/Service/web, keep Sync/ConfigMap/old",
		},
		"an empty desired state never prunes everything": {
			live:    []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}"},
			prune:   true,
			wantErr: "refusing to prune 1 live objects",
		},
		"an empty desired state prunes with allowEmpty": {
			live:       []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}"},
			prune:      true,
			allowEmpty: true,
			want:       "prune Sync/ConfigMap/old",
		},
		"a wave that is not a number is a clear error": {
			desired: []string{"apiVersion: v1\nkind: Service\nmetadata: {name: web, annotations: {argocd.argoproj.io/sync-wave: first}}"},
			wantErr: `sync wave "first" is not an integer`,
		},
		"an unknown sync option is a clear error": {
			desired: []string{"apiVersion: v1\nkind: Service\nmetadata: {name: web, annotations: {argocd.argoproj.io/sync-options: Frobnicate=true}}"},
			wantErr: `unknown sync option "Frobnicate=true"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := PlanInput{Prune: tc.prune, AllowEmpty: tc.allowEmpty, Options: DefaultOptions()}
			for _, m := range tc.desired {
				in.Desired = append(in.Desired, obj(t, m))
			}
			for _, m := range tc.live {
				in.Live = append(in.Live, obj(t, m))
			}
			plan, err := NewPlan(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := order(plan); got != tc.want {
				t.Errorf("plan:\n got  %s\n want %s", got, tc.want)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	tests := map[string]struct {
		in      []string
		check   func(Options) bool
		wantErr bool
	}{
		"defaults validate and prune in the foreground": {
			in: nil, check: func(o Options) bool { return o.Validate && o.PropagationPolicy == "foreground" }},
		"Argo CD's common options are understood": {
			in: []string{"CreateNamespace=true", "ServerSideApply=true", "ApplyOutOfSyncOnly=true", "Validate=false", "PrunePropagationPolicy=background"},
			check: func(o Options) bool {
				return o.CreateNamespace && o.ApplyOutOfSyncOnly && !o.Validate && o.PropagationPolicy == "background"
			}},
		"accepted but unimplemented options are reported": {
			in: []string{"ClientSideApplyMigration=true"}, check: func(o Options) bool { return len(o.Unsupported) == 1 }},
		"unimplemented options turned off are not reported": {
			in: []string{"ClientSideApplyMigration=false", "Force=false"}, check: func(o Options) bool { return len(o.Unsupported) == 0 }},
		"RespectIgnoreDifferences and FailOnSharedResource are understood": {
			in: []string{"RespectIgnoreDifferences=true", "FailOnSharedResource=true"},
			check: func(o Options) bool {
				return o.RespectIgnoreDifferences && o.FailOnSharedResource && len(o.Unsupported) == 0
			}},
		"Prune=confirm and Delete=confirm ask for a confirmation, and neither disables": {
			in: []string{"Prune=confirm", "Delete=confirm"},
			check: func(o Options) bool {
				return o.PruneConfirm && o.DeleteConfirm && !o.PruneDisabled && !o.DeleteDisabled
			}},
		"a later Prune=true takes a confirmation back": {
			in: []string{"Prune=confirm", "Prune=true"}, check: func(o Options) bool { return !o.PruneConfirm && !o.PruneDisabled }},
		"a bad propagation policy is refused": {
			in: []string{"PrunePropagationPolicy=sideways"}, wantErr: true},
		"an option without a value is refused": {
			in: []string{"CreateNamespace"}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, err := ParseOptions(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o) {
				t.Errorf("unexpected options %+v", o)
			}
		})
	}
}
