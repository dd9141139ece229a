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

// schemaDefaults holds, for each argoproj.io kind and version, its schema
// when the schema has a default anywhere.
var schemaDefaults = sync.OnceValue(func() map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps {
	defs, err := crds.Load()
	if err != nil {
		// The embedded CRDs are checked by their own tests; without them no
		// defaults are filled in.
		return nil
	}
	out := map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps{}
	for _, def := range defs {
		for _, v := range def.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil || !hasDefaults(v.Schema.OpenAPIV3Schema) {
				continue
			}
			gvk := schema.GroupVersionKind{Group: def.Spec.Group, Version: v.Name, Kind: def.Spec.Names.Kind}
			out[gvk] = v.Schema.OpenAPIV3Schema
		}
	}
	return out
})

// defaultsFor is the schema whose defaults the API server fills in for
// objects of gvk, or nil.
func defaultsFor(gvk schema.GroupVersionKind) *apiextensionsv1.JSONSchemaProps {
	return schemaDefaults()[gvk]
}

func hasDefaults(s *apiextensionsv1.JSONSchemaProps) bool {
	found := false
	walkSchema(s, func(p *apiextensionsv1.JSONSchemaProps) {
		if p.Default != nil {
			found = true
		}
	})
	return found
}

func walkSchema(s *apiextensionsv1.JSONSchemaProps, visit func(*apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	visit(s)
	for name := range s.Properties {
		p := s.Properties[name]
		walkSchema(&p, visit)
	}
	if s.Items != nil {
		walkSchema(s.Items.Schema, visit)
	}
	if s.AdditionalProperties != nil {
		walkSchema(s.AdditionalProperties.Schema, visit)
	}
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
