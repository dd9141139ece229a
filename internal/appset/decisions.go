package appset

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// ClusterDecisions reads what a clusterDecisionResource generator names:
// the data of its ConfigMap (configMapRef, in Skiff's namespace) and the
// resources of the kind that ConfigMap gives (DecisionResourceOf), chosen
// by the generator's name or labelSelector in Skiff's namespace.
type ClusterDecisions func(gen *v1alpha1.DuckTypeGenerator) (DecisionResources, error)

// DecisionResources is what ClusterDecisions read.
type DecisionResources struct {
	// ConfigMap is the ConfigMap's data: apiVersion, kind (the resource,
	// plural, as Argo CD reads it), matchKey and statusListKey.
	ConfigMap map[string]string
	// Resources are the listed resources, as unstructured objects.
	Resources []map[string]any
}

// DecisionResourceOf is the resource a clusterDecisionResource ConfigMap
// names: apiVersion group/version and kind, which Argo CD uses as the
// resource name (placementdecisions).
func DecisionResourceOf(configMap map[string]string) (schema.GroupVersionResource, error) {
	group, version, ok := strings.Cut(configMap["apiVersion"], "/")
	kind := configMap["kind"]
	if !ok || group == "" || version == "" || kind == "" {
		return schema.GroupVersionResource{}, fmt.Errorf("the ConfigMap needs apiVersion (group/version) and kind, not %q and %q", configMap["apiVersion"], kind)
	}
	return schema.GroupVersionResource{Group: group, Version: version, Resource: kind}, nil
}

// clusterDecisions gives one set per entry of the resources' status list
// (statusListKey, default "clusters") whose matchKey value names a known
// cluster: name and server of that cluster, the entry's own keys, values.
func (g *generator) clusterDecisions(d *v1alpha1.DuckTypeGenerator, outer Params) ([]Params, error) {
	if (d.Name == "") == emptySelector(d.LabelSelector) {
		return nil, errors.New("a clusterDecisionResource needs either name or labelSelector")
	}
	if g.in.ClusterDecisions == nil {
		return nil, errors.New("cluster decision resources are not available")
	}
	read, err := g.in.ClusterDecisions(d)
	if err != nil {
		return nil, err
	}
	if _, err := DecisionResourceOf(read.ConfigMap); err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", d.ConfigMapRef, err)
	}
	matchKey, listKey := read.ConfigMap["matchKey"], read.ConfigMap["statusListKey"]
	if matchKey == "" {
		return nil, fmt.Errorf("ConfigMap %s has no matchKey", d.ConfigMapRef)
	}
	if listKey == "" {
		listKey = "clusters"
	}
	if len(read.Resources) == 0 {
		return nil, errors.New("no cluster decision resource matches")
	}
	byName := map[string]string{}
	for _, c := range g.in.Clusters {
		byName[c.Name] = c.Server
	}
	var out []Params
	for _, res := range read.Resources {
		status, _ := res["status"].(map[string]any)
		list, _ := status[listKey].([]any)
		for _, e := range list {
			entry, ok := e.(map[string]any)
			if !ok {
				continue
			}
			name, _ := entry[matchKey].(string)
			server, known := byName[name]
			if !known {
				continue
			}
			p := Params{"name": name, "server": server}
			for k, v := range entry {
				if g.opts.GoTemplate {
					p[k] = v
				} else {
					p[k] = fmt.Sprintf("%v", v)
				}
			}
			if p, err = g.withValues(p, d.Values, outer); err != nil {
				return nil, fmt.Errorf("cluster %s: %w", name, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}
