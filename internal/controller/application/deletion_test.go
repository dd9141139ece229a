package application

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/clustercache"
	"github.com/skiffcd/skiff/internal/syncengine"
)

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestCascadeDeletion(t *testing.T) {
	tests := map[string]struct {
		live            []string
		appOptions      []string
		approved        bool
		wantDoomed      []string
		wantUnconfirmed []string
		wantErr         string
	}{
		"everything the app tracks is deleted": {
			live:       []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", "apiVersion: v1\nkind: Service\nmetadata: {name: b}"},
			wantDoomed: []string{"a", "b"},
		},
		"Delete=false on the object and Helm's keep policy spare it": {
			live: []string{
				"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, annotations: {argocd.argoproj.io/sync-options: Delete=false}}",
				"apiVersion: v1\nkind: Secret\nmetadata: {name: kept, annotations: {helm.sh/resource-policy: keep}}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}",
			},
			wantDoomed: []string{"gone"},
		},
		"Delete=false of the app spares all but objects that say Delete=true": {
			live: []string{
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, annotations: {argocd.argoproj.io/sync-options: Delete=true}}",
			},
			appOptions: []string{"Delete=false"},
			wantDoomed: []string{"b"},
		},
		"Delete=confirm without approval holds the deletion and is named": {
			live: []string{
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, annotations: {argocd.argoproj.io/sync-options: Delete=confirm}}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}",
			},
			wantDoomed:      []string{"prod", "a"},
			wantUnconfirmed: []string{"v1/Namespace/prod"},
		},
		"Delete=confirm of the app holds every object": {
			live:            []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}"},
			appOptions:      []string{"Delete=confirm"},
			wantDoomed:      []string{"a", "b"},
			wantUnconfirmed: []string{"v1/ConfigMap/a", "v1/ConfigMap/b"},
		},
		"an approval lets Delete=confirm objects go": {
			live:       []string{"apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, annotations: {argocd.argoproj.io/sync-options: Delete=confirm}}"},
			approved:   true,
			wantDoomed: []string{"prod"},
		},
		"an unreadable sync option deletes nothing": {
			live: []string{
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, annotations: {argocd.argoproj.io/sync-options: Delete}}",
			},
			wantErr: `/ConfigMap:/b: sync option "Delete": want Name=value`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			doomed, unconfirmed, err := cascadeDeletion(decodeObjects(t, tc.live), tc.appOptions, tc.approved)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || doomed != nil {
					t.Fatalf("got %v, %v, want error %q and nothing deleted", names(doomed), err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(doomed); !slices.Equal(got, tc.wantDoomed) {
				t.Errorf("deleted %v, want %v", got, tc.wantDoomed)
			}
			if !slices.Equal(unconfirmed, tc.wantUnconfirmed) {
				t.Errorf("unconfirmed %v, want %v", unconfirmed, tc.wantUnconfirmed)
			}
		})
	}
}

