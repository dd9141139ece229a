package resourceactions

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/internal/lua"
)

// Scripts are one kind's custom actions in Lua, as argocd-cm's
// resource.customizations.actions.<group_kind> defines them.
type Scripts struct {
	// Discovery is discovery.lua: it returns the actions of obj.
	Discovery string
	// Actions are the definitions: action name → action.lua.
	Actions map[string]string
	// MergeBuiltin is mergeBuiltinActions: add to the built-in set
	// instead of replacing it.
	MergeBuiltin bool
	// OpenLibs is useOpenLibs: the scripts may use every Lua library.
	OpenLibs bool
}

// LuaActions is a Custom that runs Lua scripts with Argo CD's sandbox.
type LuaActions struct {
	// Scripts finds the scripts of a kind, read live (argocd-cm).
	Scripts func(gk schema.GroupKind) (Scripts, bool)
	// Runner runs them; nil means lua.Default (its time and memory limits).
	Runner *lua.Runner
}

var _ Custom = LuaActions{}

func (l LuaActions) runner() *lua.Runner {
	if l.Runner != nil {
		return l.Runner
	}
	return lua.Default
}

// Discover runs the kind's discovery.lua on obj.
func (l LuaActions) Discover(obj *unstructured.Unstructured) ([]Action, bool, bool, error) {
	s, ok := l.Scripts(GroupKind(obj))
	if !ok {
		return nil, false, false, nil
	}
	found, err := l.runner().ActionDiscovery(lua.Script{Code: s.Discovery, OpenLibs: s.OpenLibs}, obj)
	if err != nil {
		return nil, false, false, err
	}
	actions := make([]Action, len(found))
	for i, a := range found {
		actions[i] = Action{Name: a.Name, Disabled: a.Disabled, IconClass: a.IconClass, DisplayName: a.DisplayName}
		for _, p := range a.Params {
			actions[i].Params = append(actions[i].Params, Param{Name: p.Name, Value: p.Value, Type: p.Type, Default: p.Default})
		}
	}
	return actions, s.MergeBuiltin, true, nil
}

// Run runs the action.lua of name on obj with params (actionParams).
func (l LuaActions) Run(obj *unstructured.Unstructured, name string, params []Param) ([]Impacted, error) {
	s, ok := l.Scripts(GroupKind(obj))
	code, defined := s.Actions[name]
	if !ok || !defined {
		return nil, fmt.Errorf("discovery offers action %s but no definition of that name has an action.lua", name)
	}
	values := make(map[string]string, len(params))
	for _, p := range params {
		values[p.Name] = p.Value
	}
	found, err := l.runner().RunAction(lua.Script{Code: code, OpenLibs: s.OpenLibs}, obj, values)
	if err != nil {
		return nil, err
	}
	out := make([]Impacted, len(found))
	for i, im := range found {
		op := OpPatch
		if im.Operation == lua.Create {
			op = OpCreate
		}
		out[i] = Impacted{Operation: op, Object: im.Object}
	}
	return out, nil
}
