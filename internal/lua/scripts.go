package lua

import (
	"errors"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The health statuses a script may return, Argo CD's.
var healthStatuses = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true,
	"Suspended": true, "Missing": true, "Unknown": true,
}

// InvalidStatus is the message of the Unknown health a script that returns
// a status outside Argo CD's gets, Argo CD's.
const InvalidStatus = "Lua returned an invalid health status"

// Health runs a health script on obj (the global `obj`) and returns the
// status and message of the table it returns. A status that is not one of
// Argo CD's is Unknown with InvalidStatus, as in Argo CD.
func (r *Runner) Health(s Script, obj *unstructured.Unstructured) (status, message string, err error) {
	type result struct{ status, message string }
	res, err := run(r, s, setObj(obj), func(_ *lua.LState, ret lua.LValue) (result, error) {
		t, ok := ret.(*lua.LTable)
		if !ok {
			return result{}, fmt.Errorf("lua: a health script must return a table, not %s", ret.Type())
		}
		st, _ := t.RawGetString("status").(lua.LString)
		msg, _ := t.RawGetString("message").(lua.LString)
		if !healthStatuses[string(st)] {
			return result{"Unknown", InvalidStatus}, nil
		}
		return result{string(st), string(msg)}, nil
	})
	return res.status, res.message, err
}

// Action is one action a discovery script offers for an object.
type Action struct {
	Name        string
	Disabled    bool
	IconClass   string
	DisplayName string
	Params      []Param
}

// Param is a parameter an action takes, as discovery declares it.
type Param struct {
	Name    string
	Value   string
	Type    string
	Default string
}

// ActionDiscovery runs a discovery script on obj and returns the actions
// of the table it returns (action name to {disabled, iconClass,
// displayName, params}), sorted by name.
func (r *Runner) ActionDiscovery(s Script, obj *unstructured.Unstructured) ([]Action, error) {
	return run(r, s, setObj(obj), func(_ *lua.LState, ret lua.LValue) ([]Action, error) {
		t, ok := ret.(*lua.LTable)
		if !ok {
			return nil, fmt.Errorf("lua: a discovery script must return a table, not %s", ret.Type())
		}
		v, err := toGo(t, map[string]any{}, 0)
		if err != nil {
			return nil, fmt.Errorf("lua: discovery result: %w", err)
		}
		byName, _ := v.(map[string]any)
		actions := make([]Action, 0, len(byName))
		for _, name := range sortedKeys(byName) {
			actions = append(actions, action(name, byName[name]))
		}
		return actions, nil
	})
}

// action reads one discovered action. Argo CD accepts any table (a list
// such as `{paused}` is an enabled action with nothing else), so do we.
func action(name string, v any) Action {
	a := Action{Name: name}
	m, _ := v.(map[string]any)
	a.Disabled, _ = m["disabled"].(bool)
	a.IconClass, _ = m["iconClass"].(string)
	a.DisplayName, _ = m["displayName"].(string)
	params, _ := m["params"].([]any)
	for _, p := range params {
		pm, _ := p.(map[string]any)
		param := Param{}
		param.Name, _ = pm["name"].(string)
		param.Value, _ = pm["value"].(string)
		param.Type, _ = pm["type"].(string)
		param.Default, _ = pm["default"].(string)
		a.Params = append(a.Params, param)
	}
	return a
}

// Operation is what to do with an object an action returns.
type Operation string

const (
	Patch  Operation = "patch"
	Create Operation = "create"
)

// Impacted is an object an action changed or made, and what to do with it.
type Impacted struct {
	Object    *unstructured.Unstructured
	Operation Operation
}

// RunAction runs an action script on obj with params (the global
// `actionParams`, name to value) and returns what it changed: the object
// itself for the classic form (`return obj`, a patch), or each
// {operation = "patch"|"create", resource = ...} of the list form.
func (r *Runner) RunAction(s Script, obj *unstructured.Unstructured, params map[string]string) ([]Impacted, error) {
	setup := func(L *lua.LState) {
		setObj(obj)(L)
		p := L.CreateTable(0, len(params))
		for k, v := range params {
			p.RawSetString(k, lua.LString(v))
		}
		L.SetGlobal("actionParams", p)
	}
	return run(r, s, setup, func(_ *lua.LState, ret lua.LValue) ([]Impacted, error) {
		t, ok := ret.(*lua.LTable)
		if !ok {
			return nil, fmt.Errorf("lua: an action script must return a table, not %s", ret.Type())
		}
		if t.Len() == 0 {
			changed, err := actionObject(t, obj.Object)
			if err != nil {
				return nil, err
			}
			return []Impacted{{Object: changed, Operation: Patch}}, nil
		}
		var out []Impacted
		for i := 1; i <= t.Len(); i++ {
			imp, err := impacted(t.RawGetInt(i), obj.Object)
			if err != nil {
				return nil, fmt.Errorf("lua: action result %d: %w", i, err)
			}
			out = append(out, imp)
		}
		return out, nil
	})
}

// impacted reads one {operation, resource} entry of the list form.
func impacted(v lua.LValue, original map[string]any) (Impacted, error) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return Impacted{}, fmt.Errorf("want a table {operation, resource}, not %s", v.Type())
	}
	op := Operation(lua.LVAsString(t.RawGetString("operation")))
	var like map[string]any
	switch op {
	case Patch:
		like = original
	case Create:
	default:
		return Impacted{}, fmt.Errorf("unsupported operation %q: want patch or create", op)
	}
	res, ok := t.RawGetString("resource").(*lua.LTable)
	if !ok {
		return Impacted{}, errors.New("resource is not a table")
	}
	obj, err := actionObject(res, like)
	if err != nil {
		return Impacted{}, err
	}
	return Impacted{Object: obj, Operation: op}, nil
}

// actionObject turns a returned object back into an unstructured one.
func actionObject(t *lua.LTable, like map[string]any) (*unstructured.Unstructured, error) {
	v, err := toGo(t, like, 0)
	if err != nil {
		return nil, fmt.Errorf("lua: action result: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("lua: an action must return an object")
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// setObj makes obj the script's global `obj`.
func setObj(obj *unstructured.Unstructured) func(*lua.LState) {
	return func(L *lua.LState) {
		var content map[string]any
		if obj != nil {
			content = obj.Object
		}
		L.SetGlobal("obj", toLua(L, content))
	}
}

// Health runs a health script with the Default runner.
func Health(s Script, obj *unstructured.Unstructured) (status, message string, err error) {
	return Default.Health(s, obj)
}

// ActionDiscovery runs a discovery script with the Default runner.
func ActionDiscovery(s Script, obj *unstructured.Unstructured) ([]Action, error) {
	return Default.ActionDiscovery(s, obj)
}

// RunAction runs an action script with the Default runner.
func RunAction(s Script, obj *unstructured.Unstructured, params map[string]string) ([]Impacted, error) {
	return Default.RunAction(s, obj, params)
}