func TestDeletionWaitMessage(t *testing.T) {
	tests := map[string]struct {
		unconfirmed []string
		err         error
		want        string
	}{
		"nothing to wait for":    {want: ""},
		"one object to confirm":  {unconfirmed: []string{"v1/Namespace/prod"}, want: "waiting for deletion confirmation of v1/Namespace/prod"},
		"three objects":          {unconfirmed: []string{"v1/A/a", "v1/B/b", "v1/C/c"}, want: "waiting for deletion confirmation of v1/A/a and 2 more resources"},
		"unreadable sync option": {err: errors.New("bad"), want: "cannot delete the app's resources: bad"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := deletionWaitMessage(tc.unconfirmed, tc.err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

const (
	postDeleteJob = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s, namespace: ns, annotations: {argocd.argoproj.io/hook: PostDelete, argocd.argoproj.io/hook-delete-policy: %s}}"
	jobDone       = "\nstatus: {conditions: [{type: Complete, status: 'True'}]}"
	jobFailed     = "\nstatus: {conditions: [{type: Failed, status: 'True', message: BackoffLimitExceeded}]}"
	jobRunning    = "\nstatus: {active: 1}"
)

// job is a PostDelete Job hook named name with a delete policy and status.
func job(name, policy, status string) string {
	return fmt.Sprintf(postDeleteJob, name, policy) + status
}

func TestPostDeleteProgress(t *testing.T) {
	tests := map[string]struct {
		hooks       []string
		live        []string
		wantCreate  []string
		wantRunning []string
		wantFailed  []string
	}{
		"hooks not created yet are created": {
			hooks:      []string{job("a", "HookSucceeded", ""), job("b", "HookSucceeded", "")},
			live:       []string{job("b", "HookSucceeded", jobRunning)},
			wantCreate: []string{"a"}, wantRunning: []string{"batch/v1/Job/b"},
		},
		"succeeded hooks are done": {
			hooks: []string{job("a", "HookSucceeded", "")},
			live:  []string{job("a", "HookSucceeded", jobDone)},
		},
		"a failed hook is named with its message": {
			hooks:      []string{job("a", "HookFailed", ""), job("b", "HookFailed", "")},
			live:       []string{job("a", "HookFailed", jobFailed), job("b", "HookFailed", jobDone)},
			wantFailed: []string{"batch/v1/Job/a: BackoffLimitExceeded"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := map[clustercache.ResourceKey]*unstructured.Unstructured{}
			for _, obj := range decodeObjects(t, tc.live) {
				live[clustercache.KeyOf(obj)] = obj
			}
			got := postDeleteProgress(decodeObjects(t, tc.hooks), live)
			if !slices.Equal(names(got.create), tc.wantCreate) || !slices.Equal(got.running, tc.wantRunning) || !slices.Equal(got.failed, tc.wantFailed) {
				t.Errorf("got create %v running %v failed %v, want %v %v %v",
					names(got.create), got.running, got.failed, tc.wantCreate, tc.wantRunning, tc.wantFailed)
			}
		})
	}
}

func TestHooksToClean(t *testing.T) {
	tests := map[string]struct {
		hooks []string
		want  []string
	}{
		"all succeeded: HookSucceeded ones go": {
			hooks: []string{job("a", "HookSucceeded", jobDone), job("b", "HookFailed", jobDone), job("c", "BeforeHookCreation", jobDone)},
			want:  []string{"a"},
		},
		"one failed: HookFailed ones go, a succeeded one among them too": {
			hooks: []string{job("a", "HookSucceeded", jobDone), job("b", "HookFailed", jobFailed), job("c", "HookFailed", jobDone)},
			want:  []string{"b", "c"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := names(hooksToClean(decodeObjects(t, tc.hooks))); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPostDeleteFinalizers(t *testing.T) {
	const pd, cleanup = v1alpha1.FinalizerPostDelete, v1alpha1.FinalizerPostDeleteCleanup
	tests := map[string]struct {
		finalizers []string
		hooks      bool
		want       []string
	}{
		"an app with PostDelete hooks gets both, after its own": {
			finalizers: []string{v1alpha1.FinalizerResources}, hooks: true,
			want: []string{v1alpha1.FinalizerResources, pd, cleanup},
		},
		"an app that has them keeps them in their order": {
			finalizers: []string{cleanup, v1alpha1.FinalizerResources, pd}, hooks: true,
			want: []string{cleanup, v1alpha1.FinalizerResources, pd},
		},
		"an app whose hooks left git loses both, the others stay": {
			finalizers: []string{pd, v1alpha1.FinalizerResources, cleanup}, hooks: false,
			want: []string{v1alpha1.FinalizerResources},
		},
		"an app without hooks nor finalizers is left alone": {finalizers: nil, hooks: false, want: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := postDeleteFinalizers(tc.finalizers, tc.hooks); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRequiresConfirmation(t *testing.T) {
	tests := map[string]struct {
		appOptions []string
		obj        string
		prune      bool
		want       bool
	}{
		"an object without options":                {obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", prune: true, want: false},
		"Delete=confirm whether pruned or not":     {obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {argocd.argoproj.io/sync-options: Delete=confirm}}", want: true},
		"Prune=confirm of an object to prune":      {obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {argocd.argoproj.io/sync-options: Prune=confirm}}", prune: true, want: true},
		"Prune=confirm of an object git still has": {obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {argocd.argoproj.io/sync-options: Prune=confirm}}", want: false},
		"the app's Prune=confirm":                  {appOptions: []string{"Prune=confirm"}, obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", prune: true, want: true},
		"an unreadable option flags nothing":       {obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {argocd.argoproj.io/sync-options: Delete}}", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			base, err := syncengine.ParseOptions(tc.appOptions)
			if err != nil {
				t.Fatal(err)
			}
			if got := requiresConfirmation(base, decodeObjects(t, []string{tc.obj})[0], tc.prune); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHeldForApproval(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC))
	finished := metav1.NewTime(started.Add(time.Minute))
	waiting := syncengine.MessagePruneConfirmation + " of v1/ConfigMap/precious"
	tests := map[string]struct {
		state    *v1alpha1.OperationState
		approval string
		want     bool
	}{
		"a sync waiting for a confirmation that has not come": {
			state: &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, Message: waiting, StartedAt: started}, want: true,
		},
		"an approval older than the operation does not count": {
			state: &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, Message: waiting, StartedAt: started}, approval: "2026-12-07T13:00:00Z", want: true,
		},
		"an approval since lets it run": {
			state: &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, Message: waiting, StartedAt: started}, approval: "2026-12-07T14:00:05Z", want: false,
		},
		"a sync waiting for a hook runs on": {
			state: &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, Message: "waiting for completion of hook batch/Job/x", StartedAt: started}, want: false,
		},
		"a failed attempt waiting for its retry is the retry's": {
			state: &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, Message: waiting, StartedAt: started, FinishedAt: &finished}, want: false,
		},
		"no operation state": {want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Status: v1alpha1.ApplicationStatus{OperationState: tc.state}}
			if tc.approval != "" {
				app.Annotations = map[string]string{v1alpha1.AnnotationDeletionApproved: tc.approval}
			}
			if got := heldForApproval(app); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
