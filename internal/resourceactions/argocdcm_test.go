package resourceactions

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/internal/argocdcm"
)

func TestArgoCDScripts(t *testing.T) {
	settings, errs := argocdcm.Parse(map[string]string{
		"resource.customizations.actions.apps_Deployment": "mergeBuiltinActions: true\ndiscovery.lua: |\n  return {touch = {}}\n" +
			"definitions:\n- name: touch\n  action.lua: |\n    return obj\n",
		"resource.customizations.useOpenLibs.apps_Deployment": "true",
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	scripts := ArgoCDScripts(func() *argocdcm.Settings { return settings })
	tests := map[string]struct {
		gk   schema.GroupKind
		want Scripts
		ok   bool
	}{
		"a kind argocd-cm customizes has its scripts, merge flag and libraries": {schema.GroupKind{Group: "apps", Kind: "Deployment"},
			Scripts{Discovery: "return {touch = {}}\n", Actions: map[string]string{"touch": "return obj\n"}, MergeBuiltin: true, OpenLibs: true}, true},
		"another kind has none": {schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, Scripts{}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := scripts(tc.gk)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("scripts %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
