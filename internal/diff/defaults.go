package diff

import (
	"encoding/json"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/skiffcd/skiff/internal/crds"
)

// The API server fills in the defaults of a custom resource's schema on
// every write and read. A custom resource's lists are compared whole (Skiff
// knows no merge keys for them), so a desired Rollout whose container port
// leaves out protocol would differ forever from the live one the API server
// stored with protocol TCP. The comparison fills in the same defaults in
// the object it predicts.

// Schemas gives the schema whose defaults the API server fills in for
// objects of a kind: for a custom resource, its CRD's, pruned to the
// fields that lead to a default (PruneToDefaults); nil when it has none.
type Schemas interface {
	DefaultsOf(gvk schema.GroupVersionKind) *apiextensionsv1.JSONSchemaProps
}

// embeddedDefaults holds, for each argoproj.io kind and version, the
// defaults of the CRD Skiff ships.
var embeddedDefaults = sync.OnceValue(func() map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps {
	defs, err := crds.Load()
	if err != nil {
		// The embedded CRDs are checked by their own tests; without them no
		// defaults are filled in.
		return nil
	}
	out := map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps{}
	for _, def := range defs {
		for gvk, s := range DefaultsOfCRD(def) {
			out[gvk] = s
		}
	}
	return out
})

// EmbeddedDefaults is the defaults of the CRD Skiff ships for gvk (the
// argoproj.io kinds), or nil.
func EmbeddedDefaults(gvk schema.GroupVersionKind) *apiextensionsv1.JSONSchemaProps {
	return embeddedDefaults()[gvk]
}

// DefaultsOfCRD is, for each version of def whose schema has a default,
// that schema pruned to its defaults.
func DefaultsOfCRD(def *apiextensionsv1.CustomResourceDefinition) map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps {
	out := map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps{}
	for _, v := range def.Spec.Versions {
		if v.Schema == nil {
			continue
		}
		if pruned := PruneToDefaults(v.Schema.OpenAPIV3Schema); pruned != nil {
			out[schema.GroupVersionKind{Group: def.Spec.Group, Version: v.Name, Kind: def.Spec.Names.Kind}] = pruned
		}
	}
	return out
}

// defaultsFor is the schema whose defaults the API server fills in for
// objects of gvk, or nil.
func defaultsFor(gvk schema.GroupVersionKind, opts Options) *apiextensionsv1.JSONSchemaProps {
	if opts.Schemas != nil {
		return opts.Schemas.DefaultsOf(gvk)
	}
	return EmbeddedDefaults(gvk)
}

// PruneToDefaults is s with only the fields that have a default or lead
// to one, and only what fillDefaults reads of them; nil when s has no
// default. A CRD's schema can be hundreds of kilobytes; its defaults are
// a few lines.
func PruneToDefaults(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s == nil {
		return nil
	}
	out := &apiextensionsv1.JSONSchemaProps{Default: s.Default}
	for name := range s.Properties {
		p := s.Properties[name]
		if pruned := PruneToDefaults(&p); pruned != nil {
			if out.Properties == nil {
				out.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
			}
			out.Properties[name] = *pruned
		}
	}
	if s.Items != nil {
		if pruned := PruneToDefaults(s.Items.Schema); pruned != nil {
			out.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: pruned}
		}
	}
	if s.AdditionalProperties != nil {
		if pruned := PruneToDefaults(s.AdditionalProperties.Schema); pruned != nil {
			out.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: pruned}
		}
	}
	if out.Default == nil && out.Properties == nil && out.Items == nil && out.AdditionalProperties == nil {
		return nil
	}
	return out
}

// fillDefaults sets, in v, every field the schema defaults and v leaves
// out, as the API server's structural defaulting does: in objects, in the
// items of lists and in the values of maps, at any depth.
func fillDefaults(v any, s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for name, p := range s.Properties {
			if _, set := t[name]; !set && p.Default != nil {
				var d any
				if err := json.Unmarshal(p.Default.Raw, &d); err == nil {
					t[name] = d
				}
			}
			if c, ok := t[name]; ok {
				fillDefaults(c, &p)
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			for name, c := range t {
				if _, known := s.Properties[name]; !known {
					fillDefaults(c, s.AdditionalProperties.Schema)
				}
			}
		}
	case []any:
		if s.Items == nil {
			return
		}
		for _, c := range t {
			fillDefaults(c, s.Items.Schema)
		}
	}
}

// withDefaults is the predicted object with its schema's defaults filled
// in, in the form Compare compares.
func withDefaults(predicted *typed.TypedValue, s *apiextensionsv1.JSONSchemaProps) (*typed.TypedValue, error) {
	u, err := fromTyped(predicted)
	if err != nil {
		return nil, err
	}
	fillDefaults(u.Object, s)
	u = normalize(u, false)
	return deducedConverter.ObjectToTyped(u, typed.AllowDuplicates)
}
