package appset

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Params is one parameter set. Without goTemplate every value is a string
// and names are flat ("path.basename"); with goTemplate values nest.
type Params = map[string]any

// invalidNameChars are the characters Argo CD's SanitizeName replaces.
var invalidNameChars = regexp.MustCompile(`[^-a-z0-9.]`)

// sanitizeName makes s a DNS-1123 subdomain as Argo CD's *Normalized
// parameters do: lower case, other characters replaced by "-", at most 253
// characters, no leading or trailing "-" or ".".
func sanitizeName(s string) string {
	s = invalidNameChars.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 253 {
		s = s[:253]
	}
	return strings.Trim(s, "-.")
}

// flatten writes v's leaves into out under dotted names, arrays by index
// ("a.b", "list.0"), as Argo CD flattens file parameters and selector
// input; leaves are written with %v.
func flatten(prefix string, v any, out map[string]string) {
	key := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			flatten(key(k), e, out)
		}
	case map[string]string:
		for k, e := range v {
			out[key(k)] = e
		}
	case []any:
		for i, e := range v {
			flatten(key(strconv.Itoa(i)), e, out)
		}
	case []string:
		for i, e := range v {
			out[key(strconv.Itoa(i))] = e
		}
	default:
		out[prefix] = fmt.Sprintf("%v", v)
	}
}

// flat is the set flattened to strings.
func flat(p Params) map[string]string {
	out := map[string]string{}
	flatten("", map[string]any(p), out)
	return out
}

// combineFlat joins two flat sets of a matrix; a name both give with
// different values is an error, as in Argo CD.
func combineFlat(a, b Params) (Params, error) {
	out := maps.Clone(a)
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if cur, ok := out[k]; ok && !reflect.DeepEqual(cur, b[k]) {
			return nil, fmt.Errorf("both generators give parameter %q, with different values %v and %v", k, cur, b[k])
		}
		out[k] = b[k]
	}
	return out, nil
}

// mergeNested merges src into dst (deeply, for maps) and returns dst: with
// override src's non-empty values win, without it they only fill what dst
// lacks. It is mergo's Merge as Argo CD uses it on goTemplate sets.
func mergeNested(dst, src map[string]any, override bool) map[string]any {
	for k, sv := range src {
		dv, ok := dst[k]
		dm, dIsMap := dv.(map[string]any)
		sm, sIsMap := sv.(map[string]any)
		switch {
		case dIsMap && sIsMap:
			dst[k] = mergeNested(maps.Clone(dm), sm, override)
		case !ok || isEmpty(dv):
			dst[k] = sv
		case override && !isEmpty(sv):
			dst[k] = sv
		}
	}
	return dst
}

// isEmpty says whether v is a zero value (nil, "", false, 0, empty list or map).
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Map, reflect.Slice, reflect.String:
		return r.Len() == 0
	}
	return r.IsZero()
}

// lookup finds a dotted name in a nested set ("values.cluster"): the name
// itself first, then the path through maps.
func lookup(p Params, name string) (any, bool) {
	if v, ok := p[name]; ok {
		return v, true
	}
	var cur any = map[string]any(p)
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
