package hook

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func annotated(ann map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("batch/v1")
	obj.SetKind("Job")
	obj.SetName("migrate")
	obj.SetAnnotations(ann)
	return obj
}

func TestTypes(t *testing.T) {
	tests := map[string]struct {
		ann      map[string]string
		wantHook bool
		want     []Type
	}{
		"an object without hook annotations is no hook": {
			ann: map[string]string{"argocd.argoproj.io/sync-wave": "1"},
		},
		"Argo CD's types are read as written, blanks dropped": {
			ann: map[string]string{AnnotationHook: "PreSync, PostSync,"}, wantHook: true, want: []Type{PreSync, PostSync},
		},
		"Argo CD's Skip is a hook of type Skip": {
			ann: map[string]string{AnnotationHook: "Skip"}, wantHook: true, want: []Type{Skip},
		},
		"an empty Argo CD annotation is a hook of no type": {
			ann: map[string]string{AnnotationHook: ""}, wantHook: true,
		},
		"Helm's install and upgrade hooks run before and after the sync": {
			ann: map[string]string{AnnotationHelmHook: "pre-install,pre-upgrade,post-upgrade"}, wantHook: true, want: []Type{PreSync, PreSync, PostSync},
		},
		"Helm's crd-install runs before the sync": {
			ann: map[string]string{AnnotationHelmHook: "crd-install"}, wantHook: true, want: []Type{PreSync},
		},
		"a Helm test hook is skipped": {
			ann: map[string]string{AnnotationHelmHook: "test"}, wantHook: true, want: []Type{Skip},
		},
		"Argo CD's PostDelete is a hook of type PostDelete": {
			ann: map[string]string{AnnotationHook: "PostDelete"}, wantHook: true, want: []Type{PostDelete},
		},
		"Helm's post-delete runs after the app's deletion": {
			ann: map[string]string{AnnotationHelmHook: "post-delete"}, wantHook: true, want: []Type{PostDelete},
		},
		"Argo CD's annotation wins over Helm's": {
			ann: map[string]string{AnnotationHook: "Sync", AnnotationHelmHook: "pre-install"}, wantHook: true, want: []Type{Sync},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := annotated(tc.ann)
			if got := IsHook(obj); got != tc.wantHook {
				t.Errorf("IsHook = %v, want %v", got, tc.wantHook)
			}
			if got := Types(obj); !slices.Equal(got, tc.want) {
				t.Errorf("Types = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDeletePolicies(t *testing.T) {
	tests := map[string]struct {
		ann  map[string]string
		want []string
	}{
		"without a policy the previous run's hook is replaced": {
			want: []string{BeforeHookCreation},
		},
		"Argo CD's policies are read as written": {
			ann: map[string]string{AnnotationDeletePolicy: "HookSucceeded,HookFailed"}, want: []string{HookSucceeded, HookFailed},
		},
		"Helm's policies are translated, unknown ones dropped": {
			ann:  map[string]string{AnnotationHelmDeletePolicy: "hook-succeeded, before-hook-creation, sometimes"},
			want: []string{HookSucceeded, BeforeHookCreation},
		},
		"Argo CD's policy wins over Helm's": {
			ann:  map[string]string{AnnotationDeletePolicy: "HookFailed", AnnotationHelmDeletePolicy: "hook-succeeded"},
			want: []string{HookFailed},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := DeletePolicies(annotated(tc.ann)); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsHelmTest(t *testing.T) {
	tests := map[string]struct {
		ann  map[string]string
		want bool
	}{
		"a test hook":                        {ann: map[string]string{AnnotationHelmHook: "test"}, want: true},
		"Helm 2's test-success among others": {ann: map[string]string{AnnotationHelmHook: "pre-install, test-success"}, want: true},
		"an install hook":                    {ann: map[string]string{AnnotationHelmHook: "pre-install"}, want: false},
		"Argo CD's hook named test":          {ann: map[string]string{AnnotationHook: "test"}, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsHelmTest(annotated(tc.ann)); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
