package lua

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	lua "github.com/yuin/gopher-lua"
)

// maxDepth bounds how deeply a returned table may nest, which also stops a
// table that contains itself.
const maxDepth = 100

// toLua turns a decoded JSON value (an unstructured object's content) into
// a Lua value.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case float32:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return lua.LNumber(f)
		}
		return lua.LString(v)
	case []any:
		t := L.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(L, item))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetString(k, toLua(L, item))
		}
		return t
	}
	return lua.LNil
}

// toGo turns a Lua value into a JSON value. like is the value the result
// stands for, when there is one (the object a script changed): Lua cannot
// tell an empty map from an empty list, so an empty table is a map where
// like holds a map there, and a list otherwise, as Argo CD does. Integral
// numbers become int64, as JSON decoding makes them.
func toGo(v lua.LValue, like any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("tables nest deeper than 100 levels (does a table contain itself?)")
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(v), nil
	case lua.LString:
		return string(v), nil
	case lua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %v has no JSON form", f)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		return tableToGo(v, like, depth)
	}
	return nil, fmt.Errorf("a %s has no JSON form", v.Type())
}

// tableToGo turns a table into a list when its keys are exactly 1..n, and
// into a map with string keys otherwise.
func tableToGo(t *lua.LTable, like any, depth int) (any, error) {
	n := t.Len()
	keys := 0
	var keyErr error
	t.ForEach(func(k, _ lua.LValue) {
		keys++
		if _, ok := k.(lua.LString); !ok && keyErr == nil {
			if _, num := k.(lua.LNumber); !num {
				keyErr = fmt.Errorf("a table key of type %s has no JSON form", k.Type())
			}
		}
	})
	if keyErr != nil {
		return nil, keyErr
	}
	if keys == 0 {
		if _, isMap := like.(map[string]any); isMap {
			return map[string]any{}, nil
		}
		return []any{}, nil
	}
	if n > 0 && keys == n {
		likeList, _ := like.([]any)
		out := make([]any, 0, n)
		for i := 1; i <= n; i++ {
			var l any
			if i <= len(likeList) {
				l = likeList[i-1]
			}
			item, err := toGo(t.RawGetInt(i), l, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, item)
		}
		return out, nil
	}
	likeMap, _ := like.(map[string]any)
	out := make(map[string]any, keys)
	var err error
	t.ForEach(func(k, val lua.LValue) {
		if err != nil {
			return
		}
		key := k.String()
		var item any
		item, err = toGo(val, likeMap[key], depth+1)
		out[key] = item
	})
	return out, err
}

// sortedKeys returns m's keys in order, for results that must not depend
// on map order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
