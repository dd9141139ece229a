package resourceactions

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/internal/argocdcm"
)

// ArgoCDScripts finds a kind's custom action scripts in the argocd-cm
// settings current returns (resource.customizations.actions.<group_kind>
// and useOpenLibs), read on every call so that a change applies at once.
func ArgoCDScripts(current func() *argocdcm.Settings) func(schema.GroupKind) (Scripts, bool) {
	return func(gk schema.GroupKind) (Scripts, bool) {
		st := current()
		if st == nil {
			return Scripts{}, false
		}
		a, ok := st.Resource.CustomActions(gk)
		if !ok {
			return Scripts{}, false
		}
		defs := make(map[string]string, len(a.Definitions))
		for _, d := range a.Definitions {
			defs[d.Name] = d.ActionLua
		}
		return Scripts{Discovery: a.DiscoveryLua, Actions: defs, MergeBuiltin: a.MergeBuiltinActions, OpenLibs: st.Resource.UseOpenLibs(gk)}, true
	}
}
